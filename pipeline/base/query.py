"""The queries in ``sql/queries/`` (bound parameters only), and printing results for people (table) and
machines (csv, json)."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
from typing import Any, Iterable, Sequence

import duckdb
from rich.console import Console
from rich.table import Table
from rich.text import Text

from pipeline.base.models import SQL_DIR
from pipeline.base.text import printable


QUERIES = SQL_DIR / "queries"


def run_query(
    con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run ``sql/queries/<name>.sql`` with bound named parameters: (column names, rows)."""
    cur = con.execute((QUERIES / f"{name}.sql").read_text(encoding="utf-8"), params or {})
    return [d[0] for d in cur.description], cur.fetchall()


def dict_rows(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> list[dict[str, Any]]:
    """Run ``sql`` with bound ``params``: its rows as dicts by column name."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def table_exists(con: duckdb.DuckDBPyConnection, schema: str, table: str, kind: str = "TABLE") -> bool:
    """Whether the ledger has ``schema.table`` as a table (``kind`` "VIEW": as a view)."""
    catalog = "duckdb_tables() WHERE table_name" if kind == "TABLE" else "duckdb_views() WHERE view_name"
    found = con.execute(f"SELECT count(*) FROM {catalog} = ? AND schema_name = ?", [table, schema]).fetchall()
    return bool(found[0][0])


def jsonable(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return str(value)  # exact: never through float
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]  # lists and structs (e.g. monthly_break_even.verdict_sensitivity)
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    return value


#: a spreadsheet runs a cell that starts with one of these as a formula (CSV injection)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: the same, as a regular expression (for a whole column of text at once)
FORMULA_PATTERN = "^[=+\\-@\t\r]"


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(jsonable(value))
    return str(value)


def csv_cell(value: Any, spreadsheet_safe: bool) -> str:
    """A CSV cell: exact, except that text a spreadsheet would run as a formula gets a leading ``'``."""
    if value is None:
        return ""
    text = _cell(value)
    if spreadsheet_safe and isinstance(value, str) and text.startswith(_FORMULA_START):
        return "'" + text
    return text


def render(
    names: Sequence[str],
    rows: Sequence[Sequence[Any]],
    fmt: str,
    limit: int,
    console: Console,
    title: str | None = None,
) -> None:
    stream(names, [rows], fmt, limit, console=console, title=title)


def stream(
    names: Sequence[str],
    batches: Iterable[Sequence[Sequence[Any]]],
    fmt: str,
    limit: int,
    *,
    console: Console,
    title: str | None = None,
    spreadsheet_safe: bool = True,
) -> None:
    """Print a result that arrives in batches: csv and json written as they come (constant memory), a table of
    the first ``limit`` rows and the count of the rest. Control characters are escaped where the output is a
    terminal (csv and json to a file or pipe stay exact; json escapes them anyway)."""
    sink = console.file
    if fmt == "json":
        sink.write("[")
        first = True
        for batch in batches:
            for r in batch:
                sink.write(("\n" if first else ",\n") + json.dumps({n: jsonable(v) for n, v in zip(names, r)}))
                first = False
        sink.write("\n]\n" if not first else "]\n")
        sink.flush()
        return
    if fmt == "csv":
        clean = printable if console.is_terminal else str
        w = csv.writer(sink, lineterminator="\n")
        w.writerow([clean(n) for n in names])
        for batch in batches:
            w.writerows([clean(csv_cell(v, spreadsheet_safe)) for v in r] for r in batch)
        sink.flush()
        return
    shown: list[list[str]] = []
    total = 0
    for batch in batches:
        shown += [[printable(_cell(v)) for v in r] for r in batch[: max(0, limit - total)]]
        total += len(batch)
    heads = [printable(n) for n in names]
    # a grid needs each column as wide as its header or its widest cell, plus borders
    needed = sum(max([len(h)] + [len(r[i]) for r in shown]) + 3 for i, h in enumerate(heads)) + 1
    if needed > console.width and len(heads) > 1:
        _records(heads, shown, console, title)
    else:
        # cells, headers and titles are data: Text keeps rich from reading "[red]" or "[/x]" in them as markup
        table = Table(title=Text(printable(title)) if title else None, show_lines=False)
        for h in heads:
            table.add_column(Text(h), overflow="fold")
        for r in shown:
            table.add_row(*(Text(c) for c in r))
        console.print(table)
    if total > limit:
        console.print(f"({total} rows, {limit} shown; use --limit or --format csv)")


def _records(heads: list[str], rows: list[list[str]], console: Console, title: str | None) -> None:
    """A result too wide for the terminal, one record per block: each column's name beside its value (like the duckdb
    CLI's line mode), so that no value is folded into a column two characters wide."""
    if title:
        console.print(Text(printable(title)))
    width = max(len(h) for h in heads)
    for i, r in enumerate(rows, 1):
        console.print(Text(f"-- row {i} " + "-" * max(0, min(console.width, 80) - 10 - len(str(i)))))
        for h, c in zip(heads, r):
            console.print(Text(f"{h.rjust(width)} = {c}"), soft_wrap=True)
