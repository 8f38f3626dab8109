"""A month with no load test in force (docs/definitions.md): the cluster's first sweep holds when it was measured within
60 days after the month, said so; without one, the capacity is the request log's lower bound, said so.

c1 in July: 1 node reserved all month (744 node-hours); one accepted self-hosted request of 330,000 tokens.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.conftest import request
from tests.models.test_capacity_and_idle import accepted, reserved, sweep

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+marts.monthly_break_even",)


def _july(ledger, sweep_at: str) -> dict:
    ledger.load("cluster-charges", [reserved("jul", "7440", "744")])
    ledger.load("load-tests", [{**sweep("5000"), "measured_at": sweep_at}])
    ledger.load(
        "requests",
        [request("s1", "t1", "2026-07-10T10:00:00Z", route="self_hosted",
                 cache_miss_input_tokens=300_000, output_tokens=30_000)],
    )  # fmt: skip
    ledger.load("outcomes", accepted("t1"))
    ledger.build(*READS)
    return ledger.one("SELECT * FROM marts.monthly_break_even WHERE month = DATE '2026-07-01'")


@pytest.mark.slow
def test_a_sweep_measured_within_60_days_after_the_month_holds_and_says_so(ledger):
    # measured 20 August, 20 days after July's end: 5,000 tokens/s on 1 node (production's best 5-minute window,
    # 330,000 tokens / 300 s = 1,100 tokens/s, stays under it)
    be = _july(ledger, "2026-08-20T10:00:00Z")
    # capacity 5,000 tokens/s x 744 node-hours x 3,600 s = 13,392,000,000 tokens
    assert (be["capacity_per_node_tokens_per_second"], be["capacity_source"]) == (5000, "sweep")
    assert be["monthly_token_capacity"] == Decimal("13392000000")
    assert "capacity_measured_after" in be["verdict_caveats"]
    assert "capacity_lower_bound" not in be["verdict_caveats"]


@pytest.mark.slow
def test_a_sweep_too_long_after_leaves_the_logs_lower_bound_and_says_so(ledger):
    # measured 15 October: 76 days after July's end, past the 60
    be = _july(ledger, "2026-10-15T10:00:00Z")
    assert be["capacity_source"] == "observed"
    assert "capacity_lower_bound" in be["verdict_caveats"]
    assert "capacity_measured_after" not in be["verdict_caveats"]
