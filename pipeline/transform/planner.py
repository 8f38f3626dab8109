"""The one planner of incremental builds, for both engines: from each incremental model's kind (its ``-- incremental:``
strategy) and its fingerprint (``pipeline.transform.state``), what a build recomputes, and the slices as conditions
on the rows. The DuckDB engine (``pipeline.transform.incremental``) and the Spark engine
(``pipeline.transform.spark.going_on``) only run a model's statement over the slice named here and put its rows in
place of the slice's earlier ones.

A model whose fingerprint changed (or without earlier rows, or state) is rebuilt in full, and so is every model that
reads it (``decide``, with the reason in words). Every other incremental model goes on by its strategy:

``append``  the rows of the lake files not yet folded in (``in_files``).
``keys``    the rows of the keys (the first column of its unique key) that have new input rows: the append model's
            new rows, and the new files of the raw tables its other inputs read; a key's rows come from that key's
            input rows alone.
``months``  the touched months (``month_rows``): a month a new row touches (the append model's ``-- months_touched:``
            expressions, ``months_sql``), or a recomputed key has (or had) a row in: the append model's rows of the
            key, and the key's earlier rows in a keys model. ``lookback COLUMN`` also reads the rows of the month
            before whose COLUMN reaches into a touched month.
``days``    the touched days (``day_rows``): every day from the first to the last a new row touches (the append model's
            ``-- days_touched:``, ``day_pairs_sql`` and ``touched_days``), and the days of every row of a recomputed
            key. ``lookback COLUMN`` also reads the earlier rows whose COLUMN reaches into a touched day; a ``within``
            input reads the rows between the least and the greatest value of a day input's column.

Touching more months or days than needed recomputes them to the same rows: the rules may be generous, never short.
The conditions are SQL in DuckDB's dialect (the Spark engine translates them) made from file hashes, dates and the
models' own headers, never from user input.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Callable

import duckdb

from pipeline.base.models import Input, Model, ModelHeaderError
from pipeline.transform.state import STATE_DDL, State, changes, input_kinds


@dataclass(kw_only=True)
class Decisions:
    """What a build recomputes in full: every incremental model not named in ``rebuilt`` goes on by its strategy."""

    states: dict[str, State]
    """The state of every incremental model and every model they read, as the build leaves it."""
    rebuilt: dict[str, str]
    """The incremental models rebuilt in full, and why, in words."""
    incremental: set[str]
    """Every incremental model's name."""


def decide(
    con: duckdb.DuckDBPyConnection,
    models: list[Model],
    *,
    before: dict[str, State] | None = None,
    present: Callable[[str], bool] | None = None,
) -> Decisions:
    """Which incremental models are rebuilt in full and why (their headers checked first). ``before``: the last
    build's states (default: the ledger's ``meta.build_state``); ``present``: whether a model's earlier rows are there
    (default: its table)."""
    check(models)
    for stmt in STATE_DDL:
        con.execute(stmt)
    incremental = {m.qualified for m in models if m.incremental}
    now, why = changes(con, models, incremental, before=before, present=present)
    return Decisions(
        states=now,
        rebuilt={name: reason for name, reason in why.items() if name in incremental},
        incremental=incremental,
    )


def check(models: list[Model]) -> None:
    """The incremental models' headers against what their strategies need across models (a file's own lines are
    checked as it is read): every input reads a model; an append model's inputs read raw tables (whose new lake files
    it appends); a keys model reads exactly one append model (whose new rows give its keys). Raises
    ``ModelHeaderError`` naming the file, before anything is built, on either engine."""
    by_name = {m.qualified: m for m in models}
    for m in models:
        if not m.incremental:
            continue
        for i in m.inputs:
            if i.source not in by_name:
                raise ModelHeaderError(f"{m.path}:{i.line}: input {i.name} reads {i.source}, which is not a model")
        if m.incremental == "append" and not input_kinds(m.inputs, by_name):
            raise ModelHeaderError(
                f"{m.path}: an append model's inputs must read raw tables (the lake files whose new ones it appends)"
            )
        appended = [i for i in m.inputs if by_name[i.source].incremental == "append"]
        if m.incremental == "keys" and len(appended) != 1:
            raise ModelHeaderError(
                f"{m.path}: a keys model reads exactly one append model (after whose batches it is recomputed); it "
                f"reads {len(appended)}"
            )


def lake_files(con: duckdb.DuckDBPyConnection, kinds: set[str]) -> list[tuple[str, str, int]]:
    """(file hash, kind, rows) of every loaded lake file of these kinds, in load order."""
    rows = con.execute(
        "SELECT file_hash, kind, rows_loaded FROM meta.loaded_files "
        "WHERE kind IN (SELECT unnest(?)) AND lake_file IS NOT NULL ORDER BY load_seq",
        [sorted(kinds)],
    ).fetchall()
    return [(h, k, n) for h, k, n in rows]


def literals(values: list[str]) -> str:
    """SQL string literals of values this program made (hex file hashes, ISO dates): never user input."""
    for v in values:
        if not all(c in "0123456789abcdef-" for c in v):
            raise ValueError(f"not a hash or date: {v!r}")
    return ", ".join(f"'{v}'" for v in values)


def in_files(hashes: list[str]) -> str:
    """``source_file_hash IN (the files)``, or ``false`` for none: the rows of those lake files."""
    return f"source_file_hash IN ({literals(hashes)})" if hashes else "false"


def date_filter(dates: list[dt.date], column: str = "month") -> str:
    """``column IN (the dates)``: the month or day partitions to delete and recompute."""
    if not dates:
        return "false"
    return f"{column} IN ({', '.join(f'DATE {literals([d.isoformat()])}' for d in dates)})"


def _day_ranges(days: list[dt.date]) -> list[tuple[dt.date, dt.date]]:
    """Sorted days as [first, after last) runs of consecutive days."""
    ranges: list[tuple[dt.date, dt.date]] = []
    for d in sorted(days):
        if ranges and ranges[-1][1] == d:
            ranges[-1] = (ranges[-1][0], d + dt.timedelta(days=1))
        else:
            ranges.append((d, d + dt.timedelta(days=1)))
    return ranges


def _timestamp(d: dt.date) -> str:
    return f"TIMESTAMP {literals([d.isoformat()])}"


def day_rows(column: str, days: list[dt.date], lookback: str | None) -> str:
    """The rows whose ``column`` falls on one of the days (as ranges, which zone maps prune), and with
    ``lookback`` the earlier rows whose ``lookback`` column reaches into a run of those days."""
    ranges = _day_ranges(days)
    if not ranges:
        return "false"
    terms = [f"({column} >= {_timestamp(a)} AND {column} < {_timestamp(b)})" for a, b in ranges]
    if lookback:
        terms += [f"({column} < {_timestamp(a)} AND {lookback} > {_timestamp(a)})" for a, _ in ranges]
    return " OR ".join(terms)


def _previous_month(m: dt.date) -> dt.date:
    return (m.replace(day=1) - dt.timedelta(days=1)).replace(day=1)


def month_rows(i: Input, months: list[dt.date]) -> str:
    """The rows of a months model's input in the touched months, and with ``lookback`` the rows of the month before
    a touched month whose lookback column reaches into the first touched month."""
    where = date_filter(months)
    if i.lookback and months:
        before = sorted({_previous_month(x) for x in months} - set(months))
        if before:
            where += f" OR ({date_filter(before)} AND {i.lookback} > {_timestamp(min(months))})"
    return where


def months_sql(append: Model, rows: str) -> str | None:
    """The months the append model's rows matching ``rows`` touch (its ``-- months_touched:`` expressions), one per
    row of the result; None when it states none."""
    if not append.months_touched:
        return None
    return f"SELECT DISTINCT unnest([{', '.join(append.months_touched)}]) FROM {append.qualified} WHERE {rows}"


def day_pairs_sql(append: Model, rows: str) -> str | None:
    """The (first, last) days of the append model's rows matching ``rows`` (its ``-- days_touched:``), distinct; None
    when it states none. ``touched_days`` turns them into days."""
    if not append.days_touched:
        return None
    first, last = append.days_touched
    return f"SELECT DISTINCT CAST({first} AS DATE), CAST({last} AS DATE) FROM {append.qualified} WHERE {rows}"


def touched_days(rows: list[tuple[dt.date | None, dt.date | None]]) -> list[dt.date]:
    """Every day from the first to the last of each (first, last) pair (a last day before the first, or none, counts
    as the first; a pair without a first day touches none)."""
    days: set[dt.date] = set()
    for first, last in rows:
        if first is None:
            continue
        end = max(first, last or first)
        days.update(first + dt.timedelta(days=n) for n in range((end - first).days + 1))
    return sorted(days)
