"""How `pull prometheus` cuts a range into queries: every instant since, since + step, ... before until in exactly
one query, none with more instants than asked (a property over any range); and what the command says of a range or
a step it cannot read."""

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings, strategies as st

from pipeline.pull.prometheus import chunks, selector
from tests.conftest import cli

T0 = datetime(2026, 10, 1, tzinfo=timezone.utc)


@st.composite
def ranges(draw) -> tuple[int, int, int]:
    """A span, a step and the instants a query (up to 12,000), at most 10,000 queries (a range of a million queries
    says nothing more, and is slow to walk)."""
    span_s, step_s = draw(st.integers(1, 40 * 86400)), draw(st.integers(1, 7200))
    instants = -(-span_s // step_s)
    return span_s, step_s, draw(st.integers(min(12_000, max(1, -(-instants // 10_000))), 12_000))


@settings(max_examples=300, deadline=None)
@given(case=ranges())
def test_every_instant_is_in_exactly_one_query_of_at_most_per_instants(case):
    span_s, step_s, per = case
    until = T0 + timedelta(seconds=span_s)
    got = chunks(T0, until, step_s, per)
    # the oracle: the instants before ``until`` are T0 + k x step for every k with k x step < span, the last at
    # k = (span - 1) // step; the queries hold each exactly once and in order when each starts one step after the one
    # before ends, the first at T0 and the last ending at the last instant
    last_instant = T0 + timedelta(seconds=(span_s - 1) // step_s * step_s)
    expected_first = T0
    for first, last in got:
        assert first == expected_first
        n = int((last - first).total_seconds()) // step_s + 1
        assert (last - first).total_seconds() % step_s == 0 and 1 <= n <= per
        expected_first = last + timedelta(seconds=step_s)
    assert got and got[-1][1] == last_instant


def test_a_day_at_an_hour_in_queries_of_ten():
    # 00:00 .. 23:00 (24 instants before the next midnight): 10 + 10 + 4
    got = chunks(T0, T0 + timedelta(days=1), 3600, 10)
    assert [(a.hour, b.hour) for a, b in got] == [(0, 9), (10, 19), (20, 23)]


def test_the_selector_asks_for_the_metrics_by_name():
    assert selector(("vllm:prompt_tokens_total", "DCGM_FI_DEV_POWER_USAGE")) == (
        '{__name__=~"vllm:prompt_tokens_total|DCGM_FI_DEV_POWER_USAGE"}'
    )


def test_a_range_or_step_it_cannot_read_is_a_usage_error_naming_it(tmp_path):
    base = ("pull", "prometheus", "--url", "http://127.0.0.1:9", "--landing", tmp_path)
    for extra, said in (
        (("--month", "2026-13"), "--month '2026-13' is not YYYY-MM"),
        (("--since", "yesterday", "--until", "2026-10-02"), "--since 'yesterday' is not a date"),
        (("--since", "2026-10-01"), "give --since and --until"),
        (("--month", "2026-10", "--step", "0"), "--step '0' is not a positive duration"),
        (("--month", "2026-10", "--since", "2026-10-01"), "give --month, or --since and --until, not both"),
    ):
        res = cli(*base, *extra)
        assert res.exit_code == 2, (extra, res.output)
        assert said in " ".join(res.output.split()), (extra, res.output)
    res = cli(*base, "--since", "2026-10-02", "--until", "2026-10-01")
    assert res.exit_code == 1 and "is not after --since" in res.output


def test_a_window_is_cut_where_what_it_holds_is_over():
    from pipeline.pull.http import PullError
    from pipeline.pull.landing import settled

    now = datetime(2026, 12, 5, 19, 30, 15, 500_000, tzinfo=timezone.utc)
    month = (datetime(2026, 12, 1, tzinfo=timezone.utc), datetime(2027, 1, 1, tzinfo=timezone.utc))
    # metrics: up to now (to the second); a provider's daily buckets: up to the start of today
    assert settled(month, now, whole_days=False)[1] == datetime(2026, 12, 5, 19, 30, 15, tzinfo=timezone.utc)
    assert settled(month, now, whole_days=True)[1] == datetime(2026, 12, 5, tzinfo=timezone.utc)
    # a window that is over is left as it is
    october = (datetime(2026, 10, 1, tzinfo=timezone.utc), datetime(2026, 11, 1, tzinfo=timezone.utc))
    assert settled(october, now, whole_days=True) == october
    # nothing of today is a whole day yet
    today = (datetime(2026, 12, 5, tzinfo=timezone.utc), datetime(2026, 12, 6, tzinfo=timezone.utc))
    with pytest.raises(PullError, match="is over yet"):
        settled(today, now, whole_days=True)
