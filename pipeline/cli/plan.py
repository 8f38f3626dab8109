"""Planning without data: scenario."""

from __future__ import annotations

import json
from typing import Annotated, Optional

import typer

from pipeline.cli.common import (JsonOpt, console, error, out)

app = typer.Typer(rich_help_panel="Plan")


SCENARIO_FLAGS = {"--rate-per-hour": "rates", "--hours": "hours", "--api-cost-per-task": "costs"}


@app.command(rich_help_panel="Plan", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
def scenario(
    spec: Annotated[
        Optional[list[str]],
        typer.Argument(
            metavar="[--rate-per-hour R...] [--hours H] [--api-cost-per-task C...]",
            help="Cluster cost per hour (USD, one or more; default 80 120 160), provisioned hours per month "
                 "(default 730) and API cost per task (USD, one or more; default 1.35 0.54).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Planning without data: monthly cluster cost at each rate, and how many API tasks cost the same (the seeds' table).

    Example: costledger scenario --rate-per-hour 80 120 160 --hours 730 --api-cost-per-task 1.35 0.54
    """
    values: dict[str, list[str]] = {"rates": [], "hours": [], "costs": []}
    current = None
    for token in spec or []:
        if token.startswith("--"):
            current = SCENARIO_FLAGS.get(token)
            if current is None:
                error(f"unknown option {token}; expected {', '.join(SCENARIO_FLAGS)}")
                raise typer.Exit(2)
        elif current is None:
            error(f"{token!r} must follow one of {', '.join(SCENARIO_FLAGS)}")
            raise typer.Exit(2)
        else:
            values[current].append(token)
    rate_per_hour = values["rates"] or ["80", "120", "160"]
    api_cost_per_task = values["costs"] or ["1.35", "0.54"]
    if len(values["hours"]) > 1:
        error("give one --hours value")
        raise typer.Exit(2)
    hours = (values["hours"] or ["730"])[0]
    from decimal import Decimal, InvalidOperation

    import duckdb

    from pipeline.query import render
    from pipeline.report import count, planning_table, usd

    try:
        rates = [Decimal(x) for x in rate_per_hour]
        costs = [Decimal(x) for x in api_cost_per_task]
        h = Decimal(hours)
    except InvalidOperation:
        error("rates, hours and API costs must be numbers")
        raise typer.Exit(2) from None
    if any(x <= 0 for x in rates + costs + [h]):
        error("rates, hours and API costs must be positive")
        raise typer.Exit(2)
    rows = planning_table(duckdb.connect(), rates, h, costs)
    if as_json:
        from pipeline.query import jsonable

        out.print_json(json.dumps([{k: jsonable(v) for k, v in r.items()} for r in rows]))
        return
    table = [[usd(r["rate_per_hour_usd"], 2), count(r["hours"]), usd(r["monthly_cost_usd"], 0), usd(r["api_cost_per_task_usd"], 2),
              count(r["equivalent_api_tasks_rounded"]), f"{r['equivalent_api_tasks']:.1f}"] for r in rows]
    render(["rate / hour", "hours", "monthly cost", "API cost per task", "API tasks (rounded to 100)", "API tasks (exact)"],
           table, "table", 1000, out, title="Planning: cluster cost vs API tasks of the same cost")
    console.print("API task counts rounded to the nearest 100, as the seeds round them.")
