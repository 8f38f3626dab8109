"""Which traffic to move (docs/decisions.md): the API's workloads ranked by what they would save per token they would
occupy on the cluster, filled into the committed nodes' spare capacity hour by hour. Every expected figure is worked
by hand.

July. Prices: Moonshot $0.30 cache hit / $3.00 cache miss / $15.00 output per 1M tokens. BIG (300,000 cache-miss
input + 30,000 output = 330,000 tokens) costs $0.90 + $0.45 = $1.35; SMALL (300,000 cache-hit input + 30,000
output) costs $0.09 + $0.45 = $0.54. The cluster c1: one reserved node all month; one accepted task of its own
(30,000 cache-miss input + 3,000 output = 33,000 tokens, 1 July 10:00, 60 s), reviewed for 0.1 minutes at $60 an
hour: V = $0.10 a task. Its busiest hour: 33,000 / 3,600 = 9.167 tokens a second; its best 5 minutes, 33,000 / 300
= 110 tokens a second (the capacity observed, used when a sweep says less). Its attempts per accepted task: 33,000
tokens of every attempt / 33,000 of accepted ones = 1. No invoices: U = 1.

Team t1's workloads on the API:
- coding: three BIG tasks at 10:00, 11:00 and 12:00 on 2 July, the third rejected: $4.05 over 2 accepted tasks,
  $2.025 a task; 990,000 API tokens / 2 = 495,000 a task; on the cluster its 2 accepted attempts, 330,000 tokens
  each x 1, in the hours 10:00 and 11:00: 91.667 tokens a second each.
- long_context (cache-heavy): two SMALL tasks at 10:00 on 3 July, both accepted: $0.54 a task, 330,000 tokens a
  task, every input token a cache hit; on the cluster 660,000 tokens in one hour: 183.333 tokens a second.
"""

import pytest
from decimal import Decimal

from tests.conftest import PRICE_MOONSHOT, cli, request
from tests.models.test_break_even import BIG, SMALL, accepted, charge
from tests.models.test_hybrid_plan import sweep

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+marts.monthly_counterfactual", "+marts.monthly_workload_moves")


CLUSTER_TASK = {"cache_miss_input_tokens": 30_000, "output_tokens": 3_000}


def _node(ledger, tokens_per_second: str) -> None:
    """Moonshot's prices, one reserved node all July and its sweep of ``tokens_per_second``."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("r", "reserved", "744")])
    ledger.load("load-tests", [sweep(tokens_per_second)])


def _coding(hours: tuple[int, ...] = (0, 1, 2)) -> list[dict]:
    """Team t1's coding: a BIG task at each of these hours past 10:00 on 2 July."""
    return [request(f"c{h}", f"tc{h}", f"2026-07-02T1{h}:00:00Z", team="t1", workload="coding", **BIG) for h in hours]


def _load(
    ledger,
    tokens_per_second: str,
    cluster_tasks: int = 1,
    cluster_day: str = "01",
    long_context_at: str = "2026-07-03T10:00:00Z",
    cluster_accepts: bool = True,
) -> None:
    """``cluster_tasks`` > 1: that many cluster tasks, one every 5 minutes from 10:00 on ``cluster_day`` July;
    ``cluster_accepts`` False: the cluster's tasks are rejected."""
    _node(ledger, tokens_per_second)
    coding = _coding()
    cached = [request(f"l{i}", f"tl{i}", long_context_at, team="t1", workload="long_context", **SMALL) for i in (1, 2)]
    own = [
        request(f"s{i}", f"ts{i}", f"2026-07-{cluster_day}T10:{5 * i:02d}:00Z", route="self_hosted",
                latency_ms=60_000, **CLUSTER_TASK)
        for i in range(cluster_tasks)
    ]  # fmt: skip
    ledger.load("requests", [*coding, *cached, *own])
    own_tasks = [r["task_id"] for r in own]
    ledger.load(
        "outcomes",
        accepted("tc0", "tc1", "tl1", "tl2")
        + (accepted(*own_tasks, review_minutes="0.1") if cluster_accepts
           else [{"task_id": t, "accepted": "false", "decided_at": "2026-07-20", "review_minutes": "0.1"}
                 for t in own_tasks])
        + [{"task_id": "tc2", "accepted": "false", "decided_at": "2026-07-20"}],
    )  # fmt: skip
    ledger.build(*READS, review_rate_per_hour_usd=Decimal("60"), min_tasks_for_factor=1)


def moves(ledger) -> dict[str, dict]:
    return {
        r["workload"]: r for r in ledger.rows("SELECT * FROM marts.monthly_workload_moves WHERE month = '2026-07-01'")
    }


@pytest.mark.slow
def test_the_cache_heavy_workload_moves_after_the_one_that_saves_more_per_token(ledger):
    # a sweep of 1,000 tokens a second on one node: the API's hours on 2 and 3 July have the whole node spare
    _load(ledger, "1000")
    m = moves(ledger)
    coding, cached = m["coding"], m["long_context"]
    assert (coding["team"], coding["accepted_tasks"], cached["accepted_tasks"]) == ("t1", 2, 2)
    # coding: $4.05 / 2 = $2.025 a task (its own rejected attempt included); saves $2.025 - $0.10 = $1.925 a task,
    # $3.85 a month; on the cluster 2 x 330,000 x 1 = 660,000 tokens (the rejected attempt stays on the API): per
    # million $3.85 x 1,000,000 / 660,000 = 5.833333333333(3...) -> 5.833333333333
    assert coding["api_cost_per_accepted_task_usd"] == Decimal("2.025")
    assert coding["self_hosted_variable_cost_per_accepted_task_usd"] == Decimal("0.1")
    assert (coding["saving_per_task_usd"], coding["saving_usd"]) == (Decimal("1.925"), Decimal("3.85"))
    assert coding["saving_per_million_tokens_usd"] == Decimal("5.833333333333")
    assert (coding["tokens_per_accepted_task"], coding["cache_hit_share"]) == (495_000, 0)
    assert (coding["cluster_tokens_per_accepted_task"], coding["cluster_attempts_per_accepted_task"]) == (330_000, 1)
    assert coding["cluster_attempts_basis"] == "route"  # the cluster accepted no coding task of its own
    # long_context: $0.54 a task, saves $0.44 ($0.88 a month); per million $0.88 x 1e6 / 660,000 = 1.333...
    assert (cached["api_cost_per_accepted_task_usd"], cached["saving_per_task_usd"]) == (
        Decimal("0.54"),
        Decimal("0.44"),
    )
    assert cached["saving_per_million_tokens_usd"] == Decimal("1.333333333333")
    assert (cached["tokens_per_accepted_task"], cached["cache_hit_share"]) == (330_000, 1)
    # coding moves first; both fit: 91.667 tokens a second at 10:00 and 11:00 on 2 July, 183.333 at 10:00 on 3 July,
    # each of 1,000 spare (the cluster's own task ran on 1 July)
    assert (coding["move_rank"], cached["move_rank"]) == (1, 2)
    assert round(coding["spare_capacity_tokens_per_second"], 3) == 1000
    assert str(coding["tightest_hour"]) == "2026-07-02 10:00:00"  # both hours equal: the earlier
    assert (
        round(coding["peak_tokens_per_second"], 3) == 91.667 and round(cached["peak_tokens_per_second"], 3) == 183.333
    )
    assert round(cached["cumulative_peak_tokens_per_second"], 3) == 183.333  # coding has no work in its hour
    assert coding["fits"] and cached["fits"]
    # the month's saving from the moves so far: $3.85, then $3.85 + $0.88 = $4.73
    assert (coding["cumulative_saving_usd"], cached["cumulative_saving_usd"]) == (Decimal("3.85"), Decimal("4.73"))
    assert cached["reason"] == "fits in the spare capacity in every hour it has work"
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
def test_a_cluster_full_at_its_busiest_hour_still_takes_work_in_its_other_hours(ledger):
    # twelve cluster tasks, one every 5 minutes from 10:00 on 1 July: that hour holds 12 x 33,000 = 396,000 tokens,
    # 110 a second, and every 5 minutes hold 110 a second too. The sweep says 50, the log shows 110: capacity 110 a
    # node, all of it used at the busiest hour (spare 0 then). The API's work runs on 2 and 3 July, when the node
    # is idle: 110 spare. coding needs 91.667 a second in each of its hours: it fits, and saves $3.85; long_context
    # needs 183.333: it does not
    _load(ledger, "50", cluster_tasks=12)
    m = moves(ledger)
    assert m["coding"]["fits"] and round(m["coding"]["spare_capacity_tokens_per_second"], 3) == 110
    assert m["coding"]["cumulative_saving_usd"] == Decimal("3.85")
    assert not m["long_context"]["fits"]
    assert m["long_context"]["reason"] == (
        "does not fit: at 2026-07-03 10:00 UTC it needs 183 tokens a second, the cluster has 110 spare"
    )
    (row,) = ledger.rows("SELECT * FROM marts.monthly_counterfactual WHERE scenario = 'moves'")
    assert row["versus_as_run_usd"] == Decimal("-3.85")


@pytest.mark.slow
def test_a_cluster_full_in_the_hour_a_workload_runs_takes_none_of_it(ledger):
    # the same twelve cluster tasks, on 2 July from 10:00: coding's first hour. Spare then 110 - 110 = 0
    _load(ledger, "50", cluster_tasks=12, cluster_day="02")
    m = moves(ledger)
    assert not m["coding"]["fits"] and m["coding"]["cumulative_saving_usd"] == 0
    assert m["coding"]["reason"] == (
        "no spare capacity at 2026-07-02 10:00 UTC, an hour it has work: the committed nodes are full then"
    )
    # traffic moves in order: long_context (it would fit on 3 July's idle node alone? 183.333 > 110: no) waits
    assert not m["long_context"]["fits"] and m["long_context"]["cumulative_saving_usd"] == 0


@pytest.mark.slow
def test_a_workload_too_big_for_the_spare_capacity_stops_the_filling(ledger):
    # a sweep of 150 tokens a second: 150 spare in the API's hours. coding (91.667) fits; long_context needs 183.333
    _load(ledger, "150")
    m = moves(ledger)
    assert m["coding"]["fits"] and not m["long_context"]["fits"]
    assert m["long_context"]["cumulative_saving_usd"] == Decimal("3.85")  # coding's alone
    assert m["long_context"]["reason"] == (
        "does not fit: at 2026-07-03 10:00 UTC it needs 183 tokens a second, the cluster has 150 spare"
    )


@pytest.mark.slow
def test_workloads_in_different_hours_fit_together_where_in_one_hour_they_would_not(ledger):
    # a sweep of 200: 200 spare. long_context (183.333) and coding (91.667) together would be 275 in one hour; on
    # different days each fits alone, so both move
    _load(ledger, "200")
    m = moves(ledger)
    assert m["coding"]["fits"] and m["long_context"]["fits"]
    assert m["long_context"]["cumulative_saving_usd"] == Decimal("4.73")


@pytest.mark.slow
def test_workloads_that_fit_one_by_one_but_not_together_in_one_hour(ledger):
    # long_context's two tasks in coding's first hour, 10:00 on 2 July: 91.667 + 183.333 = 275 > 200 spare, though
    # long_context alone (183.333) would fit
    _load(ledger, "200", long_context_at="2026-07-02T10:00:00Z")
    m = moves(ledger)
    assert m["coding"]["fits"] and not m["long_context"]["fits"]
    assert round(m["long_context"]["cumulative_peak_tokens_per_second"], 3) == 275
    assert m["long_context"]["reason"] == (
        "does not fit after the workloads before it: together they would pass the spare capacity at 2026-07-02 10:00 "
        "UTC"
    )


@pytest.mark.slow
def test_the_api_failed_attempts_never_occupy_the_cluster(ledger):
    """A workload retried twice on the API: its three attempts in one hour are 990,000 tokens (275 a second), its
    accepted attempt 330,000 (91.667). On a node of 150 spare it fits: the cluster would run the accepted attempt
    times its own attempts per accepted task (1), never the API's failures."""
    _node(ledger, "150")
    agent = [
        request(f"a{i}", "ta", f"2026-07-02T10:{20 * i:02d}:00Z", attempt=i + 1, team="t1", workload="agent",
                status="ok" if i == 2 else "error", **BIG)
        for i in range(3)
    ]  # fmt: skip
    own = request("s0", "ts0", "2026-07-01T10:00:00Z", route="self_hosted", latency_ms=60_000, **CLUSTER_TASK)
    ledger.load("requests", [*agent, own])
    ledger.load("outcomes", accepted("ta", request_id="a2") + accepted("ts0", review_minutes="0.1"))
    ledger.build(*READS, review_rate_per_hour_usd=Decimal("60"), min_tasks_for_factor=1)
    (agent_row,) = moves(ledger).values()
    assert agent_row["fits"] and agent_row["cumulative_saving_usd"] == Decimal("3.95")
    # the API paid for all three: 3 x $1.35 = $4.05 a task; saves $4.05 - $0.10 = $3.95; per million cluster tokens
    # $3.95 x 1e6 / 330,000 = 11.969696969696(9...) -> 11.969696969697
    assert agent_row["api_cost_per_accepted_task_usd"] == Decimal("4.05")
    assert agent_row["tokens_per_accepted_task"] == 990_000
    assert agent_row["cluster_tokens_per_accepted_task"] == 330_000
    assert agent_row["saving_per_million_tokens_usd"] == Decimal("11.969696969697")
    assert round(agent_row["peak_tokens_per_second"], 3) == 91.667


@pytest.mark.slow
def test_the_cluster_own_retries_size_what_a_moved_task_takes(ledger):
    """The cluster's own task took two attempts of 33,000 tokens (the first failed): its attempts per accepted task
    are 66,000 / 33,000 = 2, so each moved task takes twice its accepted attempt: coding 2 x 91.667 = 183.333 a
    second in its hours, past a node of 150."""
    _node(ledger, "150")
    coding = _coding((0, 1))
    own = [
        request("s0", "ts0", "2026-07-01T10:00:00Z", route="self_hosted", latency_ms=60_000, status="error",
                **CLUSTER_TASK),
        request("s1", "ts0", "2026-07-01T10:05:00Z", attempt=2, route="self_hosted", latency_ms=60_000,
                **CLUSTER_TASK),
    ]  # fmt: skip
    ledger.load("requests", [*coding, *own])
    ledger.load("outcomes", accepted("tc0", "tc1") + accepted("ts0", request_id="s1", review_minutes="0.1"))
    ledger.build(*READS, review_rate_per_hour_usd=Decimal("60"), min_tasks_for_factor=1)
    (row,) = moves(ledger).values()
    assert (row["cluster_attempts_per_accepted_task"], row["cluster_attempts_basis"]) == (2, "route")
    assert row["cluster_tokens_per_accepted_task"] == 660_000
    assert not row["fits"]
    assert row["reason"] == (
        "does not fit: at 2026-07-02 10:00 UTC it needs 183 tokens a second, the cluster has 150 spare"
    )


@pytest.mark.slow
def test_a_cluster_that_accepted_nothing_takes_no_move(ledger):
    # the cluster's one task rejected: 33,000 tokens for no accepted one. What a moved task would take there is
    # unbounded: nothing moves, and the reason says why
    _load(ledger, "1000", cluster_accepts=False)
    m = moves(ledger)
    for row in m.values():
        assert row["move_rank"] is None and not row["fits"]
        assert row["cluster_attempts_per_accepted_task"] is None
        assert row["reason"] == (
            "the cluster accepted none of its work this month: what a task would take there (its attempts per "
            "accepted task) is unbounded"
        )
    # the counterfactual's moves row is the month as run, and says why
    (row,) = ledger.rows("SELECT * FROM marts.monthly_counterfactual WHERE scenario = 'moves'")
    assert (row["versus_as_run_usd"], row["tasks_moved_to_api"]) == (0, 0)
    assert row["unchanged_because"].startswith("no API workload both saves money and fits")


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


@pytest.mark.slow
def test_each_workload_moves_with_the_cluster_review_of_its_own_kind_of_work(ledger):
    """The cluster accepted two tasks of its own: a coding one reviewed for 0.1 minute ($0.10 at $60 an hour) and a
    long_context one reviewed for 0.5 minute ($0.50): the route's V is ($0.10 + $0.50) / 2 = $0.30. With
    min_tasks_for_factor 1 each API workload takes the review of its own kind on the cluster: coding (two BIG tasks,
    $1.35 each) saves $1.35 - $0.10 = $1.25 a task ($2.50), long_context $0.54 - $0.50 = $0.04 ($0.08); at the
    route's $0.30 they would be $1.05 and $0.24. The counterfactual's moves row: the API pays $2.70 + $1.08 less, the
    cluster's review adds 2 x $0.10 + 2 x $0.50 = $1.20: $2.58 less than the month as run ($2.50 + $0.08)."""
    _node(ledger, "1000")
    coding = _coding((0, 1))
    cached = [
        request(f"l{i}", f"tl{i}", "2026-07-03T10:00:00Z", team="t1", workload="long_context", **SMALL) for i in (1, 2)
    ]
    own = [
        request("s0", "ts0", "2026-07-01T10:00:00Z", route="self_hosted", latency_ms=60_000, team="t1",
                workload="coding", **CLUSTER_TASK),
        request("s1", "ts1", "2026-07-01T11:00:00Z", route="self_hosted", latency_ms=60_000, team="t1",
                workload="long_context", **CLUSTER_TASK),
    ]  # fmt: skip
    ledger.load("requests", [*coding, *cached, *own])
    ledger.load(
        "outcomes",
        accepted("tc0", "tc1", "tl1", "tl2")
        + accepted("ts0", review_minutes="0.1")
        + accepted("ts1", review_minutes="0.5"),
    )
    ledger.build(*READS, review_rate_per_hour_usd=Decimal("60"), min_tasks_for_factor=1)
    m = moves(ledger)
    assert m["coding"]["self_hosted_variable_cost_per_accepted_task_usd"] == Decimal("0.1")
    assert m["long_context"]["self_hosted_variable_cost_per_accepted_task_usd"] == Decimal("0.5")
    assert (m["coding"]["saving_usd"], m["long_context"]["saving_usd"]) == (Decimal("2.5"), Decimal("0.08"))
    assert m["coding"]["self_hosted_variable_cost_basis"] == "workload"
    assert m["coding"]["fits"] and m["long_context"]["fits"]
    (row,) = ledger.rows("SELECT * FROM marts.monthly_counterfactual WHERE scenario = 'moves'")
    assert row["versus_as_run_usd"] == Decimal("-2.58")


@pytest.mark.slow
def test_a_what_if_capacity_recomputes_the_moves_the_plan_advises(ledger):
    """The first test's July (a node of 1,000 tokens/s: coding and long_context both fit, 4 tasks, $4.73 saved).
    `costledger plan --capacity-tps 150` asks what a node of 150 would do: coding (91.667 a second) still fits,
    long_context (183.333) does not: 2 tasks, $3.85 -- and the plan's "What to do" says so, not the measured $4.73.
    A what-if node price reads no move: at --node-month-usd alone the moves are the measured ones."""
    _load(ledger, "1000")
    ledger.build(review_rate_per_hour_usd=Decimal("60"), min_tasks_for_factor=1)  # every model: `plan` reads all
    published = ledger.publish()
    measured = " ".join(cli("plan", "--month", "2026-07", "--db", published).output.split())
    assert "moving 4 accepted API tasks into the cluster's spare capacity saves $5" in measured
    res = cli("plan", "--month", "2026-07", "--capacity-tps", "150", "--db", published)
    assert res.exit_code == 0, res.output
    words = " ".join(res.output.split())
    assert "What to do, at the what-if values" in words
    assert "moving 2 accepted API tasks into the cluster's spare capacity saves $4" in words
    priced = " ".join(cli("plan", "--month", "2026-07", "--node-month-usd", "5000", "--db", published).output.split())
    assert "moving 4 accepted API tasks into the cluster's spare capacity saves $5" in priced
