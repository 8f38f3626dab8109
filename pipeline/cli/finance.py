"""Commands for finance: who spent what, and the month's spend as FOCUS."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal, Optional

import typer

from pipeline.base.errors import ExitCode
from pipeline.cli import toc
from pipeline.cli.common import DbOpt, SettingsOpt, console, error, open_read, out, read_settings

app = typer.Typer()  # merged into the root app; each command names its help panel

#: the columns the chargeback prints, in its order
CHARGEBACK_COLUMNS = ("route", "team", "cost_class", "amount_usd", "share_of_month", "exact_usd")


@app.command(rich_help_panel=toc.panel("chargeback"))
def chargeback(
    month: Annotated[
        Optional[str], typer.Option(help="Month YYYY-MM. Default: the latest month in the ledger.")
    ] = None,
    fmt: Annotated[Literal["table", "csv", "json"], typer.Option("--format", help="Output format.")] = "table",
    db: DbOpt = None,
    settings: SettingsOpt = None,
) -> None:
    """Who spent what: the month's whole spend on both routes by team, route and cost class, to the cent.

    The API route's cash cost (invoiced, else metered) goes to the teams by their metered cost, so an invoice's
    uplift, tax or credits fall in proportion; each cluster's fixed cost by the share of its capacity each team used,
    with the capacity nobody used as the team (idle) (or, with \\[chargeback] share_idle = true, spread over the teams
    by their tokens); review at the review rate. The cents add up to the month's spend (largest remainders).

    Example: costledger chargeback --month 2026-10 --format csv > chargeback-2026-10.csv
    """
    from pipeline.base.errors import CostledgerError
    from pipeline.base.query import dict_rows, jsonable, render
    from pipeline.base.text import pct, usd
    from pipeline.serve.report import resolve_month

    con = open_read(read_settings(settings, db))
    try:
        m = resolve_month(con, month)
    except CostledgerError as exc:
        error(str(exc))
        raise typer.Exit(exc.exit_code) from None
    rows = dict_rows(
        con,
        "SELECT * FROM marts.monthly_chargeback WHERE month = CAST(? AS DATE) ORDER BY route, amount_usd DESC, team, "
        "cost_class",
        [f"{m}-01"],
    )
    _cluster_unbilled(con, m)
    if fmt == "json":
        out.print_json(json.dumps([{c: jsonable(r[c]) for c in ("month", *CHARGEBACK_COLUMNS)} for r in rows]))
        return
    if fmt == "csv":
        render(CHARGEBACK_COLUMNS, [[r[c] for c in CHARGEBACK_COLUMNS] for r in rows], "csv", len(rows), out)
        return
    table = [[r["route"], r["team"], r["cost_class"], usd(r["amount_usd"]), pct(r["share_of_month"])] for r in rows]
    total = sum((r["amount_usd"] for r in rows), start=0)
    table.append(["", "all", "", usd(total), pct(1 if rows else None)])
    render(["route", "team", "cost class", "amount", "share"], table, "table", len(table), out,
           title=f"Chargeback for {m}: the month's spend by team")  # fmt: skip


def _cluster_unbilled(con, month: str) -> None:  # noqa: ANN001 - a duckdb connection
    """A month whose cluster served requests with none of its costs loaded (the verdict's caveat
    cluster_cost_missing): its teams are charged nothing for it, which a chargeback must not leave unsaid."""
    from pipeline.base.query import run_query

    if month in {m for (m,) in run_query(con, "cluster_unbilled_months")[1]}:
        console.print(
            f"[yellow]warning:[/] the cluster served requests in {month} but none of its costs is loaded (no cluster "
            "charges, hardware, FOCUS or operating costs): its teams are charged nothing for it until its bills are "
            "loaded",
            highlight=False,
        )


export_app = typer.Typer(
    no_args_is_help=True,
    help="The ledger's own spend in a format other tools read: `export focus` writes a month as FOCUS 1.2.",
)
app.add_typer(export_app, name="export", rich_help_panel=toc.panel("export"))


@export_app.command("focus")
def export_focus(
    month: Annotated[
        Optional[str], typer.Option(help="Month YYYY-MM. Default: the latest month in the ledger.")
    ] = None,
    out_file: Annotated[
        Optional[Path],
        typer.Option("--out", help="The file to write, .csv or .parquet. Default: focus-YYYY-MM.csv here."),
    ] = None,
    db: DbOpt = None,
    settings: SettingsOpt = None,
) -> None:
    """A month of the ledger's spend on both routes as FOCUS 1.2, the FinOps billing format.

    API usage per day, provider, model, team and token class (ConsumedQuantity in tokens, priced per million), an
    invoiced provider's tax, credits and the rest of its invoice's difference from the metered cost, each cluster's
    charges, hardware write-off and operating costs, and review. Columns of the ledger's own are x_Route, x_Team,
    x_TokenClass and x_CostClass. BilledCost (and EffectiveCost) add up to the month's spend on both routes.

    Example: costledger export focus --month 2026-10 --out focus-2026-10.parquet
    """
    from pipeline.base.errors import CostledgerError
    from pipeline.serve.focus import focus_frame, format_for, write_focus
    from pipeline.serve.report import resolve_month, with_macros

    s = read_settings(settings, db)
    con = open_read(s)
    try:
        m = resolve_month(con, month)
        target = out_file or Path(f"focus-{m}.csv")
        format_for(target)
        frame = focus_frame(with_macros(con), m, s.focus_cluster_tag_key)
    except CostledgerError as exc:
        error(str(exc))
        raise typer.Exit(exc.exit_code) from None
    except ValueError as exc:
        error(str(exc))
        raise typer.Exit(ExitCode.USAGE) from None
    finally:
        con.close()
    try:
        write_focus(frame, target)
    except OSError as exc:
        error(f"cannot write {target}: {exc.strerror or exc}")
        raise typer.Exit(ExitCode.FAILURE) from None
    total = frame["BilledCost"].sum() if frame.height else 0
    out.print(f"wrote {target}: {frame.height:,} FOCUS 1.2 rows for {m}, BilledCost {total:,.2f} USD", highlight=False)


@app.command(rich_help_panel=toc.panel("explain"))
def explain(
    column: Annotated[
        str, typer.Argument(help="MART.COLUMN, e.g. marts.monthly_break_even.break_even_accepted_tasks.")
    ],
    month: Annotated[
        Optional[str], typer.Option(help="Month YYYY-MM. Default: the latest month in the ledger.")
    ] = None,
    key: Annotated[
        Optional[list[str]],
        typer.Option("--key", help="NAME=VALUE: the row of a mart with more than one a month (cluster_id=...)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the explanation as JSON.")] = False,
    db: DbOpt = None,
    settings: SettingsOpt = None,
) -> None:
    """Where a figure comes from: its meaning, its formula with the month's own values, and the landing files behind
    each value (path, SHA-256, rows, and the lines when they are few).

    Any other column of a mart with a month: its declared meaning and its value (docs/mart-columns.md lists them).

    Example: costledger explain marts.monthly_break_even.break_even_accepted_tasks --month 2026-10
    """
    from pipeline.base.errors import CostledgerError
    from pipeline.base.query import jsonable
    from pipeline.serve.explain import definition, explain as explain_column, explanation_json, explanation_lines
    from pipeline.serve.report import resolve_month

    pairs = {}
    for item in key or []:
        name, sep, value = item.partition("=")
        if not sep or not name:
            error(f"--key {item!r}: give NAME=VALUE, e.g. cluster_id=k3-b200-01")
            raise typer.Exit(ExitCode.USAGE)
        pairs[name.strip()] = value.strip()
    try:
        definition(column)  # an unknown column is told before the ledger is opened
    except CostledgerError as exc:
        error(str(exc))
        raise typer.Exit(exc.exit_code) from None
    con = open_read(read_settings(settings, db))
    try:
        e = explain_column(con, column, resolve_month(con, month), pairs)
    except CostledgerError as exc:
        error(str(exc))
        raise typer.Exit(exc.exit_code) from None
    finally:
        con.close()
    if as_json:
        out.print_json(json.dumps(explanation_json(e), default=jsonable))
        return
    for line in explanation_lines(e):
        out.print(line, highlight=False, markup=False, soft_wrap=True)
