"""Planning without data: scenario."""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Annotated, Optional

import typer

from pipeline.cli import toc
from pipeline.cli.common import EXIT_USAGE, JsonOpt, console, error, out

app = typer.Typer()  # merged into the root app; each command names its help panel


def _amounts(values: list[str] | None, default: str, flag: str) -> list[Decimal]:
    """Positive decimals from repeated flags and comma-separated lists (``--x 80,120 --x 160``)."""
    texts = [t.strip() for v in (values or [default]) for t in v.split(",") if t.strip()]
    try:
        amounts = [Decimal(t) for t in texts]
    except InvalidOperation:
        error(f"{flag}: {', '.join(texts)} is not a list of numbers")
        raise typer.Exit(EXIT_USAGE) from None
    if not amounts or any(not a.is_finite() or a <= 0 for a in amounts):
        error(f"{flag}: every value must be a positive number")
        raise typer.Exit(EXIT_USAGE)
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

    from pipeline.query import jsonable, render
    from pipeline.report import count, planning_table, usd

    rates = _amounts(rate_per_hour, "80,120,160", "--rate-per-hour")
    costs = _amounts(api_cost_per_task, "1.35,0.54", "--api-cost-per-task")
    if "," in hours:
        error("--hours: give one number")
        raise typer.Exit(EXIT_USAGE)
    (h,) = _amounts([hours], "730", "--hours")
    rows = planning_table(duckdb.connect(), rates, h, costs)
    if as_json:
        out.print_json(json.dumps([{k: jsonable(v) for k, v in r.items()} for r in rows]))
        return
    names = ["rate / hour", "hours", "monthly cost", "API cost per task", "API tasks (rounded to 100)",
             "API tasks (exact)"]  # fmt: skip
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
    console.print("API task counts rounded to the nearest 100, as the seeds round them.")
