"""The hybrid plan (docs/decisions.md): the month at renewal with n = 0, 1, 2, ... nodes kept for the cluster's work,
each node priced by what it is (cheapest first), each hour's tokens above n x capacity sent to the API as the
cluster's accepted tasks at the break-even's own price C, beside the month as it was. n = 0 is the counterfactual
month's everything-on-the-API. Every expected figure is worked by hand in the comments.

Prices: Moonshot $0.30 hit / $3.00 miss / $15.00 output per 1M, so a request of 300,000 cache-miss input and 30,000
output tokens (330,000 tokens) costs $1.35. In every ledger below one API task is accepted at its one attempt of that
size: the API's waste factor W = 1, U = 1, so C (the API's price of an accepted task) is $1.35 plus the API's review
per accepted task.
"""

import datetime as dt
import json
from decimal import Decimal

import pytest

from tests.conftest import PRICE_MOONSHOT, cli, request
from tests.models.test_break_even import BIG, accepted, charge

# the models these tests read, each built with what it reads (a build of every model is the nightly's)
READS = ("+marts.monthly_break_even", "+marts.monthly_counterfactual", "+marts.monthly_hybrid_plan")


def sweep(tps: str) -> dict:
    """One load-test point on c1 (one node): ``tps`` tokens per second, well within any SLO."""
    return {
        "sweep_id": "S",
        "cluster_id": "c1",
        "concurrency": 8,
        "measured_at": "2026-06-20T00:00:00Z",
        "tokens_per_second": tps,
        "p95_latency_ms": "1000",
        "nodes": "1",
    }


def plan(ledger, m: str = "2026-07-01") -> list[dict]:
    """The plan's rows (cluster sizes) of a month."""
    return ledger.rows(
        "SELECT * FROM marts.monthly_hybrid_plan WHERE month = ? AND scenario = 'plan' ORDER BY nodes", [m]
    )


def today(ledger, m: str = "2026-07-01") -> dict:
    """The month as it was."""
    return ledger.one("SELECT * FROM marts.monthly_hybrid_plan WHERE month = ? AND scenario = 'today'", [m])


def cluster(rid: str, task: str, at: str, **kw) -> dict:
    """A self-hosted request of 330,000 tokens ($1.35 at the reference price)."""
    return request(rid, task, at, route="self_hosted", **{**BIG, **kw})


def api_task(ledger) -> list[dict]:
    """The API's one task, accepted at its one attempt on 1 July 09:00 ($1.35)."""
    return [request("a1", "t-api", "2026-07-01T09:00:00Z", **BIG)]


@pytest.mark.slow
def test_a_cluster_busy_but_mostly_failing_plans_no_cluster(ledger):
    """July: one reserved node all month, $10 (a charge without quantity is one node over its period). A sweep of
    100 tokens/s (360,000 tokens an hour). The cluster ran 8 attempts, each in its own hour: task k1 failed three
    times and was accepted at its fourth, task k2 ran four times and was rejected: 4 attempts a task, 1 task in 2
    accepted. The API: one task, accepted at its one attempt."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("r", "reserved", "10")])
    ledger.load("load-tests", [sweep("100")])
    reqs = [
        cluster(f"k1-{i}", "k1", f"2026-07-02T1{i}:00:00Z", attempt=i, status="ok" if i == 4 else "error")
        for i in (1, 2, 3, 4)
    ] + [cluster(f"k2-{i}", "k2", f"2026-07-03T1{i}:00:00Z", attempt=i) for i in (1, 2, 3, 4)]
    ledger.load("requests", api_task(ledger) + reqs)
    ledger.load(
        "outcomes", accepted("t-api", "k1") + [{"task_id": "k2", "accepted": "false", "decided_at": "2026-07-20"}]
    )
    ledger.build(*READS, min_tasks_for_factor=1)
    rows = plan(ledger)
    # the busiest hour (330,000 tokens) fits one node; one more for a spare: n = 0, 1, 2
    assert [r["nodes"] for r in rows] == [0, 1, 2]
    zero, one, two = rows
    # n = 0: the API's own run-rate $1.35 + the cluster's one accepted task at C = $1.35: $2.70. Its seven other
    # attempts are the cluster's waste and never reach the API (at every attempt's price it would be $12.15)
    assert (zero["api_run_rate_usd"], zero["api_overflow_cost_usd"], zero["tasks_moved_to_api"]) == (
        Decimal("1.35"), Decimal("1.35"), 1)  # fmt: skip
    assert zero["total_usd"] == Decimal("2.70") and zero["cluster_cost_usd"] == 0
    # n = 1: the reserved node $10 + the API's run-rate $1.35 = $11.35, nothing moved
    assert (one["total_usd"], one["tasks_moved_to_api"], one["reserved_nodes"]) == (Decimal("11.35"), 0, 1)
    # n = 2: a node beyond it, priced like the committed one (no on-demand hours, no setting): $21.35
    assert (two["total_usd"], two["added_nodes"], two["node_cost_source"]) == (Decimal("21.35"), 1, "committed")
    assert [r["is_cheapest"] for r in rows] == [True, False, False]
    # the month as it was: $10 + $1.35; the verdict's saving C x 1 - F = $1.35 - $10 = -$8.65 = n = 0 less today
    assert today(ledger)["total_usd"] == Decimal("11.35")
    be = ledger.one("SELECT saving_usd FROM marts.monthly_break_even")
    assert be["saving_usd"] == Decimal("-8.65") == zero["total_usd"] - today(ledger)["total_usd"]


@pytest.mark.slow
def test_review_follows_the_route_that_serves_the_task(ledger):
    """July: one reserved node ($10), 100 tokens/s. Review at $60 an hour: the cluster's one accepted task took 60
    minutes ($60), the API's one task 10 ($10)."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("r", "reserved", "10")])
    ledger.load("load-tests", [sweep("100")])
    ledger.load("requests", api_task(ledger) + [cluster("s1", "k1", "2026-07-02T10:00:00Z")])
    ledger.load("outcomes", accepted("t-api", review_minutes="10") + accepted("k1", review_minutes="60"))
    ledger.build(*READS, min_tasks_for_factor=1, review_rate_per_hour_usd=Decimal(60))
    zero, one, _ = plan(ledger)
    # C = $1.35 + the API's $10 review = $11.35. n = 0: run-rate $1.35 + C's token part $1.35 = $2.70; review: the
    # API's $10 + the API's $10 for the moved task = $20 (the cluster's $60 goes with the cluster): $22.70
    assert (zero["review_usd"], zero["total_usd"]) == (20, Decimal("22.70"))
    # n = 1: $10 + $1.35 + review $10 + $60 = $81.35, the month as it was
    assert (one["review_usd"], one["total_usd"]) == (70, Decimal("81.35")) and today(ledger)["total_usd"] == Decimal(
        "81.35"
    )
    assert zero["is_cheapest"]
    # the verdict: C x 1 - (F + V x 1) = $11.35 - $10 - $60 = -$58.65 = $22.70 - $81.35
    assert ledger.one("SELECT saving_usd FROM marts.monthly_break_even")["saving_usd"] == Decimal("-58.65")


@pytest.mark.slow
def test_nodes_are_priced_as_what_they_are_cheapest_first(ledger):
    """July: an owned server (1 node: $36,000 over 36 months, $1,000 a month), a reserved node all month ($744) and
    40 on-demand node-hours billed $2,400 on 20 July ($60 a node-hour; 2 nodes from 00:00 to 20:00, no request
    then). 100 tokens/s per node. The cluster: two accepted tasks of 330,000 tokens, both at 2 July 10:00 running the
    whole hour (660,000 tokens in the hour: two nodes' worth)."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "hardware",
        [{"asset_id": "srv", "cluster_id": "c1", "purchase_price": "36000", "in_service_date": "2026-01-01",
          "life_months": "36", "currency": "USD"}],
    )  # fmt: skip
    od = charge("od", "on_demand", "2400", "2026-07-20T00:00:00Z", "2026-07-20T20:00:00Z")
    ledger.load("cluster-charges", [charge("r", "reserved", "744"), {**od, "quantity": "40", "unit": "node_hour"}])
    ledger.load("load-tests", [sweep("100")])
    reqs = [cluster(f"s{i}", f"k{i}", "2026-07-02T10:00:00Z", latency_ms=3_600_000) for i in (1, 2)]
    ledger.load("requests", api_task(ledger) + reqs)
    ledger.load("outcomes", accepted("t-api", "k1", "k2"))
    ledger.build(*READS, min_tasks_for_factor=1)
    rows = plan(ledger)
    # the busiest hour needs ceil(660,000 / 360,000) = 2 nodes, one spare: n = 0 .. 3; today's nodes at that hour:
    # the owned and the reserved one
    assert [r["nodes"] for r in rows] == [0, 1, 2, 3] and today(ledger)["nodes"] == 2
    # the reserved node ($744) is cheaper than the owned one ($1,000): it is kept first; then the owned one; then a
    # node at the on-demand price for the whole month, $2,400 / 40 x 744 = $44,640
    assert [(r["reserved_nodes"], r["owned_nodes"], r["added_nodes"]) for r in rows] == [
        (0, 0, 0), (1, 0, 0), (1, 1, 0), (1, 1, 1)]  # fmt: skip
    assert [r["cluster_cost_usd"] for r in rows] == [0, 744, 1744, 46384]
    # n = 0: $1.35 + 2 x $1.35 = $4.05. n = 1: 300,000 of the cluster's 660,000 tokens overflow: 2 x 300,000 /
    # 660,000 = 0.909090909090.. tasks -> 0.909090909091, at $2.70 x 300,000 / 660,000 = $1.227272727272.. ->
    # $1.227272727273: $744 + $1.35 + $1.227272727273. n = 2: $1,744 + $1.35. n = 3: $46,384 + $1.35
    assert rows[1]["tasks_moved_to_api"] == Decimal("0.909090909091")
    assert [r["total_usd"] for r in rows] == [
        Decimal("4.05"), Decimal("746.577272727273"), Decimal("1745.35"), Decimal("46385.35")]  # fmt: skip
    # the on-demand hours are used by no plan below a whole on-demand month
    assert [r["on_demand_node_hours_released"] for r in rows] == [40, 40, 40, 0]
    # a renewal can start when the commitments end: the server's write-off runs 36 months from January 2026 (July is
    # its 7th: 36 - 7 + 1 = 30 more, to December 2028), the reservation's last month is July: from January 2029
    assert {r["renewal_from"] for r in rows} == {dt.date(2029, 1, 1)} == {today(ledger)["renewal_from"]}
    # this month the 40 on-demand node-hours enabled no task: cancelling them saves their $2,400
    cancel = ledger.one(
        "SELECT * FROM marts.monthly_counterfactual WHERE horizon = 'this_month' AND scenario = 'without_on_demand'"
    )
    assert (cancel["on_demand_node_hours_enabling_nothing"], cancel["versus_as_run_usd"]) == (40, -2400)


def _burst(ledger) -> list[dict]:
    """July: one reserved node all month for $0.50, and two on-demand nodes for the hour of 1 July 11:00 (2
    node-hours billed $0.002: $0.001 a node-hour, $0.744 for a whole month); 100 tokens/s per node (360,000 an hour).
    The cluster's four accepted tasks on 1 July: one of 330,000 tokens at 06:00, then a burst of three (990,000) at
    11:00, served by the three nodes then; each runs three hours, so that the request log's best 5-minute window
    (990,000 / 10,800 s = 91.7 tokens/s) stays under the load test's 100."""
    ledger.load("prices", [PRICE_MOONSHOT])
    od = charge("od", "on_demand", "0.002", "2026-07-01T11:00:00Z", "2026-07-01T12:00:00Z")
    ledger.load("cluster-charges", [charge("r", "reserved", "0.50"), {**od, "quantity": "2", "unit": "node_hour"}])
    ledger.load("load-tests", [sweep("100")])
    reqs = [cluster("s0", "u0", "2026-07-01T06:00:00Z", latency_ms=10_800_000)] + [
        cluster(f"s{i}", f"u{i}", "2026-07-01T11:00:00Z", latency_ms=10_800_000) for i in (1, 2, 3)
    ]
    ledger.load("requests", api_task(ledger) + reqs)
    ledger.load("outcomes", accepted("t-api", "u0", "u1", "u2", "u3"))
    ledger.build(min_tasks_for_factor=1)  # every model: a test runs `plan` on the published file
    return plan(ledger)


@pytest.mark.slow
def test_a_burst_hour_overflows_to_the_api_until_the_cluster_holds_it(ledger):
    rows = _burst(ledger)
    # the burst hour needs ceil(990,000 / 360,000) = 3 nodes, and one spare: n = 0 .. 4; today: 3 nodes then
    assert [r["nodes"] for r in rows] == [0, 1, 2, 3, 4] and today(ledger)["nodes"] == 3
    # the cluster's 4 accepted tasks at C's $1.35: $5.40 for all its 1,320,000 tokens
    # n = 1: 11:00 overflows 990,000 - 360,000 = 630,000: $5.40 x 630,000 / 1,320,000 = $2.577272727272.. ->
    #        $2.577272727273 (one rounding at 1e-12), 4 x 630,000 / 1,320,000 = 1.909090909091 tasks
    # n = 2: 270,000 overflow: $5.40 x 270,000 / 1,320,000 = $1.104545454545..; n = 3, 4: nothing
    assert [r["api_overflow_cost_usd"] for r in rows] == [
        Decimal("5.40"), Decimal("2.577272727273"), Decimal("1.104545454545"), 0, 0]  # fmt: skip
    assert rows[1]["tasks_moved_to_api"] == Decimal("1.909090909091")
    # the reserved node first ($0.50), then on-demand nodes for a whole month ($0.744 each); each total adds the API's
    # own $1.35: $6.75; $0.50 + $1.35 + $2.577272727273; $1.244 + $1.35 + $1.104545454545; $1.988 + $1.35;
    # $2.732 + $1.35
    totals = ["6.75", "4.427272727273", "3.698545454545", "3.338", "4.082"]
    assert [r["total_usd"] for r in rows] == [Decimal(t) for t in totals]
    assert [r["is_cheapest"] for r in rows] == [False, False, False, True, False]
    assert [r["is_current"] for r in rows] == [False, False, False, True, False]
    # keeping one node spare, n serve as n - 1: $6.75; $0.50 + $1.35 + $5.40 = $7.25; $1.244 + $1.35 + $2.577272727273;
    # $1.988 + $1.35 + $1.104545454545 = $4.442545454545; $2.732 + $1.35 = $4.082 (the cheapest N+1)
    spare = ["6.75", "7.25", "5.171272727273", "4.442545454545", "4.082"]
    assert [r["total_with_spare_usd"] for r in rows] == [Decimal(t) for t in spare]
    assert [r["is_cheapest_with_spare"] for r in rows] == [False, False, False, False, True]
    # the cluster's tokens served: n = 1: 330,000 + 360,000 of 1,320,000 = 0.522727...; n = 2: 1,050,000 / 1,320,000
    assert [r["self_hosted_token_share"] for r in rows[:3]] == [0, Decimal("0.522727"), Decimal("0.795455")]
    assert [r["overflow_hours"] for r in rows] == [2, 1, 1, 0, 0]
    assert rows[0]["peak_tokens_per_second"] == Decimal("275.000")  # 990,000 / 3,600
    assert rows[4]["node_cost_source"] == "on_demand" and rows[4]["node_month_usd"] == Decimal("0.744")


@pytest.mark.slow
def test_what_if_price_and_capacity_change_nothing_in_the_ledger(ledger):
    """The burst month at a what-if node price of $3 and 400 tokens/s per node (1,440,000 tokens an hour)."""
    built = _burst(ledger)
    published = ledger.publish()
    res = cli(
        "plan", "--db", published, "--month", "2026-07", "--node-month-usd", "3", "--capacity-tps", "400", "--json"
    )
    assert res.exit_code == 0, res.output
    rows = [r for r in json.loads(res.stdout) if r["scenario"] == "plan"]
    # one node now holds the burst (990,000 < 1,440,000), one more spare, and today's 3: n = 0 ($6.75), n = 1 ($3 +
    # $1.35: a what-if price prices every node, the committed one too), n = 2 ($6 + $1.35) and n = 3 ($9 + $1.35)
    assert [(r["nodes"], Decimal(r["total_usd"])) for r in rows] == [
        (0, Decimal("6.75")), (1, Decimal("4.35")), (2, Decimal("7.35")), (3, Decimal("10.35"))]  # fmt: skip
    assert rows[1]["is_cheapest"] and rows[1]["node_cost_source"] == rows[1]["capacity_source"] == "what_if"
    # the ledger's own plan is as built
    assert plan(ledger) == built
    bad = cli("plan", "--db", published, "--month", "2026-07", "--capacity-tps", "-5")
    assert bad.exit_code == 2 and "--capacity-tps" in bad.output


@pytest.mark.slow
def test_an_api_only_month_plans_no_cluster(ledger):
    """July, API only: two requests of 330,000 tokens at 10:00, no cluster. The plan sizes a cluster for the work a
    cluster did: none here, so n = 0 alone, whatever node price is set (which API work would fill a cluster is the
    workload moves' question)."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request(f"a{i}", f"t{i}", "2026-07-01T10:00:00Z", **BIG) for i in (1, 2)])
    ledger.load("outcomes", accepted("t1", "t2"))
    ledger.build(*READS, min_tasks_for_factor=1, planning_node_month_usd=Decimal(1))
    (row,) = plan(ledger)
    # n = 0: the API's run-rate $2.70; today's size is 0 nodes, the cheapest (the only) size
    assert (row["nodes"], row["total_usd"], row["is_cheapest"], row["is_current"]) == (0, Decimal("2.70"), True, True)
    assert (today(ledger)["nodes"], today(ledger)["total_usd"]) == (0, Decimal("2.70"))
    assert row["node_month_usd"] == 1 and row["node_cost_source"] == "setting"


@pytest.mark.slow
def test_a_month_without_cluster_work_is_not_offered_a_what_if(ledger):
    """July, API only (two requests of $1.35, both accepted), no cluster, no node price, no capacity. A what-if would
    size nothing (the plan sizes the cluster's own work): the plan says there is none, not that a capacity is
    missing."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request(f"a{i}", f"t{i}", "2026-07-01T10:00:00Z", **BIG) for i in (1, 2)])
    ledger.load("outcomes", accepted("t1", "t2"))
    ledger.build()  # every model: the command reads the published file
    words = " ".join(cli("plan", "--month", "2026-07", "--db", ledger.publish()).output.split())
    # 2 x $1.35 = $2.70, shown to the dollar
    assert (
        "Everything on the API would have cost $3 in 2026-07. No tokens were served on a cluster this month, so "
        "there is none to size one for" in words
    )
    assert "No cluster size can be costed" not in words and "--capacity-tps Y" not in words


@pytest.mark.slow
def test_a_month_without_a_sweep_uses_the_observed_capacity(ledger):
    """July: one reserved node all month ($744). No sweep. One self-hosted request of 330,000 tokens at 10:00 on 2
    July lasting 60 s: the request log shows 330,000 / 300 s = 1,100 tokens/s in its 5-minute window."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("r", "reserved", "744")])
    ledger.load("requests", [cluster("s1", "t1", "2026-07-02T10:00:00Z", latency_ms=60_000)])
    ledger.load("outcomes", accepted("t1"))
    ledger.build(*READS)
    rows = plan(ledger)
    assert rows[1]["capacity_source"] == "observed"
    assert rows[1]["capacity_per_node_tokens_per_second"] == 1100
    # no API task: C is the reference price of the accepted attempt ($1.35, W = 1). 330,000 tokens < 1,100 x 3,600:
    # one node serves it all, one more spare. n = 0: $1.35; n = 1: $744; n = 2: $1,488 (priced like the committed one)
    assert [(r["nodes"], r["total_usd"], r["is_cheapest"], r["is_current"]) for r in rows] == [
        (0, Decimal("1.35"), True, False),
        (1, 744, False, True),
        (2, 1488, False, False),
    ]


@pytest.mark.slow
def test_a_cluster_month_without_an_api_price_says_the_all_api_cost_is_unknown(ledger):
    """July: one reserved node ($945) and one accepted self-hosted task with no tokens; no price list at all, so no C
    and no capacity (no load test, no token served). The plan says what it cannot say, never "$n/a"."""
    ledger.load("cluster-charges", [charge("r", "reserved", "945")])
    ledger.load("requests", [request("s1", "t1", "2026-07-01T10:00:00Z", route="self_hosted")])
    ledger.load("outcomes", accepted("t1"))
    ledger.build()  # every model: the command reads the published file
    res = cli("plan", "--month", "2026-07", "--db", ledger.publish())
    assert res.exit_code == 0, res.output
    words = " ".join(res.output.split())
    assert "What everything on the API would have cost in 2026-07 is unknown: the month has no API price" in words
    assert "no load-test point within the latency target, and no self-hosted tokens served within it" in words
    assert "would have cost n/a" not in words and "no self-hosted requests" not in words


@pytest.mark.slow
def test_a_cluster_without_its_bills_has_no_size_and_no_decision(ledger):
    """July: two self-hosted tasks, each accepted at one attempt of 330,000 tokens in its own hour; no cluster charge,
    hardware or operating cost is loaded. The cluster looks free, and its size is unknown: no plan row is today's
    size, none of its nodes is added or released, and the decision to keep it waits for its bills."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [cluster("s1", "t1", "2026-07-02T10:00:00Z"), cluster("s2", "t2", "2026-07-03T10:00:00Z")],
    )
    ledger.load("outcomes", accepted("t1", "t2"))
    ledger.build()  # every model: the commands read the published file
    published = ledger.publish()
    # what-if: a node at $1 a month serving 1,000 tokens/s (3,600,000 tokens an hour > 330,000): n = 0 sends both
    # tasks to the API at C = $1.35 each (no API task: the reference price of the accepted attempt, W = 1), $2.70;
    # n = 1 serves both, $1; n = 2 (the spare), $2. The month as run: no cost loaded, no API work, $0.
    res = cli("plan", "--month", "2026-07", "--node-month-usd", "1", "--capacity-tps", "1000", "--db", published)
    assert res.exit_code == 0, res.output
    words = " ".join(res.output.split())
    assert "as run, a cluster without a billed node-hour" in words
    assert "today's size" not in words and "as run, no cluster" not in words
    assert (
        "2026-07 as it was (a cluster without a billed node-hour) cost $0; the cheapest plan, 1 node, costs $1 "
        "serving 100% of the cluster's tokens, $1 more." in words
    )
    # shutting it down: both tasks on the API, $2.70 against $0 as run, shown to the dollar
    assert (
        "Load the cluster's bills before deciding whether to keep it: none of its costs is loaded for this month, so "
        "it looks free, and sending its 2 accepted tasks to the API looks $3 dearer than running it." in words
    )
    assert "Keep the cluster" not in words
    report = " ".join(cli("report", "--format", "text", "--month", "2026-07", "--db", published).output.split())
    assert "Load the cluster's bills before deciding whether to keep it" in report and "Keep the cluster" not in report


@pytest.mark.slow
def test_a_reservation_repriced_inside_the_month_is_planned_at_its_new_rate(ledger):
    """July (744 hours): one reserved node, billed $36 for 1-16 July (360 hours, $0.10 an hour), then repriced to
    $7.68 for 16 July - 1 August (384 hours, $0.02 an hour): $43.68 for the month. At renewal a node costs what it
    costs from now on: $0.02 x 744 = $14.88, not the month's blend of $43.68. The cluster's 20 accepted tasks (BIG,
    330,000 tokens, each in its own hour on 2 July; a sweep of 100 tokens/s holds 360,000 an hour) cost $1.35 each on
    the API: $27. The API's own task: $1.35.
    n = 0: $1.35 + 20 x $1.35 = $28.35. n = 1: $14.88 + $1.35 = $16.23, the cheapest (at the blend it would be
    $43.68 + $1.35 = $45.03, and no cluster would look cheapest)."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "cluster-charges",
        [charge("r1", "reserved", "36", end="2026-07-16"), charge("r2", "reserved", "7.68", start="2026-07-16")],
    )
    ledger.load("load-tests", [sweep("100")])
    reqs = [cluster(f"k{i}", f"k{i}", f"2026-07-02T{i:02d}:00:00Z") for i in range(20)]
    ledger.load("requests", api_task(ledger) + reqs)
    ledger.load("outcomes", accepted("t-api", *[f"k{i}" for i in range(20)]))
    ledger.build(*READS, min_tasks_for_factor=1)
    rows = {r["nodes"]: r for r in plan(ledger)}
    assert rows[0]["total_usd"] == Decimal("28.35")
    assert (rows[1]["total_usd"], rows[1]["reserved_nodes"]) == (Decimal("16.23"), 1)
    assert rows[1]["is_cheapest"] and not rows[0]["is_cheapest"]
    # the month as it ran still pays what was billed: $43.68 + $1.35
    assert today(ledger)["total_usd"] == Decimal("45.03")
