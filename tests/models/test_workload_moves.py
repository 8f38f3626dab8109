"""Which traffic to move (docs/decisions.md): the API's workloads ranked by what they would save per token on the
cluster, filled into the cluster's spare capacity at its busiest hour. Every expected figure is worked by hand.

July. Prices: Moonshot $0.30 cache hit / $3.00 cache miss / $15.00 output per 1M tokens. BIG (300,000 cache-miss
input + 30,000 output = 330,000 tokens) costs $0.90 + $0.45 = $1.35; SMALL (300,000 cache-hit input + 30,000
output) costs $0.09 + $0.45 = $0.54. The cluster c1: one reserved node all month; one accepted task of its own
(30,000 cache-miss input + 3,000 output = 33,000 tokens, 1 July 10:00, 60 s), reviewed for 0.1 minutes at $60 an
hour: V = $0.10 a task. Its busiest hour: 33,000 / 3,600 = 9.167 tokens a second; its best 5 minutes, 33,000 / 300
= 110 tokens a second (the capacity observed, used when a sweep says less). No invoices: U = 1.

Team t1's workloads on the API:
- coding: three BIG tasks at 10:00, 11:00 and 12:00 on 2 July, the third rejected: $4.05 over 2 accepted tasks,
  $2.025 a task; 990,000 tokens / 2 = 495,000 a task; busiest hour 330,000 tokens = 91.667 tokens a second.
- long_context (cache-heavy): two SMALL tasks at 10:00 on 3 July, both accepted: $0.54 a task, 330,000 tokens a
  task, every input token a cache hit; busiest hour 660,000 tokens = 183.333 tokens a second.
"""

import pytest
from decimal import Decimal

from tests.conftest import PRICE_MOONSHOT, request
from tests.models.test_break_even import BIG, SMALL, accepted, charge
from tests.models.test_hybrid_plan import sweep

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+marts.monthly_counterfactual", "+marts.monthly_workload_moves")


CLUSTER_TASK = {"cache_miss_input_tokens": 30_000, "output_tokens": 3_000}


def _load(ledger, tokens_per_second: str, cluster_tasks: int = 1) -> None:
    """``cluster_tasks`` > 1: that many cluster tasks, one every 5 minutes from 10:00 on 1 July."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("r", "reserved", "744")])
    ledger.load("load-tests", [sweep(tokens_per_second)])
    coding = [
        request(f"c{h}", f"tc{h}", f"2026-07-02T1{h}:00:00Z", team="t1", workload="coding", **BIG) for h in (0, 1, 2)
    ]
    cached = [
        request(f"l{i}", f"tl{i}", "2026-07-03T10:00:00Z", team="t1", workload="long_context", **SMALL) for i in (1, 2)
    ]
    own = [
        request(f"s{i}", f"ts{i}", f"2026-07-01T10:{5 * i:02d}:00Z", route="self_hosted", latency_ms=60_000,
                **CLUSTER_TASK)
        for i in range(cluster_tasks)
    ]  # fmt: skip
    ledger.load("requests", [*coding, *cached, *own])
    ledger.load(
        "outcomes",
        accepted("tc0", "tc1", "tl1", "tl2")
        + accepted(*[r["task_id"] for r in own], review_minutes="0.1")
        + [{"task_id": "tc2", "accepted": "false", "decided_at": "2026-07-20"}],
    )
    ledger.build(*READS, review_rate_per_hour_usd=Decimal("60"), min_tasks_for_factor=1)


def moves(ledger) -> dict[str, dict]:
    return {
        r["workload"]: r for r in ledger.rows("SELECT * FROM marts.monthly_workload_moves WHERE month = '2026-07-01'")
    }


@pytest.mark.slow
def test_the_cache_heavy_workload_moves_after_the_one_that_saves_more_per_token(ledger):
    # a sweep of 1,000 tokens a second on one node; spare: 1,000 - 9.167 = 990.833 tokens a second
    _load(ledger, "1000")
    m = moves(ledger)
    coding, cached = m["coding"], m["long_context"]
    assert (coding["team"], coding["accepted_tasks"], cached["accepted_tasks"]) == ("t1", 2, 2)
    # coding: $4.05 / 2 = $2.025 a task (its own rejected attempt included); saves $2.025 - $0.10 = $1.925 a task,
    # $3.85 a month; per million tokens $3.85 x 1,000,000 / 990,000 = 3.888888888888(8...) -> 3.888888888889
    assert coding["api_cost_per_accepted_task_usd"] == Decimal("2.025")
    assert coding["self_hosted_variable_cost_per_accepted_task_usd"] == Decimal("0.1")
    assert (coding["saving_per_task_usd"], coding["saving_usd"]) == (Decimal("1.925"), Decimal("3.85"))
    assert coding["saving_per_million_tokens_usd"] == Decimal("3.888888888889")
    assert (coding["tokens_per_accepted_task"], coding["cache_hit_share"]) == (495_000, 0)
    # long_context: $0.54 a task, saves $0.44 ($0.88 a month); per million tokens $0.88 x 1e6 / 660,000 = 1.333...
    assert (cached["api_cost_per_accepted_task_usd"], cached["saving_per_task_usd"]) == (
        Decimal("0.54"),
        Decimal("0.44"),
    )
    assert cached["saving_per_million_tokens_usd"] == Decimal("1.333333333333")
    assert (cached["tokens_per_accepted_task"], cached["cache_hit_share"]) == (330_000, 1)
    # coding moves first; both fit: 91.667 + 183.333 = 275 tokens a second of 990.833 spare
    assert (coding["move_rank"], cached["move_rank"]) == (1, 2)
    assert round(coding["spare_capacity_tokens_per_second"], 3) == 990.833
    assert (
        round(coding["peak_tokens_per_second"], 3) == 91.667 and round(cached["peak_tokens_per_second"], 3) == 183.333
    )
    assert round(cached["cumulative_peak_tokens_per_second"], 3) == 275
    assert coding["fits"] and cached["fits"]
    # the month's saving from the moves so far: $3.85, then $3.85 + $0.88 = $4.73
    assert (coding["cumulative_saving_usd"], cached["cumulative_saving_usd"]) == (Decimal("3.85"), Decimal("4.73"))
    assert cached["reason"] == "fits in the spare capacity at the busiest hour"
    # the counterfactual month's 'moves' row (this month): both workloads' 4 accepted tasks onto the cluster; the API
    # pays $4.05 + $1.08 less and the cluster's review adds 4 x $0.10: $4.73 less than the month as run
    (row,) = ledger.rows("SELECT * FROM marts.monthly_counterfactual WHERE scenario = 'moves'")
    assert (row["horizon"], row["versus_as_run_usd"], row["tasks_moved_to_api"]) == ("this_month", Decimal("-4.73"), -4)
    as_run = ledger.one(
        "SELECT * FROM marts.monthly_counterfactual WHERE scenario = 'as_run' AND horizon = 'this_month'"
    )
    assert as_run["api_cost_usd"] - row["api_cost_usd"] == Decimal("5.13")
    assert row["review_usd"] - as_run["review_usd"] == Decimal("0.40")


@pytest.mark.slow
def test_a_cluster_without_spare_capacity_at_its_busiest_hour_takes_nothing(ledger):
    # twelve cluster tasks, one every 5 minutes from 10:00: the hour holds 12 x 33,000 = 396,000 tokens, 110 a
    # second, and every 5 minutes hold 110 a second too. The sweep says 50, the log shows 110: capacity 110 a node,
    # all of it used at the busiest hour: spare 110 - 110 = 0
    _load(ledger, "50", cluster_tasks=12)
    m = moves(ledger)
    assert round(m["coding"]["spare_capacity_tokens_per_second"], 3) == 0
    assert not m["coding"]["fits"] and not m["long_context"]["fits"]
    assert m["coding"]["cumulative_saving_usd"] == 0 and m["long_context"]["cumulative_saving_usd"] == 0
    assert m["coding"]["reason"] == "no spare capacity at the busiest hour"


@pytest.mark.slow
def test_a_workload_too_big_for_the_spare_capacity_stops_the_filling(ledger):
    # a sweep of 150 tokens a second: spare 150 - 9.167 = 140.833. coding (91.667) fits; long_context needs 183.333
    # on its own: it does not fit
    _load(ledger, "150")
    m = moves(ledger)
    assert m["coding"]["fits"] and not m["long_context"]["fits"]
    assert m["long_context"]["cumulative_saving_usd"] == Decimal("3.85")  # coding's alone
    assert m["long_context"]["reason"] == (
        "does not fit: its busiest hour needs 183 tokens a second, the cluster has 141 spare"
    )


@pytest.mark.slow
def test_workloads_that_fit_one_by_one_but_not_together(ledger):
    # a sweep of 200: spare 190.833. long_context alone (183.333) would fit, but after coding the total is 275
    _load(ledger, "200")
    m = moves(ledger)
    assert m["coding"]["fits"] and not m["long_context"]["fits"]
    assert m["long_context"]["reason"].startswith("does not fit after the workloads before it")


@pytest.mark.slow
def test_a_workload_that_saves_nothing_is_never_ranked(ledger):
    # review at $600 an hour: V = 0.1 x $600 / 60 = $1.00 a task. long_context ($0.54) saves -$0.46: no rank, no move;
    # coding ($2.025) still saves $1.025 a task
    _load(ledger, "1000")
    ledger.build(*READS, review_rate_per_hour_usd=Decimal("600"), min_tasks_for_factor=1)
    m = moves(ledger)
    assert m["long_context"]["saving_per_task_usd"] == Decimal("-0.46")
    assert m["long_context"]["move_rank"] is None and not m["long_context"]["fits"]
    assert m["long_context"]["reason"].startswith("saves nothing")
    assert (m["coding"]["move_rank"], m["coding"]["saving_per_task_usd"]) == (1, Decimal("1.025"))
