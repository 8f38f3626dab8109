"""A cluster's busy time per day (int_cluster_busy_daily) against a Python oracle: the union of its self-hosted
request intervals, cut at midnight, overlaps counted once, in whole milliseconds per merged island."""

from __future__ import annotations

import pytest
import datetime as dt
import itertools
from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import request

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+intermediate.int_cluster_busy_daily",)

EPOCH = dt.datetime(1970, 1, 1)
START = dt.datetime(2026, 7, 10)
_ids = itertools.count()


def floor_ms(t: dt.datetime) -> int:
    """Epoch milliseconds, rounded down (DuckDB's date_diff('millisecond', a, b) is floor_ms(b) - floor_ms(a))."""
    return (t - EPOCH) // dt.timedelta(milliseconds=1)


def oracle(intervals: list[tuple[str, dt.datetime, dt.datetime]]) -> dict[tuple[str, dt.date], int]:
    """Per cluster and day: cut every interval at midnight, merge the pieces into islands (touching ones join), and
    add each island's whole milliseconds."""
    pieces: dict[tuple[str, dt.date], list[tuple[dt.datetime, dt.datetime]]] = defaultdict(list)
    for cluster, s, e in intervals:
        day = dt.datetime.combine(s.date(), dt.time())
        while day < e:
            nxt = day + dt.timedelta(days=1)
            pieces[(cluster, day.date())].append((max(s, day), min(e, nxt)))
            day = nxt
    busy = {}
    for key, ps in pieces.items():
        total, island = 0, None
        for s, e in sorted(ps):
            if island is None or s > island[1]:
                if island is not None:
                    total += floor_ms(island[1]) - floor_ms(island[0])
                island = [s, e]
            else:
                island[1] = max(island[1], e)
        total += floor_ms(island[1]) - floor_ms(island[0])
        busy[key] = total
    return busy


intervals_strategy = st.lists(
    st.tuples(
        st.sampled_from(["a", "b"]),
        # starts to the microsecond over three days, often on the same instants (ties, touching intervals)
        st.integers(min_value=0, max_value=3 * 86_400_000_000) | st.sampled_from([0, 3_600_000_000, 86_399_999_999]),
        # latencies from 1 ms to 30 h (across one or two midnights)
        st.integers(min_value=1, max_value=30 * 3_600_000) | st.sampled_from([1, 3_600_000, 86_400_000]),
    ),
    min_size=1,
    max_size=30,
)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(rows=intervals_strategy)
def test_busy_ms_per_cluster_and_day_equals_the_union_of_the_intervals(ledger, rows):
    run = next(_ids)
    intervals, requests = [], []
    for cluster, start_us, latency_ms in rows:
        s = START + dt.timedelta(microseconds=start_us)
        cluster_id = f"{cluster}{run}"  # clusters of their own in each example: earlier examples do not count
        rid = f"b{next(_ids)}"
        intervals.append((cluster_id, s, s + dt.timedelta(milliseconds=latency_ms)))
        stamp = s.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        requests.append(request(rid, rid, stamp, route="self_hosted", cluster_id=cluster_id, latency_ms=latency_ms))
    assert ledger.load("requests", requests).rows_loaded == len(requests)
    ledger.build(*READS)
    got = {
        (r["cluster_id"], r["day"]): r["busy_ms"]
        for r in ledger.rows(
            "SELECT cluster_id, day, busy_ms FROM intermediate.int_cluster_busy_daily WHERE cluster_id IN "
            "(SELECT unnest(?))",
            [sorted({c for c, _, _ in intervals})],
        )
    }
    assert got == oracle(intervals)


def test_nested_touching_and_crossing_midnight_by_hand(ledger):
    ledger.load(
        "requests",
        [
            # 22:00-23:00 and 22:30-22:40 (inside it): 60 min
            request("n1", "n1", "2026-07-02T22:00:00Z", route="self_hosted", latency_ms=3_600_000),
            request("n2", "n2", "2026-07-02T22:30:00Z", route="self_hosted", latency_ms=600_000),
            # 23:00-23:30 touches the first: one island 22:00-23:30 = 90 min = 5,400,000 ms
            request("n3", "n3", "2026-07-02T23:00:00Z", route="self_hosted", latency_ms=1_800_000),
            # 23:45:00.0005-00:15:00.0005: 14 min 59.9995 s on the 2nd -> whole ms 23:45:00.000 to 24:00:00.000
            # = 900,000 ms; on the 3rd, 00:00 to 00:15:00.0005 -> 900,000 ms
            request("n4", "n4", "2026-07-02T23:45:00.000500Z", route="self_hosted", latency_ms=1_800_000),
        ],
    )
    ledger.build(*READS)
    got = {
        str(r["day"]): r["busy_ms"]
        for r in ledger.rows("SELECT day, busy_ms FROM intermediate.int_cluster_busy_daily WHERE cluster_id = 'c1'")
    }
    # the 2nd: 5,400,000 + 900,000 = 6,300,000; the 3rd: 900,000
    assert got == {"2026-07-02": 6_300_000, "2026-07-03": 900_000}
