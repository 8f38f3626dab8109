"""The queries in ``sql/queries/`` (bound parameters only), and printing results for people (table) and
machines (csv, json)."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
from pathlib import Path
from typing import Any, Sequence

import duckdb
from rich.console import Console
from rich.table import Table
from rich.text import Text


QUERIES = Path(__file__).resolve().parent.parent / "sql" / "queries"


def run_query(
    con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run ``sql/queries/<name>.sql`` with bound named parameters: (column names, rows)."""
    cur = con.execute((QUERIES / f"{name}.sql").read_text(encoding="utf-8"), params or {})
    return [d[0] for d in cur.description], cur.fetchall()


def jsonable(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return str(value)  # exact: never through float
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    return value


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    return str(value)


def render(
    names: Sequence[str],
    rows: Sequence[Sequence[Any]],
    fmt: str,
    limit: int,
    console: Console,
    title: str | None = None,
) -> None:
    if fmt == "json":
        console.print_json(json.dumps([{n: jsonable(v) for n, v in zip(names, r)} for r in rows]))
        return
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(names)
        for r in rows:
            w.writerow(["" if v is None else _cell(v) for v in r])
        console.print(buf.getvalue(), end="", markup=False, highlight=False, soft_wrap=True)
        return
    # cells, headers and titles are data: Text keeps rich from reading "[red]" or "[/x]" in them as markup
    table = Table(title=Text(title) if title else None, show_lines=False)
    for n in names:
        table.add_column(Text(n), overflow="fold")
    for r in rows[:limit]:
        table.add_row(*(Text(_cell(v)) for v in r))
    console.print(table)
    if len(rows) > limit:
        console.print(f"({len(rows)} rows, {limit} shown; use --limit or --format csv)")
