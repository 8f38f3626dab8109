"""Plan: scenario (without data), plan (the hybrid plan of a month) and gate (the deployment gate)."""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Annotated, Optional

import typer

from pipeline.cli import toc
from pipeline.base.text import usd
from pipeline.base.errors import ExitCode
from pipeline.cli.common import (
    DbOpt,
    JsonOpt,
    SettingsOpt,
    error,
    open_read,
    out,
    read_settings,
)

app = typer.Typer()  # merged into the root app; each command names its help panel


def _amounts(values: list[str] | None, default: str, flag: str) -> list[Decimal]:
    """Positive decimals from repeated flags and comma-separated lists (``--x 80,120 --x 160``)."""
    texts = [t.strip() for v in (values or [default]) for t in v.split(",") if t.strip()]
    try:
        amounts = [Decimal(t) for t in texts]
    except InvalidOperation:
        error(f"{flag}: {', '.join(texts)} is not a list of numbers")
        raise typer.Exit(ExitCode.USAGE) from None
    if not amounts or any(not a.is_finite() or a <= 0 for a in amounts):
        error(f"{flag}: every value must be a positive number")
        raise typer.Exit(ExitCode.USAGE)
    return amounts


ListOpt = Optional[list[str]]


@app.command(rich_help_panel=toc.panel("scenario"))
def scenario(
    rate_per_hour: Annotated[
        ListOpt, typer.Option(help="Cluster cost per hour, USD; comma-separated or repeated. Default 80,120,160.")
    ] = None,
    hours: Annotated[str, typer.Option(help="Provisioned hours per month.")] = "730",
    api_cost_per_task: Annotated[
        ListOpt, typer.Option(help="API cost per task, USD; comma-separated or repeated. Default 1.35,0.54.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Planning without data: monthly cluster cost at each rate, and how many API tasks cost the same.

    Example: costledger scenario --rate-per-hour 80,120,160 --hours 730 --api-cost-per-task 1.35,0.54
    """
    import duckdb

    from pipeline.base.query import jsonable, render
    from pipeline.serve.report import planning_table
    from pipeline.base.text import count

    rates = _amounts(rate_per_hour, "80,120,160", "--rate-per-hour")
    costs = _amounts(api_cost_per_task, "1.35,0.54", "--api-cost-per-task")
    if "," in hours:
        error("--hours: give one number")
        raise typer.Exit(ExitCode.USAGE)
    (h,) = _amounts([hours], "730", "--hours")
    rows = planning_table(duckdb.connect(), rates, h, costs)
    if as_json:
        out.print_json(json.dumps([{k: jsonable(v) for k, v in r.items()} for r in rows]))
        return
    names = ["rate / hour", "hours", "monthly cost", "API cost per task", "API tasks (rounded to 100)",
             "API tasks (exact)"]  # fmt: skip
    # (these rows are the seeds' published figures, where a task adds nothing on the cluster: the API's cost per task
    # is what each saves; the report's measured row states its saving per task, C - V, as such)
    table = [
        [
            usd(r["rate_per_hour_usd"], 2),
            count(r["hours"]),
            usd(r["monthly_cost_usd"], 0),
            usd(r["api_cost_per_task_usd"], 2),
            count(r["equivalent_api_tasks_rounded"]),
            f"{r['equivalent_api_tasks']:.1f}",
        ]  # fmt: skip
        for r in rows
    ]
    render(names, table, "table", 1000, out, title="Planning: cluster cost vs API tasks of the same cost")
    # the note belongs to the table: the same stream, so that a capture of both streams cannot put it inside a row
    out.print("API task counts are rounded to the nearest 100; the exact count is beside them.")


def _what_if(value: str | None, flag: str) -> Decimal | None:
    if value is None:
        return None
    (amount,) = _amounts([value], value, flag)
    return amount


_PlanMonth = Annotated[Optional[str], typer.Option(help="Month YYYY-MM. Default: the latest month in the ledger.")]
_PlanNodeMonthUsd = Annotated[
    Optional[str],
    typer.Option(
        help="What-if: the cost of one node for the month, USD (default: the month's own, else the "
        "setting planning.node_month_usd)."
    ),
]
_PlanCapacityTps = Annotated[
    Optional[str],
    typer.Option(
        help="What-if: tokens per second one node serves within the latency target (default: the "
        "month's measured capacity)."
    ),
]


#: `costledger plan --help`: each paragraph a line of its own, as the terminal wraps them
PLAN_HELP = (
    "How big a cluster for a month's demand: the month's cost at 0, 1, 2, ... nodes, the overflow on the API, beside "
    "the month as it was (today: its nodes and its real spend).\n\n"
    "Each hour's tokens on the cluster (every attempt, by its start hour) are served by n nodes up to their capacity "
    "at the latency target; the cluster's accepted tasks the tokens above it carried go to the API at the API's price "
    "of an accepted task (its accepted attempt x the API's attempts per accepted task x the invoice uplift, plus the "
    "API's review): the cluster's failed attempts are never priced on the API, and the API's own work keeps its cost "
    "at every size. Owned nodes are priced at their amortisation, reserved ones at the rate in force at the month's "
    "end, nodes beyond them at the on-demand price for the whole month (or planning.node_month_usd). What-if values "
    "change nothing in the ledger.\n\n"
    "Example: costledger plan --month 2026-10 --node-month-usd 40000 --capacity-tps 9000"
)


@app.command(rich_help_panel=toc.panel("plan"), help=PLAN_HELP)
def plan(
    month: _PlanMonth = None,
    node_month_usd: _PlanNodeMonthUsd = None,
    capacity_tps: _PlanCapacityTps = None,
    db: DbOpt = None,
    settings: SettingsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The month's cost at 0, 1, 2, ... nodes beside the month as it was (PLAN_HELP says it for --help)."""
    from pipeline.base.errors import CostledgerError
    from pipeline.serve.bridge import billed_sentences
    from pipeline.serve.planning import as_run_words, hybrid_plan, nodes_words, plan_rows, plan_sentences, size_marks
    from pipeline.base.query import jsonable, render
    from pipeline.serve.report import query, resolve_month
    from pipeline.base.text import pct

    node_price = _what_if(node_month_usd, "--node-month-usd")
    capacity = _what_if(capacity_tps, "--capacity-tps")
    con = open_read(read_settings(settings, db))
    try:
        m = resolve_month(con, month)
        rows = hybrid_plan(con, m, node_month_usd=node_price, capacity_tps=capacity)
    except CostledgerError as exc:
        error(str(exc))
        raise typer.Exit(exc.exit_code) from None
    if as_json:
        out.print_json(json.dumps([{k: jsonable(v) for k, v in r.as_row().items()} for r in rows]))
        return
    names = ["nodes", "cluster's tokens served", "cluster", "operating", "API", "review", "total", ""]
    table = [
        [
            "today" if r.scenario == "today" else str(r.nodes),
            pct(r.self_hosted_token_share),
            usd(r.cluster_cost_usd, 0),
            usd(r.operating_cost_usd, 0),
            usd(r.api_cost_usd, 0),
            usd(r.review_usd, 0),
            usd(r.total_usd, 0),
            f"as run, {as_run_words(r.nodes, r.self_hosted_token_share)}" if r.scenario == "today" else size_marks(r),
        ]
        for r in rows
    ]
    render(names, table, "table", 1000, out, title=f"Hybrid plan for {m}: the month's cost at each cluster size")
    for sentence in [*plan_sentences(rows), *billed_sentences(query(con, "cost_bridge", {"month": f"{m}-01"}))]:
        out.print(sentence, markup=False, highlight=False)
    be = _break_even(con, m)
    _bullets("What these figures rest on:", _rests_on(con, be, capacity_given=capacity is not None))
    what_if = node_price is not None or capacity is not None
    title = (
        "What to do, at the what-if values (sizes, moves and on-demand hours recomputed):"
        if what_if
        else ("What to do:")
    )
    _bullets(title, _what_to_do(con, m, be, node_price, capacity))
    plans = plan_rows(rows)
    if plans and plans[-1].nodes == 1000 and plans[-1].overflow_hours:
        out.print(f"The busiest hour needs more than {nodes_words(1000)}; the plan stops there.")


def _break_even(con, month: str) -> dict | None:  # noqa: ANN001 - a duckdb connection
    """The month's verdict as the plan's caveats and actions read it (None for a month without one)."""
    from pipeline.base.query import dict_rows

    found = dict_rows(
        con,
        "SELECT verdict_caveats, verdict_stated, nodes_in_service FROM marts.monthly_break_even "
        "WHERE month = CAST(? AS DATE)",
        [f"{month}-01"],
    )
    return found[0] if found else None


def _bullets(title: str, sentences: list[str]) -> None:
    """A titled list of sentences, nothing when there is none."""
    if sentences:
        out.print(title, markup=False, highlight=False)
        for sentence in sentences:
            out.print(f"- {sentence}", markup=False, highlight=False)


def _rests_on(con, be: dict | None, *, capacity_given: bool) -> list[str]:  # noqa: ANN001 - a duckdb connection
    """The month's caveats the plan's figures rest on too (its capacity, its logs, the API's price), in the words the
    ledger declares for them."""
    from pipeline.serve.planning import plan_caveats
    from pipeline.serve.report import declared

    meanings = {r["caveat"]: r["meaning"] for r in declared(con, "stg_ledger__caveats")}
    return plan_caveats(be["verdict_caveats"] if be else None, meanings, capacity_given=capacity_given)


def _what_to_do(
    con,  # noqa: ANN001 - a duckdb connection
    month: str,
    be: dict | None,
    node_price: Decimal | None = None,
    capacity: Decimal | None = None,
) -> list[str]:
    """At most three actions read off the month's counterfactual rows (recomputed at the what-if values, when there
    are any: every figure that reads them, or none); a verdict too close to call is said to be so."""
    from pipeline.base.query import table_exists
    from pipeline.serve.decisions import actions, counterfactual_rows
    from pipeline.serve.planning import counterfactual_at_what_ifs, gate

    close = be is not None and be["verdict_stated"] == "too_close_to_call"
    rows = (
        counterfactual_at_what_ifs(con, month, node_month_usd=node_price, capacity_tps=capacity)
        if node_price is not None or capacity is not None
        else counterfactual_rows(con, month)
    )
    latest = gate(con) if table_exists(con, "marts", "gate_verdict") else None
    state = (latest.verdict.eval_set, latest.verdict.verdict) if latest is not None else None
    return actions(rows, close, be["nodes_in_service"] if be else None, state)


@app.command(rich_help_panel=toc.panel("gate"))
def gate(
    eval_set: Annotated[
        Optional[str], typer.Option("--eval-set", help="The evaluation set. Default: the last one by name.")
    ] = None,
    db: DbOpt = None,
    settings: SettingsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Is the cluster ready? The deployment gate: an evaluation set side by side on both routes, its criteria, its
    verdict (passed, failed naming what failed, or incomplete naming what is missing).

    Load the set with `costledger ingest eval-tasks FILE` and the drills with `costledger ingest gate-checks FILE`
    (or eval-tasks/ and gate-checks/ folders of a nightly). Criteria thresholds are settings under \\[gate].

    Exit codes: 0 the gate passed; 7 it failed or is incomplete (so a CI job stops before a deployment); 1 no
    evaluation set or no ledger; 2 usage.

    Example: costledger gate --eval-set k3-gate-2026-10
    """
    from pipeline.base.errors import CostledgerError
    from pipeline.serve.planning import gate as read_gate, gate_headline
    from pipeline.base.query import jsonable

    con = open_read(read_settings(settings, db))
    try:
        g = read_gate(con, eval_set)
    except CostledgerError as exc:
        error(str(exc))
        raise typer.Exit(exc.exit_code) from None
    finally:
        con.close()
    if g is None:
        error("the ledger has no evaluation set: load eval-tasks (and gate-checks) files first")
        raise typer.Exit(ExitCode.FAILURE)
    if as_json:
        doc = {
            "eval_set": g.eval_set,
            "verdict": g.verdict.as_row(),
            "criteria": g.criteria,
            "comparison": g.comparison,
        }
        out.print_json(json.dumps(jsonable(doc)))
    else:
        _print_gate(g)
        out.print(gate_headline(g), markup=False, highlight=False)
    if g.verdict.verdict != "passed":
        raise typer.Exit(ExitCode.GATE_NOT_PASSED)


def _print_gate(g) -> None:  # type: ignore[no-untyped-def]
    from pipeline.base.query import render
    from pipeline.base.text import count, ms, pct

    names = ["category", "route", "cases", "accepted", "p95 latency", "target", "retries per task",
             "input per accepted", "of it cache hits", "output", "reasoning", "cost per accepted task"]  # fmt: skip
    table = [
        [
            r["category"],
            "API" if r["route"] == "api" else "self-hosted",
            str(r["cases"]),
            pct(r["accepted_share"]),
            ms(r["p95_latency_ms"]),
            ms(r["slo_ms"]),
            f"{r['retries_per_task']:.2f}",
            count(r["input_tokens_per_accepted_task"]),
            count(r["cache_hit_input_tokens_per_accepted_task"]),
            count(r["output_tokens_per_accepted_task"]),
            count(r["reasoning_tokens_per_accepted_task"]),
            usd(r["cost_per_accepted_task_usd"], 2),
        ]  # fmt: skip
        for r in g.comparison
    ]
    render(names, table, "table", 1000, out, title=f"Deployment gate {g.eval_set}: the same cases on both routes")
    crit = [[r.criterion, "n/a" if r.value is None else str(r.value), str(r.threshold), r.status] for r in g.criteria]
    render(["criterion", "value", "threshold", "status"], crit, "table", 1000, out, title="Criteria")
    for r in g.criteria:  # each criterion not passed: what fell short, is missing or was skipped (what would pass it)
        if r.status != "passed" and r.detail:
            out.print(f"  {r.criterion} ({r.status}): {r.detail}", markup=False, highlight=False)
