"""Incremental request models: cost grows with the new data, not with all history.

Three strategies, chosen by a model's ``-- incremental:`` header:

``append``  (int_requests_priced) rows of the request lake files loaded since the last
            build are appended, in batches of at most ``batch_rows`` rows (memory stays
            bounded however much history a first build meets).
``tasks``   (int_tasks_resolved) after each batch, the tasks with new attempts (or, at the
            end, new decisions in outcome files) are deleted and recomputed from all their
            attempts.
``months``  (the monthly request aggregates) the months touched by the run are deleted
            and recomputed; other months are not read.

The models read their inputs through the views of schema ``scoped``, which this module
defines for each step: unfiltered on a full build, restricted to the new files, the
touched tasks or the touched months on an incremental one:

======================== =========================================================
``scoped.requests_new``        staging requests of the batch's lake files
``scoped.requests_of_tasks``   priced requests of the tasks being recomputed (TASK_COLUMNS)
``scoped.outcomes_of_tasks``   staging outcomes of those tasks
``scoped.requests_of_months``  priced requests of the touched months
``scoped.requests_near_months`` ... and of the month before each (intervals run on)
``scoped.tasks_of_months``     resolved tasks of the touched months
======================== =========================================================

A build is full (tables emptied, every file new) when there is no previous state or
its fingerprint changed: prices, settings or the SQL of any of these models. A month
is touched when a new request starts in it, a new request's interval ends in it, or
a recomputed task has (or had) an attempt or its home in it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from typing import Callable

import duckdb

from pipeline.models import SCOPED_SOURCES, Model, sql_fingerprint


#: The kinds whose lake files are read incrementally (only the new files, once built).
KINDS = ("requests", "outcomes")


def built_files(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The request and outcome files the incremental models have already read."""
    if not _table_exists(con, "meta.built_files"):
        return set()
    return {h for (h,) in con.execute("SELECT file_hash FROM meta.built_files").fetchall()}


#: The columns of ``scoped.requests_of_tasks`` (all the task model reads of an attempt).
TASK_COLUMNS = ("task_id", "request_id", "attempt", "started_at", "route", "month", "latency_ms", "status", "accepted",
                "metered_cost_usd", "api_equivalent_cost_usd")

STATE_DDL = [
    "CREATE SCHEMA IF NOT EXISTS scoped",
    "CREATE TABLE IF NOT EXISTS meta.build_state (fingerprint VARCHAR NOT NULL)",
    "COMMENT ON TABLE meta.build_state IS 'Fingerprint (prices, settings, SQL of the incremental models) of the state the incremental request models were built from; a different one makes the next build full.'",
    "CREATE TABLE IF NOT EXISTS meta.built_files (file_hash VARCHAR NOT NULL, kind VARCHAR NOT NULL)",
    "COMMENT ON TABLE meta.built_files IS 'Request and outcome files already folded into the incremental request models.'",
]


def _literals(values: list[str]) -> str:
    """SQL string literals of values this program made (hex file hashes, ISO dates): never user input."""
    for v in values:
        if not all(c in "0123456789abcdef-" for c in v):
            raise ValueError(f"not a hash or date: {v!r}")
    return ", ".join(f"'{v}'" for v in values)


def _month_filter(months: list[dt.date]) -> str:
    if not months:
        return "false"
    return f"month IN ({', '.join(f'DATE {_literals([m.isoformat()])}' for m in months)})"


@dataclass
class Plan:
    full: bool
    fingerprint: str
    batches: list[list[str]]
    """Request lake files (hashes) per batch, in load order."""
    outcome_files: list[str]
    touched: set[dt.date] = field(default_factory=set)
    """Months whose month-partitioned rows are recomputed (incremental builds; a full build recomputes all)."""

    @property
    def months(self) -> list[dt.date]:
        return sorted(self.touched)


def fingerprint(con: duckdb.DuckDBPyConnection, models: list["Model"]) -> str:
    """Hash of what the incremental models' rows depend on besides the files: their SQL (one fingerprint per
    model over its parse tree, so a comment or layout edit changes nothing), the prices and the settings their
    SQL names."""
    h = hashlib.sha256()
    bodies = ""
    for m in models:
        if m.incremental or m.qualified in ("staging.stg_ledger__requests", "staging.stg_ledger__outcomes"):
            h.update(m.qualified.encode() + b"\0" + sql_fingerprint(con, m.body).encode() + b"\0")
            bodies += m.body
    prices = "not built"
    if _table_exists(con, "intermediate.int_prices_effective"):
        prices = con.execute("SELECT coalesce(md5(string_agg(CAST(p AS VARCHAR), '|' ORDER BY CAST(p AS VARCHAR))), '') "
                             "FROM intermediate.int_prices_effective AS p").fetchall()[0][0]  # type: ignore[index]
    h.update(prices.encode())
    for key, value in con.execute("SELECT key, value FROM meta.settings ORDER BY key, value").fetchall():
        if key in bodies:
            h.update(f"{key}={value}\0".encode())
    return h.hexdigest()[:32]


def _table_exists(con: duckdb.DuckDBPyConnection, qualified: str) -> bool:
    schema, name = qualified.split(".")
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?",
                            [schema, name]).fetchall()[0][0])  # type: ignore[index]


def plan(con: duckdb.DuckDBPyConnection, models: list["Model"], batch_rows: int) -> Plan:
    """Full or incremental, and the new files in batches."""
    for stmt in STATE_DDL:
        con.execute(stmt)
    fp = fingerprint(con, models)
    previous = [f for (f,) in con.execute("SELECT fingerprint FROM meta.build_state").fetchall()]
    full = previous != [fp] or not all(_table_exists(con, m.qualified) for m in models if m.incremental)
    if full:
        con.execute("DELETE FROM meta.built_files")
    new = con.execute(
        "SELECT l.file_hash, l.kind, l.rows_loaded FROM meta.loaded_files AS l "
        "WHERE l.kind IN ('requests', 'outcomes') AND l.lake_file IS NOT NULL "
        "AND l.file_hash NOT IN (SELECT file_hash FROM meta.built_files) ORDER BY l.load_seq"
    ).fetchall()
    batches: list[list[str]] = []
    size = batch_rows
    for file_hash, kind, rows in new:
        if kind != "requests":
            continue
        if size + rows > batch_rows and (not batches or batches[-1]):
            batches.append([])
            size = 0
        batches[-1].append(file_hash)
        size += rows
    outcome_files = [f for f, kind, _ in new if kind == "outcomes"]
    if outcome_files and not batches:
        batches.append([])
    return Plan(full, fp, batches, outcome_files)


def _define(con: duckdb.DuckDBPyConnection, name: str, body: str) -> None:
    con.execute(f"CREATE OR REPLACE VIEW scoped.{name} AS {body}")


def run_request_batches(con: duckdb.DuckDBPyConnection, p: Plan, priced: "Model", tasks: "Model",
                        run: Callable[["Model", str], None], audit: Callable[["Model", str], None],
                        progress: Callable[[str], None] | None = None) -> None:
    """Append the new files' priced rows and recompute their tasks, batch by batch; collect touched months."""
    con.execute("CREATE OR REPLACE TABLE scoped.build_tasks (task_id VARCHAR)")
    if p.full:
        # empty tables of the right types first: the models over inputs with no rows
        _define(con, "requests_new", "SELECT * FROM staging.stg_ledger__requests WHERE false")
        _define(con, "outcomes_of_tasks", "SELECT * FROM staging.stg_ledger__outcomes WHERE false")
        run(priced, f"CREATE OR REPLACE TABLE {priced.qualified} AS\n{priced.body}")
        _define(con, "requests_of_tasks", f"SELECT {', '.join(TASK_COLUMNS)} FROM intermediate.int_requests_priced WHERE false")
        run(tasks, f"CREATE OR REPLACE TABLE {tasks.qualified} AS\n{tasks.body}")
    for i, files in enumerate(p.batches):
        last = i == len(p.batches) - 1
        batch = f"source_file_hash IN ({_literals(files)})" if files else "false"
        _define(con, "requests_new", f"SELECT * FROM staging.stg_ledger__requests WHERE {batch}")
        run(priced, f"INSERT INTO {priced.qualified}\n{priced.body}")
        audit(priced, batch)
        # the first batch of a full build: the tables hold just this batch, every row is one of its tasks
        only_batch = p.full and i == 0
        if only_batch:
            _define(con, "requests_of_tasks", f"SELECT {', '.join(TASK_COLUMNS)} FROM intermediate.int_requests_priced")
            _define(con, "outcomes_of_tasks", "SELECT * FROM staging.stg_ledger__outcomes")
            run(tasks, f"INSERT INTO {tasks.qualified}\n{tasks.body}")
            audit(tasks, "true")
        else:
            con.execute("DELETE FROM scoped.build_tasks")
            con.execute(f"INSERT INTO scoped.build_tasks SELECT DISTINCT task_id FROM {priced.qualified} WHERE {batch}")
            if last and p.outcome_files:
                con.execute(f"INSERT INTO scoped.build_tasks SELECT DISTINCT task_id FROM raw.outcomes "
                            f"WHERE source_file_hash IN ({_literals(p.outcome_files)}) "
                            "EXCEPT SELECT task_id FROM scoped.build_tasks")
            in_tasks = "task_id IN (SELECT task_id FROM scoped.build_tasks)"
            # the touched tasks' attempts, with the columns the task model reads, collected once: the batch's own rows
            # (its row groups, found by their min/max), and earlier attempts found by one pass over task_id alone
            # whose rows are then fetched by row id
            cols = ", ".join(TASK_COLUMNS)
            con.execute(f"CREATE OR REPLACE TEMP TABLE touched_rowids AS SELECT rowid AS rid FROM {priced.qualified} "
                        f"WHERE {in_tasks} AND NOT ({batch})")
            con.execute(f"CREATE OR REPLACE TABLE scoped.requests_of_tasks_rows AS "
                        f"SELECT {cols} FROM {priced.qualified} WHERE {batch} UNION ALL "
                        f"SELECT {cols} FROM {priced.qualified} WHERE rowid IN (SELECT rid FROM touched_rowids)")
            _define(con, "requests_of_tasks", "SELECT * FROM scoped.requests_of_tasks_rows")
            _define(con, "outcomes_of_tasks", f"SELECT * FROM staging.stg_ledger__outcomes WHERE {in_tasks}")
            # the touched tasks' rows are replaced (the delete also yields the months the old rows belonged to)
            old_months = con.execute(f"WITH d AS (DELETE FROM {tasks.qualified} WHERE {in_tasks} RETURNING month) "
                                     "SELECT DISTINCT month FROM d").fetchall()
            run(tasks, f"INSERT INTO {tasks.qualified}\n{tasks.body}")
            audit(tasks, in_tasks)
            if not p.full:
                # months the batch touches: its requests' start and end, the old and new home of its tasks,
                # every attempt of them
                p.touched.update(m for (m,) in old_months)
                for sql in (
                    f"SELECT DISTINCT unnest([month, CAST(date_trunc('month', ended_at - INTERVAL 1 MICROSECOND) AS DATE)]) "
                    f"FROM {priced.qualified} WHERE {batch}",
                    "SELECT DISTINCT month FROM scoped.requests_of_tasks_rows",
                ):
                    p.touched.update(m for (m,) in con.execute(sql).fetchall() if m is not None)
        done = files + (p.outcome_files if last else [])
        if done:
            con.execute(f"INSERT INTO meta.built_files SELECT file_hash, kind FROM meta.loaded_files "
                        f"WHERE file_hash IN ({_literals(done)})")
        if progress:
            progress(f"{priced.qualified} + {tasks.qualified}: batch {i + 1}/{len(p.batches)} ({len(files)} file(s))")
    _define(con, "requests_of_tasks", f"SELECT {', '.join(TASK_COLUMNS)} FROM intermediate.int_requests_priced WHERE false")
    for scratch in ("scoped.requests_of_tasks_rows", "touched_rowids"):
        con.execute(f"DROP TABLE IF EXISTS {scratch}")
    con.execute("DELETE FROM meta.build_state")
    con.execute("INSERT INTO meta.build_state VALUES (?)", [p.fingerprint])
    months = p.months
    if p.full:
        for name, source in SCOPED_SOURCES.items():
            if name not in ("requests_new", "requests_of_tasks", "outcomes_of_tasks"):
                _define(con, name, f"SELECT * FROM {source}")
    else:
        before = sorted({_previous_month(m) for m in months} - set(months))
        near = f"{_month_filter(months)}"
        if before:
            near += (f" OR ({_month_filter(before)} AND ended_at > "
                     f"TIMESTAMP {_literals([months[0].isoformat()])})")
        _define(con, "requests_of_months", f"SELECT * FROM intermediate.int_requests_priced WHERE {_month_filter(months)}")
        _define(con, "requests_near_months", f"SELECT * FROM intermediate.int_requests_priced WHERE {near}")
        _define(con, "tasks_of_months", f"SELECT * FROM intermediate.int_tasks_resolved WHERE {_month_filter(months)}")


def _previous_month(m: dt.date) -> dt.date:
    return (m.replace(day=1) - dt.timedelta(days=1)).replace(day=1)


def run_months(con: duckdb.DuckDBPyConnection, p: Plan, model: "Model", run: Callable[["Model", str], None],
               audit: Callable[["Model", str], None]) -> None:
    """Recompute a month-partitioned model: whole on a full build, else only the touched months."""
    if p.full or not _table_exists(con, model.qualified):
        run(model, f"CREATE OR REPLACE TABLE {model.qualified} AS\n{model.body}")
        audit(model, "true")
        return
    months = _month_filter(p.months)
    run(model, f"DELETE FROM {model.qualified} WHERE {months}")
    if p.months:
        run(model, f"INSERT INTO {model.qualified} SELECT * FROM (\n{model.body}\n) WHERE {months}")
    audit(model, months)
