"""Commands for finance: who spent what."""

from __future__ import annotations

import json
from typing import Annotated, Literal, Optional

import typer

from pipeline.cli import toc
from pipeline.cli.common import DbOpt, SettingsOpt, error, open_read, out, read_settings

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
    with the capacity nobody used as the team (idle) (or, with [chargeback] share_idle = true, spread over the teams
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
