"""What to do, read off the month's counterfactual rows (marts.monthly_counterfactual): at most three actions, each
with its horizon and its dollars against the month as run. The dollars are the mart's; this module only words them,
so no sentence of the report or of `costledger plan` can price a decision another way."""

from __future__ import annotations

from typing import Any

from pipeline.base.text import count, counted, usd

SQL = "SELECT * FROM marts.monthly_counterfactual WHERE month = CAST(? AS DATE) ORDER BY horizon, scenario"


def counterfactual_rows(con: Any, month: str) -> list[dict[str, Any]]:
    """The month's rows (``month`` as YYYY-MM); none when the ledger predates the mart."""
    from pipeline.base.query import dict_rows, table_exists

    return dict_rows(con, SQL, [f"{month}-01"]) if table_exists(con, "marts", "monthly_counterfactual") else []


def scenario_row(rows: list[dict[str, Any]], horizon: str, scenario: str) -> dict[str, Any] | None:
    """The month's row of a scenario at a horizon (nodes_n has several: not for it)."""
    return next((r for r in rows if r["horizon"] == horizon and r["scenario"] == scenario), None)


def _on_demand(row: dict[str, Any]) -> str | None:
    """Cancel the on-demand node-hours whose enabled work is worth less than their price (all of them, or those of
    them the row keeps not), when the month without them costs less."""
    change = row["versus_as_run_usd"]
    if change is None or change >= 0:
        return None
    hours, idle = row["on_demand_node_hours"], row["on_demand_node_hours_enabling_nothing"] or 0
    kept = row.get("on_demand_node_hours_kept") or 0
    tasks = row["tasks_moved_to_api"]
    work = "less than one accepted task's work" if tasks < 1 else f"{count(tasks)} accepted tasks"
    if kept:
        working = hours - kept - idle
        return (
            f"This month: cancel {count(hours - kept)} of the {count(hours)} on-demand node-hours, {usd(-change, 0)} "
            f"less ({count(idle)} enabled nothing"
            + (f", {count(working)} enabled {work}, worth less on the API than they cost" if working > 0 else "")
            + f"; the other {count(kept)} enabled work worth more than their price: keep them)."
        )
    if idle >= hours:
        enabled = (
            f"none of its {count(hours)} on-demand node-hours enabled a task: the committed nodes could serve every "
            "hour"
        )
    else:
        worth = f"worth less on the API than the {usd(row['on_demand_cost_usd'], 0)} they cost"
        enabled = (
            f"of its {count(hours)} on-demand node-hours, {count(idle)} enabled nothing (the committed nodes could "
            f"serve those hours) and the other {count(hours - idle)} enabled {work}, {worth}"
            if idle
            else f"its {count(hours)} on-demand node-hours enabled {work}, {worth}"
        )
    return f"This month: cancel the on-demand capacity, {usd(-change, 0)} less ({enabled})."


def _from(later: dict[str, Any] | None) -> str:
    """' (from YYYY-MM)': when the month's commitments end, so that a renewal can start; '' when unknown."""
    month = later.get("renewal_from") if later else None
    return f" (from {str(month)[:7]})" if month else ""


def _shutdown(now: dict[str, Any] | None, cancel: Any) -> Any:
    """Shutting down this month against the month as run less what cancelling the on-demand hours saves (``cancel``,
    0 or negative); None without the figure."""
    return now["versus_as_run_usd"] - cancel if now and now["versus_as_run_usd"] is not None else None


def _self_hosted(rows: list[dict[str, Any]]) -> bool:
    """Whether the month as run had anything self-hosted to keep or shut down: a cluster cost, an operating cost or a
    task of the cluster's (rows without the month as run: assumed so)."""
    as_run, now = scenario_row(rows, "this_month", "as_run"), scenario_row(rows, "this_month", "all_api")
    if as_run is None:
        return True
    paid = (as_run["cluster_cost_usd"] or 0) != 0 or (as_run["operating_cost_usd"] or 0) != 0
    return paid or (now is not None and (now["tasks_moved_to_api"] or 0) != 0)


def cheapest_size(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The cheapest size at renewal (the nodes_n row marked is_cheapest); None without the sizes."""
    return next((r for r in rows if r["scenario"] == "nodes_n" and r["is_cheapest"]), None)


def _renewal(rows: list[dict[str, Any]], later: dict[str, Any]) -> tuple[bool, str]:
    """At renewal, read off the cheapest size and no cluster (everything on the API), both against the month as run:
    (whether a cluster is worth keeping, the clause that says so). Without the sizes, no cluster against the month as
    run decides."""
    b, best = later["versus_as_run_usd"], cheapest_size(rows)
    if best is None or best["versus_as_run_usd"] is None:
        return b >= 0, (f"a cluster saves {usd(b, 0)} a month against none" if b >= 0
                        else f"no cluster saves {usd(-b, 0)} a month")  # fmt: skip
    v = best["versus_as_run_usd"]
    if not best["nodes"]:
        return False, f"no cluster saves {usd(-v, 0)} a month" if v < 0 else (
            f"no cluster is the cheapest size, {usd(v, 0)} a month more than as run")  # fmt: skip
    nodes = counted(best["nodes"], "node")
    than_run = f"{usd(-v, 0)} a month less than as run" if v <= 0 else f"{usd(v, 0)} a month more than as run"
    cost = "costs" if best["nodes"] == 1 else "cost"
    return True, f"{nodes}, the cheapest size, {cost} {usd(b - v, 0)} a month less than no cluster and {than_run}"


def _cluster(
    rows: list[dict[str, Any]],
    now: dict[str, Any] | None,
    later: dict[str, Any] | None,
    close: bool,
    cancel: Any = 0,
    some_kept: bool = False,
) -> str | None:
    """Keep the cluster or not: this month (commitments sunk) and at renewal (the cheapest size against no cluster,
    from the sizes' rows), in one sentence; a verdict too close to call says so of the month as run, never turned into
    an action. ``cancel``: what cancelling the on-demand hours saves this month (negative): shutting down is then
    weighed against the cluster run without them (``some_kept``: without those not worth their price)."""
    a = _shutdown(now, cancel)
    if a is None or later is None or later["versus_as_run_usd"] is None:
        return None
    keep, clause = _renewal(rows, later)
    hours = "the on-demand hours not worth their price" if some_kept else "its on-demand hours"
    run = f" without {hours}" if cancel else ""
    more = f" more than cancelling {'those' if some_kept else 'the'} on-demand hours alone" if cancel else ""
    renewal = f"at renewal{_from(later)}, {clause}"
    if close:
        this_month = (
            f"This month, keep the cluster running{run}: shutting it down would have cost {usd(a, 0)} more"
            if a >= 0
            else f"This month, shutting the service down saves {usd(-a, 0)}{more}"
        )
        return (
            f"{this_month} (its hardware and reservations are paid either way); {renewal}. The month as run against "
            "the API is too close to call, within what the named assumptions move."
        )
    if a >= 0 and keep:
        return (
            f"Keep the cluster{run}: without it this month would have cost {usd(a, 0)} more (its hardware and "
            f"reservations paid either way); {renewal}."
        )
    if a < 0 and not keep:
        return (
            f"Send the work to the API: shutting the service down saves {usd(-a, 0)}{more} this month, with its "
            f"hardware and reservations paid either way; {renewal}."
        )
    if a == 0:
        return (
            f"This month the cluster{run} costs nothing more to keep than to shut down (its hardware and reservations "
            f"are paid either way); {renewal}."
        )
    if a > 0:
        return (
            f"This month, running the cluster{run} saves {usd(a, 0)} against shutting it down (its hardware and "
            f"reservations are paid either way); {renewal}."
        )
    return (
        f"This month, shutting the service down saves {usd(-a, 0)}{more} even with its hardware and reservations paid; "
        f"{renewal}."
    )


def _costs_missing(rows: list[dict[str, Any]]) -> bool:
    """The cluster served work this month while none of its costs is loaded (the caveat cluster_cost_missing)."""
    as_run = scenario_row(rows, "this_month", "as_run")
    return as_run is not None and "cluster_cost_missing" in (as_run.get("caveats") or [])


def _load_bills(now: dict[str, Any] | None, cancel: Any) -> str:
    """In place of keeping or shutting down a cluster that looks free: load its bills first."""
    said = "Load the cluster's bills before deciding whether to keep it: none of its costs is loaded for this month"
    a = _shutdown(now, cancel)
    if a is None or now is None or not now["tasks_moved_to_api"]:
        return said + ", so it looks free."
    looks = f"{usd(a, 0)} dearer" if a >= 0 else f"{usd(-a, 0)} cheaper"
    return said + (
        f", so it looks free, and sending its {counted(now['tasks_moved_to_api'], 'accepted task')} to the API looks "
        f"{looks} than running it."
    )


def _moves(
    rows: list[dict[str, Any]],
    row: dict[str, Any],
    now: dict[str, Any] | None,
    later: dict[str, Any] | None,
    cancel: Any = 0,
    gate: tuple[str, str] | None = None,
) -> str | None:
    """Move API work into the committed nodes' spare capacity, when that beats shutting the service down this month
    (a move keeps the cluster running); when no cluster is cheaper at renewal, that is said in the same sentence;
    ``gate`` (evaluation set, verdict): a deployment gate not passed is said beside the move."""
    change = row["versus_as_run_usd"]
    shutdown = _shutdown(now, cancel)
    if change is None or change >= 0 or (shutdown is not None and shutdown <= change):
        return None
    said = (
        f"This month, moving {count(-row['tasks_moved_to_api'])} accepted API tasks into the cluster's spare "
        f"capacity saves {usd(-change, 0)} (the workloads that fit in every hour they have work)"
    )
    if later is not None and later["versus_as_run_usd"] is not None:
        keep, clause = _renewal(rows, later)
        if not keep:  # the move is this month's only: said beside what renewal does
            said += f"; when the commitments end{_from(later)}, {clause}"
    if gate is not None and gate[1] != "passed":
        state = "failed" if gate[1] == "failed" else "is not complete"
        said += f". The deployment gate ({gate[0]}) {state}: move no work onto the cluster until it passes"
    return said + "."


def _size(rows: list[dict[str, Any]], current: int | None) -> str | None:
    """At renewal, keep the cheapest size when it is neither no cluster nor today's size (a month with no cluster
    sentence: the cluster sentence says the cheapest size itself)."""
    best = cheapest_size(rows)
    if best is None or not best["nodes"] or best["nodes"] == current or best["versus_as_run_usd"] is None:
        return None
    change = best["versus_as_run_usd"]
    word = "node" if best["nodes"] == 1 else "nodes"
    dollars = f"{usd(-change, 0)} a month less" if change < 0 else f"{usd(change, 0)} a month more"
    return f"At renewal: keep {best['nodes']} {word}, the cheapest size for the cluster's work, {dollars} than as run."


def actions(
    rows: list[dict[str, Any]],
    close: bool = False,
    current_nodes: int | None = None,
    gate: tuple[str, str] | None = None,
) -> list[str]:
    """At most three actions, each with its horizon and dollars against the month as run; ``close``: the month's
    verdict is too close to call; ``current_nodes``: the nodes in service at the busiest hour; ``gate``: the latest
    deployment gate (evaluation set, verdict), said beside a move onto the cluster."""
    said = []
    # the on-demand hours judged one by one (rows without that scenario: all of them at once)
    cancel = scenario_row(rows, "this_month", "on_demand_worth_keeping") or scenario_row(
        rows, "this_month", "without_on_demand"
    )
    saves = 0
    if cancel is not None:
        said.append(_on_demand(cancel))
        saves = min(cancel["versus_as_run_usd"] or 0, 0)
    now, later = scenario_row(rows, "this_month", "all_api"), scenario_row(rows, "at_renewal", "all_api")
    cluster = None
    if _costs_missing(rows):  # a cluster that looks free: no decision about it rests on the month
        said.append(_load_bills(now, saves))
    elif _self_hosted(rows):  # a month with no cluster has no cluster to keep or shut down
        some_kept = bool(cancel and cancel.get("on_demand_node_hours_kept"))
        cluster = _cluster(rows, now, later, close, saves, some_kept)
        said.append(cluster)
    move = scenario_row(rows, "this_month", "moves")
    if move is not None:
        said.append(_moves(rows, move, now, later, saves, gate))
    if cluster is None:
        said.append(_size(rows, current_nodes))
    return [s for s in said if s][:3]
