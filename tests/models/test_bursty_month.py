"""The first screen names a bursty month (docs/definitions.md): when a cluster's busiest hour carried more than
[planning] bursty_ratio (2.0) times its average hour's tokens, one line says so with what it costs.

c1 in July: 1 node reserved all month (744 node-hours). Requests of 330,000 tokens (300,000 input + 30,000 output).
"""

from __future__ import annotations

import datetime as dt

import pytest

from tests.conftest import request
from tests.models.test_capacity_and_idle import accepted, reserved


def _first_screen(ledger, peak: int, others: int) -> str:
    """``peak`` requests in the hour 1 July 00:00, one request in each of the next ``others`` hours."""
    from pipeline.serve.report import plain_report

    ledger.load("cluster-charges", [reserved("jul", "7440", "744")])
    starts = [dt.datetime(2026, 7, 1)] * peak + [
        dt.datetime(2026, 7, 1) + dt.timedelta(hours=h + 1) for h in range(others)
    ]
    rows = [
        request(f"s{i}", f"t{i}", f"{at:%Y-%m-%dT%H}:{i % 60:02d}:00Z", route="self_hosted",
                cache_miss_input_tokens=300_000, output_tokens=30_000)
        for i, at in enumerate(starts)
    ]  # fmt: skip
    ledger.load("requests", rows)
    ledger.load("outcomes", accepted(*(r["task_id"] for r in rows)))
    ledger.build()
    return " ".join(plain_report(ledger.con, "2026-07").split())


@pytest.mark.slow
def test_a_busiest_hour_five_times_the_average_is_said_on_the_first_screen(ledger):
    # 5 requests in the first hour and 739 one-per-hour after it: 744 x 330,000 = 245,520,000 tokens over 744
    # provisioned hours, 330,000 an hour on average; the busiest hour 5 x 330,000 = 1,650,000: 5.0 times the average,
    # and a cluster sized for it can use at most 1 / 5 = 20 % of its capacity
    text = _first_screen(ledger, peak=5, others=739)
    assert "The month was bursty: cluster c1's busiest hour carried 5.0 times its average hour's tokens" in text
    assert "it can use at most 20% of its capacity" in text


@pytest.mark.slow
def test_a_busiest_hour_at_twice_the_average_is_not_bursty(ledger):
    # one request in every hour, two in the first: 745 x 330,000 / 744 = 330,443.5 tokens an hour on average, the
    # busiest hour 660,000: 1.997 times the average, not above 2.0
    text = _first_screen(ledger, peak=2, others=743)
    assert "bursty" not in text
