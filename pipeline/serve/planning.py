"""Decisions ahead, read from the published ledger: the hybrid plan of a month (as built, or at a what-if node
price or capacity per node) and the deployment gate of an evaluation set.

The plan's arithmetic is the SQL of ``marts.monthly_hybrid_plan``, once: a what-if runs that model's own SQL on the
published file with the what-if values bound as DuckDB variables, which the build leaves unset (NULL).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import duckdb

from pipeline.base.errors import CostledgerError, ExitCode
from pipeline.base.models import SQL_DIR, define_macros, parse_model
from pipeline.base.query import dict_rows
from pipeline.base.text import count, counted, pct, usd
from pipeline.serve.records import BreakEvenMonth, CurvePoint, GateCriterion, GateVerdict, PlanRow, WorkloadMove

#: The variables the hybrid plan's SQL reads its what-if values from.
_WHAT_IF = {"node_month_usd": "costledger_plan_node_month_usd", "capacity_tps": "costledger_plan_capacity_tps"}


class PlanError(CostledgerError, ValueError):
    """A what-if value that is not a positive number, or a month or evaluation set the ledger does not have."""

    exit_code = ExitCode.USAGE


def _check_what_ifs(node_month_usd: Decimal | None, capacity_tps: Decimal | None) -> None:
    for name, value in (("--node-month-usd", node_month_usd), ("--capacity-tps", capacity_tps)):
        if value is not None and (not value.is_finite() or value <= 0 or value >= Decimal(10**12)):
            raise PlanError(f"{name}: {value} is not a positive number below 1e12")


def _at_what_ifs(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: list[Any],
    node_month_usd: Decimal | None,
    capacity_tps: Decimal | None,
) -> list[dict[str, Any]]:
    """The rows of ``sql`` (models' own SQL) with the what-if values bound as the variables the models read."""
    define_macros(con)
    for key, value in (("node_month_usd", node_month_usd), ("capacity_tps", capacity_tps)):
        con.execute(f"SET VARIABLE {_WHAT_IF[key]} = CAST(? AS VARCHAR)", [None if value is None else str(value)])
    try:
        return dict_rows(con, sql, params)
    finally:
        for variable in _WHAT_IF.values():
            con.execute(f"RESET VARIABLE {variable}")


def _body(model: str) -> str:
    return parse_model("marts", SQL_DIR / "marts" / f"{model}.sql").body


def hybrid_plan(
    con: duckdb.DuckDBPyConnection,
    month: str,
    *,
    node_month_usd: Decimal | None = None,
    capacity_tps: Decimal | None = None,
) -> list[PlanRow]:
    """The month's cost at each cluster size (``month`` as YYYY-MM), as built or at the what-if values given."""
    _check_what_ifs(node_month_usd, capacity_tps)
    first_day = f"{month}-01"
    where = "WHERE month = CAST(? AS DATE) ORDER BY scenario = 'today', nodes"
    if node_month_usd is None and capacity_tps is None:
        return PlanRow.from_rows(dict_rows(con, f"SELECT * FROM marts.monthly_hybrid_plan {where}", [first_day]))
    sql = f"SELECT * FROM (\n{_body('monthly_hybrid_plan')}\n) {where}"
    return PlanRow.from_rows(_at_what_ifs(con, sql, [first_day], node_month_usd, capacity_tps))


def counterfactual_at_what_ifs(
    con: duckdb.DuckDBPyConnection, month: str, *, node_month_usd: Decimal | None, capacity_tps: Decimal | None
) -> list[dict[str, Any]]:
    """The month's counterfactual rows recomputed at the what-if values: the sizes (the hybrid plan), the workload
    moves and the scenarios that read them, each model's own SQL, so that no action reads a figure the what-if
    leaves as measured."""
    _check_what_ifs(node_month_usd, capacity_tps)
    scenarios = (
        _body("monthly_counterfactual")
        .replace("FROM marts.monthly_hybrid_plan", "FROM what_if_plan")
        .replace("FROM marts.monthly_workload_moves", "FROM what_if_moves")
    )
    sql = (
        f"WITH what_if_plan AS (\n{_body('monthly_hybrid_plan')}\n),\n"
        f"what_if_moves AS (\n{_body('monthly_workload_moves')}\n),\n"
        f"scenarios AS (\n{scenarios}\n)\n"
        "SELECT * FROM scenarios WHERE month = CAST(? AS DATE) ORDER BY horizon, scenario"
    )
    return _at_what_ifs(con, sql, [f"{month}-01"], node_month_usd, capacity_tps)


@dataclass(frozen=True, kw_only=True)
class Gate:
    """One evaluation set's gate: the side-by-side rows, the criteria and the verdict."""

    eval_set: str
    comparison: list[dict[str, Any]]
    criteria: list[GateCriterion]
    verdict: GateVerdict


def eval_sets(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in con.execute("SELECT eval_set FROM marts.gate_verdict ORDER BY eval_set").fetchall()]


def gate(con: duckdb.DuckDBPyConnection, eval_set: str | None = None) -> Gate | None:
    """The gate of ``eval_set`` (default: the latest-named set); None when the ledger has no evaluation set."""
    known = eval_sets(con)
    if not known:
        return None
    if eval_set is None:
        eval_set = known[-1]
    elif eval_set not in known:
        raise PlanError(f"evaluation set {eval_set!r} is not in the ledger (sets: {', '.join(known)})")
    comparison = dict_rows(
        con,
        "SELECT * FROM marts.gate_comparison WHERE eval_set = ? "
        "ORDER BY category = 'all categories' DESC, category, route",
        [eval_set],
    )
    criteria = GateCriterion.from_rows(
        dict_rows(con, "SELECT * FROM marts.gate_criteria WHERE eval_set = ?", [eval_set])
    )
    (verdict,) = dict_rows(con, "SELECT * FROM marts.gate_verdict WHERE eval_set = ?", [eval_set])
    return Gate(eval_set=eval_set, comparison=comparison, criteria=criteria, verdict=GateVerdict.from_row(verdict))


# ------------------------------------------------------------------ words (the report and the commands)

NODE_COST_WORDS = {
    "on_demand": "on-demand hours for the whole month at this month's on-demand price",
    "committed": "like the committed nodes: the month billed no on-demand hours",
    "setting": "the price per node-month in the settings (planning.node_month_usd)",
    "what_if": "the price given, for every node",
}
CAPACITY_WORDS = {
    "sweep": "load tests",
    "observed": "the busiest 5 minutes within the latency target in the request log",
    "mixed": "the request log, then load tests",
    "observed_above_sweep": "production, which served more than its load test",
    "what_if": "the capacity given",
}


#: the month's caveats "What to do" says itself (pipeline.serve.decisions), and those of the measured capacity, which
#: a what-if capacity sets aside
_SAID_BY_ACTIONS = {"cluster_cost_missing"}
_OF_THE_CAPACITY = {
    "capacity_mix_warning", "sweep_nodes_assumed", "capacity_contradiction", "sweep_mix_unknown", "sweep_optimistic",
    "capacity_measured_after", "capacity_lower_bound",
}  # fmt: skip


def plan_caveats(caveats: list[str] | None, meanings: dict[str, str], *, capacity_given: bool = False) -> list[str]:
    """What the plan's figures rest on: the month's verdict caveats (``caveats``, as the break-even lists them) in
    their declared words, but for the ones "What to do" says and, with a what-if capacity, the measured capacity's."""
    left_out = _SAID_BY_ACTIONS | (_OF_THE_CAPACITY if capacity_given else set())
    return [meanings.get(c, c) for c in caveats or [] if c not in left_out]


def plan_rows(rows: list[PlanRow]) -> list[PlanRow]:
    """The plan's cluster sizes (scenario 'plan'), without the month as it was."""
    return [r for r in rows if r.scenario == "plan"]


def today_row(rows: list[PlanRow]) -> PlanRow | None:
    """The month as it was (scenario 'today'): its nodes and its real spend."""
    return next((r for r in rows if r.scenario == "today"), None)


def size_marks(row: PlanRow) -> str:
    """'cheapest', 'cheapest with a spare node' (N+1) and 'today's size', for a row of the plan."""
    cheapest, spare = row.is_cheapest, row.is_cheapest_with_spare
    marks = (
        ("cheapest, also with a spare node" if cheapest and spare else "cheapest", cheapest),
        ("cheapest with a spare node", spare and not cheapest),
        ("today's size", row.is_current),
    )
    return ", ".join(word for word, on in marks if on)


def nodes_words(n: int) -> str:
    return "no cluster (everything on the API)" if n == 0 else counted(n, "node")


def _size_unknown(nodes: int, served_share: Any) -> bool:
    """The month as it was ran a cluster that served work without a billed node-hour: its size is unknown (the
    plan's SQL marks no row as today's for it, is_current)."""
    return nodes == 0 and bool(served_share)


def as_run_words(nodes: int, served_share: Any) -> str:
    """The month as it was: its nodes, or a cluster that served work without a billed node-hour (its size unknown)."""
    return "a cluster without a billed node-hour" if _size_unknown(nodes, served_share) else nodes_words(nodes)


def _hours(value: Any) -> str:
    return counted(value, "node-hour")


def _inputs_sentence(first: PlanRow, month: str) -> str:
    said = (
        f"For the cluster's work in {month} (busiest hour {count(first.peak_tokens_per_second)} tokens/s, every "
        f"attempt; the accepted tasks above a size's capacity go to the API at its price per accepted task), one "
        f"node serves {count(first.capacity_per_node_tokens_per_second)} tokens/s within the latency target "
        f"({CAPACITY_WORDS.get(first.capacity_source or '', 'measured')})."
    )
    if first.committed_node_month_usd is not None and first.node_cost_source != "what_if":
        said += f" A committed node (owned or reserved) costs {usd(first.committed_node_month_usd, 0)} a month;"
        said += f" a node beyond them {usd(first.node_month_usd, 0)}"
    else:
        said += f" A node costs {usd(first.node_month_usd, 0)} a month"
    return said + f" ({NODE_COST_WORDS.get(first.node_cost_source or '', '')})."


def change_sentence(today: PlanRow, best: PlanRow) -> str:
    """The cheapest plan against the month as it was, in dollars, and what changes to get there."""
    month = str(today.month)[:7]
    said = (
        f"{month} as it was ({as_run_words(today.nodes, today.self_hosted_token_share)}) cost "
        f"{usd(today.actual_total_usd, 0)}; the cheapest "
        f"plan, {nodes_words(best.nodes)}, costs {usd(best.total_usd, 0)}"
    )
    if best.nodes:
        said += f" serving {pct(best.self_hosted_token_share, 0)} of the cluster's tokens"
    gap = today.actual_total_usd - best.total_usd
    said += f", {usd(gap, 0)} less" if gap > 0 else f", {usd(-gap, 0)} more" if gap < 0 else ", the same"
    moves = []
    sized = not _size_unknown(today.nodes, today.self_hosted_token_share)  # else no nodes to add or release
    if sized and best.nodes > today.nodes:
        moves.append(f"add {nodes_words(best.nodes - today.nodes)}")
    elif sized and best.nodes < today.nodes:
        moves.append(f"release {nodes_words(today.nodes - best.nodes)}")
    if best.on_demand_node_hours_released:
        moves.append(f"the {_hours(best.on_demand_node_hours_released)} billed on demand are not needed")
    return said + (": " + "; ".join(moves) + "." if moves else ".")


def _single_size_sentence(first: PlanRow, month: str) -> str:
    """Why the plan has no size but the API alone."""
    said = (
        f"Everything on the API would have cost {usd(first.total_usd, 0)} in {month}."
        if first.total_usd is not None
        else f"What everything on the API would have cost in {month} is unknown: the month has no API price to put on "
        "an accepted task."
    )
    if first.peak_tokens_per_second == 0 and not first.current_nodes:  # a what-if would size nothing either
        return said + (
            " No tokens were served on a cluster this month, so there is none to size one for: which API workloads a "
            "cluster would take, and what they would save, is the workload moves' question."
        )
    missing = (
        "no capacity per node was measured (no load-test point within the latency target, and no self-hosted "
        "tokens served within it in the request log)"
        if first.capacity_per_node_tokens_per_second is None
        else "there is no price for a node (no cluster this month and no planning.node_month_usd setting)"
    )
    return said + (
        f" No cluster size can be costed: {missing}. `costledger plan --month {month} --node-month-usd X "
        "--capacity-tps Y` prices one."
    )


def plan_sentences(rows: list[PlanRow]) -> list[str]:
    """What the plan says: its inputs, the cheapest size against the month as it was, the cheapest with a spare
    node, and the all-API cost."""
    plans, today = plan_rows(rows), today_row(rows)
    if not plans:
        return []
    first = plans[0]
    month = str(first.month)[:7]
    if len(plans) == 1:
        return [_single_size_sentence(first, month)]
    said = [_inputs_sentence(first, month)]
    cheapest = next((r for r in plans if r.is_cheapest), None)
    if cheapest is None:
        return said + ["The API price of the demand is unknown, so no size can be called cheapest."]
    if today is not None:
        said.append(change_sentence(today, cheapest))
    else:
        said.append(f"The cheapest size is {nodes_words(cheapest.nodes)}: {usd(cheapest.total_usd, 0)}.")
    spare = next((r for r in plans if r.is_cheapest_with_spare), None)
    all_api = f"{usd(first.total_usd, 0)}"
    if spare is not None and spare.nodes == 0 and cheapest.nodes != 0:
        return said + [f"With one node kept spare for node loss, no cluster beats the API alone, {all_api}."]
    if spare is not None and spare.nodes != cheapest.nodes:
        said.append(
            f"With one node kept spare for node loss, the cheapest is {nodes_words(spare.nodes)}: "
            f"{usd(spare.total_with_spare_usd, 0)}."
        )
    if cheapest.nodes != 0:
        said.append(f"Everything on the API would have cost {all_api}.")
    return said


def curve_sentence(be: BreakEvenMonth, curve: list[CurvePoint]) -> str | None:
    """The break-even curve in words: what a task costs on the cluster at today's utilisation against the API, where
    the cluster breaks even, and the most a cluster sized for its busiest hour can reach."""
    if not curve:
        return None
    first = curve[0]
    said = (
        f"At today's {pct(first.today_token_utilisation)} of its token capacity, an accepted task costs "
        f"{usd(be.self_hosted_cost_per_accepted_task_usd, 2)} on the cluster against "
        f"{usd(first.api_cost_per_accepted_task_usd, 2)} on the API"
    )
    be_u, ceiling = first.break_even_token_utilisation, first.ceiling_token_utilisation
    if be_u is None:
        said += "; the cluster never breaks even (a task costs more on it than on the API at any utilisation)"
    else:
        said += f"; the cluster breaks even at {pct(be_u)}"
    if ceiling is not None:
        said += f", and a cluster sized for its busiest hour can use at most {pct(ceiling)} of its capacity"
        if be_u is not None and be_u > ceiling:
            said += ": break-even lies beyond what this traffic's profile allows"
    return said + "."


def gate_headline(g: Gate) -> str:
    """The gate's verdict and its count of criteria, for a page that lists what failed or is missing below it."""
    v = g.verdict
    if v.verdict == "passed":
        return f"The deployment gate ({g.eval_set}) passed all {v.criteria} criteria{_skipped(v)}."
    failed, missing = len(v.failed_criteria), len(v.missing_criteria)
    parts = [f"{failed} failed" if failed else "", f"{missing} not yet measured" if missing else ""]
    word = "failed" if v.verdict == "failed" else "is incomplete"
    counted = " and ".join(p for p in parts if p)
    return f"The deployment gate ({g.eval_set}) {word}: of {v.criteria} criteria, {counted}."


def _skipped(v: GateVerdict) -> str:
    """The criteria that did not apply, named after a passed gate's count (a skip is not a pass)."""
    skipped = v.skipped_criteria or []
    return f" it was judged on ({', '.join(skipped)} did not apply)" if skipped else ""


def gate_sentence(g: Gate) -> str:
    """The gate's verdict in one sentence, naming what failed or is missing."""
    v = g.verdict
    if v.verdict == "passed":
        return f"The deployment gate ({g.eval_set}) passed all {v.criteria} criteria{_skipped(v)}."
    reasons = "; ".join(v.reasons) or ", ".join(v.failed_criteria + v.missing_criteria)
    word = "failed" if v.verdict == "failed" else "is incomplete"
    return f"The deployment gate ({g.eval_set}) {word}: {reasons}."


def workload_name(r: WorkloadMove) -> str:
    """A workload as the reader knows it: its team's and its own name ('(none)' parts left out)."""
    parts = [p for p in (r.team, r.workload) if p and p != "(none)"]
    return " / ".join(parts) or "work with no team or workload logged"


def _listed(names: list[str]) -> str:
    """'a', 'a and b', 'a, b and c', 'a, b, c and 2 more'."""
    if len(names) > 3:
        return f"{', '.join(names[:3])} and {len(names) - 3} more"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


#: a workload with at least this share of its API input tokens read from the provider's cache is cache-heavy
CACHE_HEAVY = Decimal("0.25")


def moves_sentence(moves: list[WorkloadMove], no_cluster_saves: Decimal | None = None) -> str | None:
    """Which API traffic to move first, in words: the workloads that fit the committed nodes' spare capacity in every
    hour they have work and the month's saving from moving them, or why none does; the cache-heavy work named as
    moving last. ``no_cluster_saves``: what no cluster saves a month at renewal, said beside a move's saving (a move
    is a this-month answer)."""
    if not moves:
        return None
    month = str(moves[0].month)[:7]
    ranked = [r for r in moves if r.move_rank is not None]
    if not ranked:
        return (
            f"No API workload would cost less on the cluster in {month}: each costs the API no more per task than "
            "the cluster's review."
        )
    fitted = [r for r in ranked if r.fits]
    if not fitted:
        return f"No API workload fits the cluster in {month}: {ranked[0].reason}."
    if len(fitted) == len(ranked) and len(fitted) > 1:
        said = f"All {len(fitted)} API workloads that would save money fit"
    else:
        said = _listed([workload_name(r) for r in fitted]) + (" fits" if len(fitted) == 1 else " fit")
    said += " the committed nodes' spare capacity in every hour they have work"
    said += f": moving {'it' if len(fitted) == 1 else 'them'} would have saved "
    said += f"{usd(fitted[-1].cumulative_saving_usd, 0)} in {month}"
    if no_cluster_saves is not None:
        said += f" (this month only: when the commitments end, no cluster saves {usd(no_cluster_saves, 0)} a month)"
    heavy = [r for r in ranked if (r.cache_hit_share or 0) >= CACHE_HEAVY]
    light = [r for r in ranked if (r.cache_hit_share or 0) < CACHE_HEAVY]
    if heavy and light and min(r.move_rank for r in heavy) > max(r.move_rank for r in light):
        shares = sorted(r.cache_hit_share for r in heavy)
        span = pct(shares[0]) if shares[0] == shares[-1] else f"{pct(shares[0])} to {pct(shares[-1])}"
        said += (
            f"; the cache-heavy work ({span} of its input from the provider's cache) is cheap on the API and saves "
            "least per token: it moves last"
        )
    return said + "."
