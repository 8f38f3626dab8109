"""The counterfactual month (docs/definitions.md): every decision a scenario of one month, priced from the
break-even's inputs, so that no two recommendations can disagree.

Every expected figure is worked by hand in the comments. Prices: Moonshot $0.30 hit / $3.00 miss / $15.00 output per
1M; a task of 300,000 cache-miss input and 30,000 output tokens is $1.35 (330,000 tokens).
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import PRICE_MOONSHOT, Ledger, new_ledger, request
from tests.models.test_break_even import BIG, accepted
from tests.models.test_cost_classes_and_saving import _classes_month
from tests.models.test_capacity_and_idle import reserved, sweep

# the models these tests read, each built with what it reads (a build of every model is the nightly's)
READS = ("+marts.monthly_break_even", "+marts.monthly_counterfactual")


def rows(ledger) -> dict[tuple[str, str], dict]:
    return {
        (r["horizon"], r["scenario"]): r
        for r in ledger.rows(
            "SELECT * FROM marts.monthly_counterfactual WHERE month = DATE '2026-07-01' AND scenario <> 'nodes_n'"
        )
    }


def sizes(ledger) -> list[dict]:
    """The month's nodes_n rows (at renewal), by n."""
    return ledger.rows(
        "SELECT * FROM marts.monthly_counterfactual WHERE month = DATE '2026-07-01' AND scenario = 'nodes_n' "
        "ORDER BY nodes"
    )


@pytest.mark.slow
def test_each_scenario_of_a_month_with_every_cost_class(ledger):
    """July: reserved $300 (committed), on-demand $200 (avoidable, one node all month), opex $100 (operating). API:
    one accepted task ($1.35). Cluster: three accepted tasks; C = $1.35, V = $0."""
    be = _classes_month(ledger)
    got = rows(ledger)
    # as run: $300 + $200 + $100 + the API's $1.35 = $601.35, on both horizons
    assert got[("at_renewal", "as_run")]["total_usd"] == got[("this_month", "as_run")]["total_usd"] == Decimal("601.35")
    # at renewal, everything on the API: the API's $1.35 + 3 x $1.35 = $5.40; $5.40 - $601.35 = -$595.95, the saving
    assert got[("at_renewal", "all_api")]["total_usd"] == Decimal("5.40")
    assert got[("at_renewal", "all_api")]["versus_as_run_usd"] == be["saving_usd"] == Decimal("-595.95")
    # this month the reservation stays ($300) and the operating cost stops with the service: $305.40, -$295.95,
    # the shutdown question's answer: 3 x $1.35 - ($200 + $100)
    this_month = got[("this_month", "all_api")]
    assert (this_month["cluster_cost_usd"], this_month["operating_cost_usd"]) == (300, 0)
    assert (this_month["total_usd"], this_month["versus_as_run_usd"]) == (Decimal("305.40"), Decimal("-295.95"))
    # without the on-demand node: the reserved node serves every hour's 330,000 tokens, so its 744 node-hours enabled
    # nothing; the month costs $200 less
    cancel = got[("this_month", "without_on_demand")]
    assert (cancel["total_usd"], cancel["versus_as_run_usd"]) == (Decimal("401.35"), -200)
    assert cancel["on_demand_node_hours"] == cancel["on_demand_node_hours_enabling_nothing"] == 744
    assert cancel["tasks_moved_to_api"] == 0


@pytest.mark.slow
def test_on_demand_hours_are_worth_the_tasks_they_enabled(ledger):
    """July: a reserved node ($744) and an on-demand node ($744), 744 node-hours each; a sweep of 100 tokens/s per
    node (360,000 tokens a node-hour). The cluster: one task of 330,000 tokens on 5 July 10:00 and two on 10 July
    00:00, each running the whole hour; the API: one task. All accepted."""
    on_demand = {**reserved("od", "744", "744"), "kind": "on_demand"}
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [reserved("r", "744", "744"), on_demand])
    ledger.load("load-tests", [sweep("100")])
    ledger.load(
        "requests",
        [request("a1", "t1", "2026-07-01T10:00:00Z", **BIG)]
        + [
            request(f"s{i}", f"sh{i}", at, route="self_hosted", latency_ms=3_600_000, **BIG)
            for i, at in enumerate(("2026-07-05T10:00:00Z", "2026-07-10T00:00:00Z", "2026-07-10T00:00:00Z"))
        ],
    )
    ledger.load("outcomes", accepted("t1", "sh0", "sh1", "sh2"))
    ledger.build(*READS, min_tasks_for_factor=1)
    cancel = rows(ledger)[("this_month", "without_on_demand")]
    # 10 July 00:00 started 660,000 tokens; the reserved node serves 360,000: 300,000 go to the API, of the cluster's
    # 990,000 tokens for 3 accepted tasks: 3 x 300,000 / 990,000 = 0.909090909091 tasks, at C = $1.35:
    # $4.05 x 300,000 / 990,000 = $1.227272727273
    assert cancel["tasks_moved_to_api"] == Decimal("0.909090909091")
    assert cancel["api_cost_usd"] == Decimal("1.35") + Decimal("1.227272727273")
    # the month: $744 reserved + the API's $2.577272727273 = $746.577272727273, against $1,488 + $1.35 as run
    assert cancel["total_usd"] == Decimal("746.577272727273")
    assert cancel["versus_as_run_usd"] == Decimal("746.577272727273") - Decimal("1489.35")
    # of the 744 on-demand node-hours, the one in 10 July 00:00 enabled work; 743 enabled nothing
    assert (cancel["on_demand_node_hours"], cancel["on_demand_node_hours_enabling_nothing"]) == (744, 743)
    # judged hour by hour: the on-demand node costs $744 / 744 = $1 a node-hour; the hour of 10 July 00:00 enabled
    # 0.909090909091 tasks worth C - V = $1.35 each, $1.227272727273 >= $1: kept. The other 743 are cancelled, and
    # nothing goes to the API: $1,489.35 - $743 = $746.35, $0.227272727273 below cancelling them all
    keep = rows(ledger)[("this_month", "on_demand_worth_keeping")]
    assert (keep["total_usd"], keep["versus_as_run_usd"]) == (Decimal("746.35"), -743)
    assert (keep["on_demand_node_hours_kept"], keep["tasks_moved_to_api"]) == (1, 0)
    assert cancel["total_usd"] - keep["total_usd"] == Decimal("0.227272727273")


def _random_month(ledger: Ledger, api: list[tuple[int, int]], cluster: list[tuple[int, int]], od: int, rs: int) -> None:
    """``api`` and ``cluster``: (failed attempts, review minutes) per task, every task accepted in the end; on-demand
    and reserved dollars for July."""
    rows_ = []
    for i, (failed, _) in enumerate(api):
        rows_ += [request(f"a{i}-{k}", f"t{i}", "2026-07-01T10:00:00Z", status="error", attempt=k + 1, **BIG)
                  for k in range(failed)]  # fmt: skip
        rows_.append(request(f"a{i}", f"t{i}", "2026-07-01T11:00:00Z", attempt=failed + 1, **BIG))
    for i, (failed, _) in enumerate(cluster):
        rows_ += [request(f"s{i}-{k}", f"u{i}", "2026-07-02T10:00:00Z", route="self_hosted", status="error",
                          attempt=k + 1, **BIG) for k in range(failed)]  # fmt: skip
        rows_.append(request(f"s{i}", f"u{i}", "2026-07-02T11:00:00Z", route="self_hosted", attempt=failed + 1, **BIG))
    ledger.load("prices", [PRICE_MOONSHOT])
    charges = [reserved("r", str(rs), "744")] + (
        [{**reserved("od", str(od), "744"), "kind": "on_demand"}] if od else []
    )
    ledger.load("cluster-charges", charges)
    ledger.load("load-tests", [sweep("100000")])
    ledger.load("requests", rows_)
    outcomes = [{"task_id": f"t{i}", "accepted": "true", "decided_at": "2026-07-20", "review_minutes": str(m)}
                for i, (_, m) in enumerate(api)]  # fmt: skip
    outcomes += [{"task_id": f"u{i}", "accepted": "true", "decided_at": "2026-07-20", "review_minutes": str(m)}
                 for i, (_, m) in enumerate(cluster)]  # fmt: skip
    ledger.load("outcomes", outcomes)
    ledger.build(*READS, min_tasks_for_factor=1, review_rate_per_hour_usd=Decimal(60))


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    api=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 30)), min_size=1, max_size=4),
    cluster=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 30)), min_size=1, max_size=4),
    od=st.integers(0, 500),
    rs=st.integers(1, 500),
)
def test_the_scenarios_agree_with_the_verdict_for_any_month(tmp_path_factory, new_ledger_folder, api, cluster, od, rs):
    """Any month: at renewal everything on the API less the month as run is the verdict's saving to the cent; the
    cluster's failed attempts never reach the API's cost (it grows by C for each of its accepted tasks only); with a
    committed node that serves every hour, cancelling the on-demand capacity saves exactly its price."""
    ledger = new_ledger(tmp_path_factory.mktemp("cf"), new_ledger_folder)
    try:
        _random_month(ledger, api, cluster, od, rs)
        be = ledger.one("SELECT * FROM marts.monthly_break_even")
        got = rows(ledger)
        renewal = got[("at_renewal", "all_api")]
        assert abs(renewal["versus_as_run_usd"] - be["saving_usd"]) < Decimal("0.01")
        # the API's cost with every accepted task on it: its own run-rate + C's token part for each cluster task,
        # whatever the cluster's failed attempts: each task is $1.35 at the API x the API's own W
        api_attempts = sum(f + 1 for f, _ in api)
        w = Decimal(api_attempts) / len(api)  # every attempt of the same tokens: W = attempts / accepted tasks
        # (W and C are each rounded once to 1e-12 dollars: within 1e-9 of the exact figure)
        expected = Decimal("1.35") * api_attempts + Decimal("1.35") * w * len(cluster)
        assert abs(renewal["api_cost_usd"] - expected) < Decimal("1e-9")
        cancel = got.get(("this_month", "without_on_demand"))
        keep = got.get(("this_month", "on_demand_worth_keeping"))
        if od:
            assert cancel["versus_as_run_usd"] == -od and cancel["tasks_moved_to_api"] == 0
            # hour by hour, never dearer than the month as run nor than cancelling every on-demand hour
            assert keep["total_usd"] <= min(got[("this_month", "as_run")]["total_usd"], cancel["total_usd"])
        else:  # nothing to cancel: both at the month as run, saying why
            for row in (cancel, keep):
                assert row["versus_as_run_usd"] == 0 and row["tasks_moved_to_api"] == 0
                assert row["unchanged_because"] == "no on-demand node-hours were billed this month"
        # n nodes at renewal: n = 0 is everything on the API, to the cent; the cheapest size is never above it nor
        # above the month as run (the reserved node serves every hour here); a node more never raises the API's cost
        n = sizes(ledger)
        assert n[0]["nodes"] == 0 and n[0]["total_usd"] == renewal["total_usd"]
        (cheapest,) = [r for r in n if r["is_cheapest"]]
        assert cheapest["total_usd"] <= renewal["total_usd"]
        assert cheapest["total_usd"] <= got[("at_renewal", "as_run")]["total_usd"]
        assert all(b["api_cost_usd"] <= a["api_cost_usd"] for a, b in zip(n, n[1:]))
    finally:
        ledger.con.close()


@pytest.mark.slow
def test_an_owned_idle_cluster_is_sunk_this_month_and_not_at_renewal(ledger):
    """July: an owned server ($36,000 over 36 months: $1,000 a month, committed) with no requests; the API carries
    the work: two accepted tasks at $1.35."""
    from pipeline.serve.report import plain_report

    ledger.load("prices", [PRICE_MOONSHOT])
    owned = {"asset_id": "srv", "cluster_id": "c1", "purchase_price": "36000", "in_service_date": "2026-01-01",
             "life_months": "36", "currency": "USD"}  # fmt: skip
    ledger.load("hardware", [owned])
    ledger.load("requests", [request(f"a{i}", f"t{i}", "2026-07-01T10:00:00Z", **BIG) for i in (1, 2)])
    ledger.load("outcomes", accepted("t1", "t2"))
    ledger.build(min_tasks_for_factor=1)  # every model: the report reads them all
    got = rows(ledger)
    # as run: $1,000 + $2.70; this month the server is paid whatever happens: everything on the API is the same
    # $1,002.70; at renewal it is not: $2.70, $1,000 less
    assert got[("this_month", "as_run")]["total_usd"] == Decimal("1002.70")
    assert got[("this_month", "all_api")]["versus_as_run_usd"] == 0
    assert got[("at_renewal", "all_api")]["versus_as_run_usd"] == -1000
    text = " ".join(plain_report(ledger.con, "2026-07").split())
    # the server's write-off runs 36 months from January 2026: its last is December 2028
    assert (
        "This month the cluster costs nothing more to keep than to shut down (its hardware and reservations are paid "
        "either way); at renewal (from 2029-01), no cluster saves $1,000 a month."
    ) in text


@pytest.mark.slow
def test_a_cluster_that_accepted_nothing_still_carries_the_review_of_what_it_rejected(ledger):
    """July: a reserved node $1,000; the cluster's 30 tasks all rejected, each reviewed 10 minutes at $60 an hour:
    30 x $10 = $300 of review. The API: one accepted task ($1.35, no review), so C = $1.35 measured on the API.
    At renewal everything on the API costs the API's $1.35; the month as run: $1,000 + $300 + $1.35 = $1,301.35;
    all_api - as_run = -$1,300, and the verdict's saving says the same (it said -$1,000, leaving the review out)."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [reserved("r", "1000", "744")])
    cluster = [request(f"s{i}", f"u{i}", "2026-07-02T11:00:00Z", route="self_hosted", **BIG) for i in range(30)]
    ledger.load("requests", [request("a1", "t1", "2026-07-01T11:00:00Z", **BIG), *cluster])
    ledger.load("outcomes", [{"task_id": "t1", "accepted": "true", "decided_at": "2026-07-20", "review_minutes": "0"}]
                + [{"task_id": f"u{i}", "accepted": "false", "decided_at": "2026-07-20", "review_minutes": "10"}
                   for i in range(30)])  # fmt: skip
    ledger.build(*READS, min_tasks_for_factor=1, review_rate_per_hour_usd=Decimal(60))
    be = ledger.one("SELECT * FROM marts.monthly_break_even")
    got = rows(ledger)
    assert got[("at_renewal", "as_run")]["total_usd"] == Decimal("1301.35")
    assert got[("at_renewal", "all_api")]["versus_as_run_usd"] == Decimal("-1300")
    assert be["saving_usd"] == Decimal("-1300")


def _either_way_month(
    ledger: Ledger, tasks: list[tuple[int, int]], reserved_cents: int, on_demand: list[int], tps: str
) -> None:
    """July: one reserved node all month at ``reserved_cents``; one on-demand node for each hour of 2 July in
    ``on_demand`` ($0.25 each); the cluster's tasks, (failed attempts, hour of 2 July) each, a BIG attempt of an hour
    apiece, the last accepted; the API: two tasks accepted at their one attempt. A sweep of ``tps`` a node."""
    ledger.load("prices", [PRICE_MOONSHOT])
    charges = [reserved("r", f"{reserved_cents / 100:.2f}", "744")] + [
        {**reserved(f"od{h}", "0.25", "1"), "kind": "on_demand", "charge_start": f"2026-07-02T{h:02d}:00:00Z",
         "charge_end": f"2026-07-02T{h:02d}:59:59Z"}
        for h in sorted(set(on_demand))
    ]  # fmt: skip
    ledger.load("cluster-charges", charges)
    ledger.load("load-tests", [sweep(tps)])
    rows_ = [request(f"a{i}", f"t{i}", "2026-07-01T10:00:00Z", **BIG) for i in range(2)]
    for i, (failed, hour) in enumerate(tasks):
        rows_ += [
            request(f"s{i}-{k}", f"u{i}", f"2026-07-02T{hour:02d}:{k:02d}:00Z", route="self_hosted", attempt=k + 1,
                    status="ok" if k == failed else "error", latency_ms=3_600_000, **BIG)
            for k in range(failed + 1)
        ]  # fmt: skip
    ledger.load("requests", rows_)
    ledger.load("outcomes", accepted("t0", "t1", *[f"u{i}" for i in range(len(tasks))]))
    ledger.build(*READS, "+marts.monthly_hybrid_plan", min_tasks_for_factor=1)


def _scenario_properties(ledger: Ledger) -> dict:
    """The properties every month's scenarios hold; the month's break-even, for the caller."""
    be = ledger.one("SELECT * FROM marts.monthly_break_even")
    got = rows(ledger)
    renewal = got[("at_renewal", "all_api")]
    # at renewal, everything on the API less the month as run is the verdict's saving, to the cent
    assert abs(renewal["versus_as_run_usd"] - be["saving_usd"]) < Decimal("0.01")
    # the cheapest size is never above everything on the API nor above the month as run less what its on-demand
    # hours were worth (the month on its committed nodes alone, without_on_demand: a node beyond them costs a whole
    # month at renewal), to the cent: a capacity is held to 0.001 tokens a second, so a node can serve up to 3.6
    # tokens an hour less than production showed it served (an observed capacity of 660,000 tokens an hour is
    # 183.333 a second, 659,998 an hour), and that fraction of a task goes to the API ($0.000004 in such a month)
    (cheapest,) = [r for r in sizes(ledger) if r["is_cheapest"]]
    committed_only = got[("this_month", "without_on_demand")]["total_usd"]
    assert cheapest["total_usd"] <= min(renewal["total_usd"], committed_only) + Decimal("0.005")
    # the on-demand hours judged one by one: never dearer than the month as run nor than cancelling them all
    keep, cancel = got[("this_month", "on_demand_worth_keeping")], got[("this_month", "without_on_demand")]
    assert keep["total_usd"] <= min(got[("this_month", "as_run")]["total_usd"], cancel["total_usd"])
    # every this-month scenario is there, each with its total or the reason it changes nothing
    for s in ("without_on_demand", "on_demand_worth_keeping", "moves"):
        row = got[("this_month", s)]
        assert row["versus_as_run_usd"] != 0 or row["unchanged_because"] or row["tasks_moved_to_api"] != 0
    return be


@pytest.mark.slow
@pytest.mark.parametrize("reserved_cents, verdict", [(1, "self_hosting_cheaper"), (50_000, "api_cheaper")])
def test_the_random_months_range_comes_out_both_ways(ledger, reserved_cents, verdict):
    # the property below draws the reserved node's price from $0.01 to $500; at its two ends, four tasks a month
    # ($1.35 each at the API, W = 1, review 0: $5.40) come out on either side: $5.40 - $0.01 > 0, $5.40 - $500 < 0
    _either_way_month(ledger, [(0, 10), (0, 11), (0, 12), (0, 13)], reserved_cents, [], "100")
    assert _scenario_properties(ledger)["verdict"] == verdict


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tasks=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 5)), min_size=1, max_size=5),
    reserved_cents=st.integers(1, 50_000),
    on_demand=st.lists(st.integers(0, 5), max_size=3),
    tps=st.sampled_from(["50", "100", "200"]),
)
def test_the_scenarios_hold_their_properties_either_way(
    tmp_path_factory, new_ledger_folder, tasks, reserved_cents, on_demand, tps
):
    """Random months whose cluster comes out cheaper or dearer than the API (the reserved node from $0.01 to $500),
    with on-demand hours that may enable work or not: the properties of _scenario_properties hold in each."""
    ledger = new_ledger(tmp_path_factory.mktemp("either"), new_ledger_folder)
    try:
        _either_way_month(ledger, tasks, reserved_cents, on_demand, tps)
        _scenario_properties(ledger)
    finally:
        ledger.con.close()
