"""What to do, worded from counterfactual rows built by hand: at most three actions, each with its horizon, and no
two that recommend opposite things (docs/decisions.md)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from pipeline.serve.decisions import actions


def row(horizon: str, scenario: str, versus: str, **kw) -> dict:
    base = {
        "horizon": horizon,
        "scenario": scenario,
        "versus_as_run_usd": Decimal(versus),
        "tasks_moved_to_api": Decimal(0),
        "on_demand_node_hours": None,
        "on_demand_node_hours_enabling_nothing": None,
        "on_demand_cost_usd": None,
        "nodes": None,
        "is_cheapest": None,
    }
    return {**base, **kw}


def month(cancel: str | None, shutdown: str, renewal: str, moves: str | None = None) -> list[dict]:
    rows = [row("this_month", "all_api", shutdown), row("at_renewal", "all_api", renewal)]
    if cancel is not None:
        rows.append(
            row(
                "this_month", "without_on_demand", cancel, on_demand_node_hours=Decimal(40),
                on_demand_node_hours_enabling_nothing=Decimal(40), on_demand_cost_usd=-Decimal(cancel),
            )
        )  # fmt: skip
    if moves is not None:
        rows.append(row("this_month", "moves", moves, tasks_moved_to_api=Decimal(-12)))
    return rows


def test_shutting_down_is_weighed_against_the_cluster_without_its_idle_on_demand_hours():
    # cancelling the on-demand hours saves $100; shutting down saves $40 against the month as run, so $60 less than
    # cancelling alone saves: keeping the cluster without them is $60 better this month
    said = actions(month(cancel="-100", shutdown="-40", renewal="-500", moves="-30"))
    assert said[0].startswith("This month: cancel the on-demand capacity, $100 less")
    assert said[1] == (
        "This month, running the cluster without its on-demand hours saves $60 against shutting it down (its "
        "hardware and reservations are paid either way); at renewal, no cluster saves $500 a month."
    )
    # the move keeps the cluster running, worth it while shutting down is worse; at renewal no cluster is cheaper,
    # said in the same sentence
    assert said[2] == (
        "This month, moving 12 accepted API tasks into the cluster's spare capacity saves $30 (the workloads that fit "
        "in every hour they have work); when the commitments end, no cluster saves $500 a month."
    )


def test_the_renewal_names_the_month_the_commitments_end():
    rows = month(cancel=None, shutdown="-200", renewal="-500")
    rows[1]["renewal_from"] = dt.date(2029, 7, 1)
    assert actions(rows) == [
        "Send the work to the API: shutting the service down saves $200 this month, with its hardware and "
        "reservations paid either way; at renewal (from 2029-07), no cluster saves $500 a month."
    ]


def test_a_move_is_not_offered_when_shutting_down_saves_more():
    # no on-demand hours; shutting down saves $200, moving API work onto the cluster $30: only the shutdown is said
    said = actions(month(cancel=None, shutdown="-200", renewal="-500", moves="-30"))
    assert said == [
        "Send the work to the API: shutting the service down saves $200 this month, with its hardware and "
        "reservations paid either way; at renewal, no cluster saves $500 a month."
    ]


def test_at_most_three_actions_and_the_renewal_size_when_it_is_not_today_s():
    rows = month(cancel=None, shutdown="50", renewal="20") + [
        row("at_renewal", "nodes_n", "20", nodes=0, is_cheapest=False),
        row("at_renewal", "nodes_n", "-300", nodes=2, is_cheapest=True),
        row("at_renewal", "nodes_n", "0", nodes=1, is_cheapest=False),
    ]
    said = actions(rows, current_nodes=1)
    # keep: $50 more this month without it; at renewal 2 nodes are the cheapest size, $300 less than as run and
    # $20 + $300 = $320 less than no cluster (which is $20 dearer than as run)
    assert said == [
        "Keep the cluster: without it this month would have cost $50 more (its hardware and reservations paid either "
        "way); at renewal, 2 nodes, the cheapest size, cost $320 a month less than no cluster and $300 a month less "
        "than as run."
    ]
    # today's size is the cheapest: the same one sentence
    assert len(actions(rows, current_nodes=2)) == 1
    crowded = month(cancel="-100", shutdown="-40", renewal="-500", moves="-30") + rows[2:]
    assert len(actions(crowded, current_nodes=1)) == 3


def test_the_renewal_reads_the_cheapest_size_not_everything_on_the_api():
    # as the demo's October: keeping the cluster is $200 cheaper this month; at renewal everything on the API is
    # $9,976 below the month as run, but 1 node is $10,430 below it: $10,430 - $9,976 = $454 below no cluster. The
    # sentence said "no cluster saves $9,976 a month" beside a table where 1 node was cheapest
    rows = month(cancel=None, shutdown="200", renewal="-9976") + [
        row("at_renewal", "nodes_n", "-9976", nodes=0, is_cheapest=False),
        row("at_renewal", "nodes_n", "-10430", nodes=1, is_cheapest=True),
        row("at_renewal", "nodes_n", "-9000", nodes=2, is_cheapest=False),
    ]
    expected = (
        "Keep the cluster: without it this month would have cost $200 more (its hardware and reservations paid "
        "either way); at renewal, 1 node, the cheapest size, costs $454 a month less than no cluster and $10,430 a "
        "month less than as run."
    )
    assert actions(rows, current_nodes=1) == [expected]
    # too close to call: the month as run is said to be so, the renewal still read off the cheapest size
    assert actions(rows, close=True, current_nodes=1) == [
        "This month, keep the cluster running: shutting it down would have cost $200 more (its hardware and "
        "reservations are paid either way); at renewal, 1 node, the cheapest size, costs $454 a month less than no "
        "cluster and $10,430 a month less than as run. The month as run against the API is too close to call, within "
        "what the named assumptions move."
    ]
    # a move this month is not told that no cluster is cheaper at renewal when 1 node is
    moved = rows + [row("this_month", "moves", "-30", tasks_moved_to_api=Decimal(-12))]
    said = actions(moved, current_nodes=1)
    assert said[1] == ("This month, moving 12 accepted API tasks into the cluster's spare capacity saves $30 (the "
                       "workloads that fit in every hour they have work).")  # fmt: skip


def test_a_month_without_a_cluster_is_not_told_to_keep_one():
    # API only: the month as run paid no cluster and no operating cost, and sending everything to the API moves no
    # task (both horizons $0 against the month as run): no cluster sentence at all
    as_run = {"cluster_cost_usd": Decimal(0), "operating_cost_usd": Decimal(0)}
    rows = month(cancel=None, shutdown="0", renewal="0") + [row("this_month", "as_run", "0", **as_run)]
    assert actions(rows, current_nodes=0) == []
    # a month with a cluster that cost $100 and the same $0 differences is still worded (what it saves: nothing)
    paid = month(cancel=None, shutdown="0", renewal="0") + [
        row("this_month", "as_run", "0", cluster_cost_usd=Decimal(100), operating_cost_usd=Decimal(0))
    ]
    assert [s[:16] for s in actions(paid, current_nodes=1)] == ["Keep the cluster"]
    # operating costs alone (a service without nodes this month) are something to shut down
    ops = month(cancel=None, shutdown="-30", renewal="-30") + [
        row("this_month", "as_run", "0", cluster_cost_usd=Decimal(0), operating_cost_usd=Decimal(30))
    ]
    assert actions(ops, current_nodes=0)[0].startswith("Send the work to the API: shutting the service down saves $30")


def test_a_cluster_without_its_bills_gets_no_decision_but_to_load_them():
    # the month as run carries the caveat cluster_cost_missing (its cluster served one accepted task, no cost loaded);
    # shutting down sends that task to the API at $0.60, $0.60 more than as run, shown to the dollar as $1
    as_run = row(
        "this_month", "as_run", "0", caveats=["cluster_cost_missing"], cluster_cost_usd=Decimal(0),
        operating_cost_usd=Decimal(0),
    )  # fmt: skip
    rows = [*month(cancel=None, shutdown="0.60", renewal="0.60"), as_run]
    rows[0]["tasks_moved_to_api"] = Decimal(1)
    assert actions(rows) == [
        "Load the cluster's bills before deciding whether to keep it: none of its costs is loaded for this month, so "
        "it looks free, and sending its 1 accepted task to the API looks $1 dearer than running it."
    ]
    # the same month with its bills loaded is a decision: keep it (both horizons $0.60 dearer without it)
    as_run["caveats"] = []
    assert actions(rows)[0].startswith("Keep the cluster: without it this month would have cost $1 more")


def test_a_count_takes_its_noun_in_the_number_it_shows():
    from pipeline.base.text import counted

    assert [counted(n, "node") for n in (0, 1, 2, Decimal("1.4"), 1234)] == [
        "0 nodes", "1 node", "2 nodes", "1 node", "1,234 nodes",
    ]  # fmt: skip
    assert counted(None, "task") == "n/a tasks" and counted(3, "clock hour") == "3 clock hours"


def test_the_plan_rests_on_the_months_caveats_but_those_said_elsewhere_or_set_aside():
    from pipeline.serve.planning import plan_caveats

    meanings = {"sweep_optimistic": "The load test overstates.", "api_waste_assumed": "W is assumed."}
    month = ["sweep_optimistic", "api_waste_assumed", "cluster_cost_missing", "newer_caveat"]
    # "What to do" says cluster_cost_missing itself; a caveat the ledger declares no words for is shown by its name
    assert plan_caveats(month, meanings) == ["The load test overstates.", "W is assumed.", "newer_caveat"]
    # a what-if capacity sets the measured capacity's caveats aside, not the API's
    assert plan_caveats(month, meanings, capacity_given=True) == ["W is assumed.", "newer_caveat"]
    assert plan_caveats(None, meanings) == []


def test_the_on_demand_hours_that_enabled_work_are_told_from_those_that_enabled_nothing():
    # 30 on-demand node-hours, 25 of them in hours the committed nodes could serve: the other 5 enabled 0.4 of an
    # accepted task's work, worth less on the API than the $90 all 30 cost; cancelling them saves $80
    rows = month(cancel=None, shutdown="10", renewal="10") + [
        row("this_month", "without_on_demand", "-80", on_demand_node_hours=Decimal(30),
            on_demand_node_hours_enabling_nothing=Decimal(25), on_demand_cost_usd=Decimal(90),
            tasks_moved_to_api=Decimal("0.4"))
    ]  # fmt: skip
    assert actions(rows)[0] == (
        "This month: cancel the on-demand capacity, $80 less (of its 30 on-demand node-hours, 25 enabled nothing (the "
        "committed nodes could serve those hours) and the other 5 enabled less than one accepted task's work, worth "
        "less on the API than the $90 they cost)."
    )
    # all 30 enabled work: 25 accepted tasks
    rows[-1] = {**rows[-1], "on_demand_node_hours_enabling_nothing": Decimal(0), "tasks_moved_to_api": Decimal(25)}
    assert actions(rows)[0] == (
        "This month: cancel the on-demand capacity, $80 less (its 30 on-demand node-hours enabled 25 accepted tasks, "
        "worth less on the API than the $90 they cost)."
    )


def test_on_demand_hours_worth_their_price_are_kept_and_the_rest_cancelled():
    # 30 on-demand node-hours: 20 enabled nothing, 6 enabled 3 accepted tasks worth less than they cost, 4 enabled
    # work worth more: the month with those 4 kept is $70 less than as run (cancelling all 30 would save $60 only)
    rows = month(cancel=None, shutdown="10", renewal="10") + [
        row("this_month", "without_on_demand", "-60", on_demand_node_hours=Decimal(30),
            on_demand_node_hours_enabling_nothing=Decimal(20), on_demand_cost_usd=Decimal(90),
            tasks_moved_to_api=Decimal(5)),
        row("this_month", "on_demand_worth_keeping", "-70", on_demand_node_hours=Decimal(30),
            on_demand_node_hours_enabling_nothing=Decimal(20), on_demand_cost_usd=Decimal(90),
            tasks_moved_to_api=Decimal(3), on_demand_node_hours_kept=Decimal(4)),
    ]  # fmt: skip
    assert actions(rows)[0] == (
        "This month: cancel 26 of the 30 on-demand node-hours, $70 less (20 enabled nothing, 6 enabled 3 accepted "
        "tasks, worth less on the API than they cost; the other 4 enabled work worth more than their price: keep "
        "them)."
    )
    # shutting down ($10 more than as run) is weighed against the cluster without the hours not worth their price
    # ($70 less than as run): $10 + $70 = $80 more; at renewal a cluster saves $10: keep it
    assert actions(rows)[1].startswith(
        "Keep the cluster without the on-demand hours not worth their price: without it this month would have cost "
        "$80 more"
    )


def test_a_move_onto_the_cluster_says_the_gate_has_not_passed():
    # the move of 12 API tasks saves $30; the latest deployment gate failed, then was not complete: said beside it;
    # a passed gate adds nothing
    rows = month(cancel=None, shutdown="40", renewal="10", moves="-30")
    moved = "This month, moving 12 accepted API tasks into the cluster's spare capacity saves $30"
    said = actions(rows, gate=("k3-gate", "failed"))
    assert said[-1].startswith(moved) and said[-1].endswith(
        ". The deployment gate (k3-gate) failed: move no work onto the cluster until it passes."
    )
    assert actions(rows, gate=("k3-gate", "incomplete"))[-1].endswith(
        ". The deployment gate (k3-gate) is not complete: move no work onto the cluster until it passes."
    )
    assert actions(rows, gate=("k3-gate", "passed"))[-1] == actions(rows)[-1]
    assert "gate" not in actions(rows, gate=("k3-gate", "passed"))[-1]
