"""Running the SQL models in ``sql/`` (staging -> intermediate -> marts) and their audits.

Each model file holds one SELECT and a header of ``-- key: value`` lines:

``grain``         what one row is (documentation, shown in the table comment)
``materialized``  ``view`` or ``table``
``unique_key``    the grain's columns; an audit checks they are unique
``description``   the table comment
``column NAME``   the column comment (``COMMENT ON COLUMN``)
``published``     ``yes`` (the default) copies the table into the published file; ``no`` keeps a large
                  request-level table out of it; ``view`` publishes the model as a view over its inputs
``key_enforced_by`` the grain is guaranteed upstream (the ingest's key index): no grain audit,
                  which would re-read all history every night
``incremental``   ``append``, ``keys``, ``months`` or ``days``: built from new data only (see
                  ``pipeline/transform/incremental.py``)
``input NAME``    an incremental model's input: ``SCHEMA.MODEL [(COLUMNS)] [, day COLUMN]
                  [, lookback COLUMN]``, read as the view ``scoped.NAME`` that the strategy
                  restricts to what is new
``months_touched`` an append model's SQL expressions for the months a new row touches
``days_touched``  an append model's two SQL expressions: the first and last day a new row touches

Models run in dependency order (found from the ``schema.model`` names each file
mentions), all in one transaction with their audits: a build whose audit fails
is rolled back and the previous tables stay as they were.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import duckdb

from pipeline.transform import incremental
from pipeline.storage import lake
from pipeline.base.models import LAYERS, SQL_DIR, Model, define_macros, discover, persistent_macro_statements
from pipeline.base.faults import crashpoint
from pipeline.storage.catalog import init_ledger, raw_view_statements, table_columns
from pipeline.base.settings import Settings
from pipeline.base.errors import CostledgerError
from pipeline.base.query import table_exists
from schemas.ddl import sql_string

if TYPE_CHECKING:
    from pipeline.storage.store import Store


class AuditFailed(CostledgerError, RuntimeError):
    """A model broke its grain or an audit query returned rows; the build was rolled back."""


class ModelFailed(CostledgerError, RuntimeError):
    """DuckDB could not build a model (SQL error, out of memory, ...); the build was rolled back."""


def grain_audit_sql(model: Model, where: str = "true", rows: str | None = None) -> str:
    """A query for one duplicated grain among the model's rows matching ``where`` (of the table ``rows`` if given:
    rows about to be inserted into the model)."""
    keys = ", ".join(model.unique_key)
    return (
        f"SELECT {keys}, count(*) AS n FROM {rows or model.qualified} WHERE {where} "
        "GROUP BY ALL HAVING count(*) > 1 LIMIT 1"
    )


def write_settings(con: duckdb.DuckDBPyConnection, settings: Settings) -> None:
    con.execute("DELETE FROM meta.settings")
    con.executemany("INSERT INTO meta.settings VALUES (?, ?)", settings.sql_rows())


@dataclass
class BuildResult:
    models: int
    audits: int
    seconds: float
    timings: list[tuple[str, float]]
    months_changed: list[str] = field(default_factory=list)


def month_fingerprints(con: duckdb.DuckDBPyConnection, models: list[Model]) -> dict[str, str]:
    """Per month, a fingerprint of every row of every mart with a ``month`` column (the marts are those
    discovered in ``sql/marts``): months whose fingerprint changes were restated."""
    marts = [m.qualified for m in models if m.layer == "marts"]
    present = {
        f"marts.{t}"
        for (t,) in con.execute(
            "SELECT table_name FROM duckdb_columns() WHERE schema_name = 'marts' AND column_name = 'month' "
            "AND database_name = current_database()"
        ).fetchall()
    }
    parts = [f"SELECT month, CAST(t AS VARCHAR) AS row_text FROM {name} AS t" for name in marts if name in present]
    if not parts:
        return {}
    return dict(
        con.execute(
            "SELECT CAST(month AS VARCHAR), md5(string_agg(row_text, '|' ORDER BY row_text)) FROM ("
            + " UNION ALL ".join(parts)
            + ") GROUP BY month"
        ).fetchall()
    )


def build_result(
    con: duckdb.DuckDBPyConnection,
    models: list[Model],
    before: dict[str, str],
    run: tuple[float, int, list[tuple[str, float]]],
) -> BuildResult:
    """What a committed build did: ``run`` is its start (perf_counter), audits and timings; the months changed are
    those whose marts' fingerprint differs from ``before`` (``month_fingerprints`` taken before the build)."""
    t0, n_audits, timings = run
    after = month_fingerprints(con, models)
    changed = sorted(m for m in set(before) | set(after) if before.get(m) != after.get(m))
    return BuildResult(len(models), n_audits, time.perf_counter() - t0, timings, changed)


def _check_column_docs(con: duckdb.DuckDBPyConnection, m: Model, sql_dir: Path) -> None:
    """A ``-- column NAME:`` comment must name a column the model has (else: the file and line)."""
    have = table_columns(con, m.qualified)
    for col, line in m.column_lines.items():
        if col not in have:
            raise ModelFailed(
                f"build rolled back: {m.path.relative_to(sql_dir.parent)}:{line}: the comment names "
                f"column {col}, which {m.qualified} does not have"
            )


@dataclass
class Steps:
    """How a build runs a model's statements and audits its grain; failed audits are collected in ``failures``."""

    con: duckdb.DuckDBPyConnection
    sql_dir: Path
    failures: list[str] = field(default_factory=list)

    def run(self, m: Model, sql: str) -> None:
        """Run one statement of ``m``; an error names the model."""
        try:
            self.con.execute(sql)
        except duckdb.InterruptException:
            raise KeyboardInterrupt from None  # Ctrl-C reached DuckDB first: the build rolls back, exit 130
        except duckdb.Error as exc:
            first = str(exc).strip().splitlines()[0]
            raise ModelFailed(
                f"build rolled back: model {m.qualified} ({m.path.relative_to(self.sql_dir.parent)}) failed: {first}"
            ) from exc

    def audit(self, m: Model, where: str = "true", rows: str | None = None) -> None:
        """The grain audit over the model's rows matching ``where``, or over the table ``rows``: the rows about to
        be inserted into an incremental keys model whose keys' old rows were deleted (no scan of the whole table)."""
        if m.unique_key and not m.key_enforced_by:
            found = self.con.execute(grain_audit_sql(m, where, rows)).fetchall()
            if found:
                self.failures.append(f"{m.qualified}: grain ({', '.join(m.unique_key)}) not unique, e.g. {found[0]}")


def build(
    con: duckdb.DuckDBPyConnection,
    settings: Settings,
    store: "Store",
    sql_dir: Path = SQL_DIR,
    progress: Callable[[str], None] | None = None,
) -> BuildResult:
    """Run every model and audit in one transaction; roll back on any failure."""
    t0 = time.perf_counter()
    init_ledger(con, store.lake)
    # before any model reads the lake: every file exists, and the ones this build reads are intact (the
    # request and outcome files already built are re-hashed only if the build turns out to be full, below)
    models = discover(sql_dir)
    built, kinds = incremental.built_files(con), incremental.file_kinds(models)
    check_lake(con, store, lambda kind, file_hash: kind not in kinds or file_hash not in built)
    audits = sorted((sql_dir / "audits").glob("*.sql"))
    define_macros(con, sql_dir)
    before = month_fingerprints(con, models)
    timings: list[tuple[str, float]] = []
    steps = Steps(con, sql_dir)
    audit, failures = steps.audit, steps.failures

    con.execute("BEGIN TRANSACTION")
    try:
        write_settings(con, settings)
        for layer in LAYERS:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {layer}")
        for m in models:  # before any model runs: an append model's batch fills the keys models' tables too
            _drop_other_kind(con, m)
        plan: incremental.Plan | None = None
        for m in models:
            t = time.perf_counter()
            if m.incremental and plan is None:
                plan = incremental.plan(con, models, settings.batch_rows)
                if plan.full:  # every incrementally read file is read again
                    check_lake(con, store, lambda kind, file_hash: kind in kinds and file_hash in built)
            _build_model(con, m, models=models, steps=steps, plan=plan, sql_dir=sql_dir, progress=progress)
            timings.append((m.qualified, time.perf_counter() - t))
            crashpoint("build.model")
            if progress:
                progress(m.qualified)
        if plan is not None:
            incremental.finish(con, plan)
        for m in models:
            if not m.incremental:
                audit(m)
        n_audits = run_audits(con, models, audits, failures)
        if failures:
            raise AuditFailed("build rolled back; audits failed:\n  " + "\n  ".join(failures))
        crashpoint("build.before_commit")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    crashpoint("build.committed")
    return build_result(con, models, before, (t0, n_audits, timings))


def _build_model(
    con: duckdb.DuckDBPyConnection,
    m: Model,
    *,
    models: list[Model],
    steps: "Steps",
    plan: "incremental.Plan | None",
    sql_dir: Path,
    progress: Callable[[str], None] | None,
) -> None:
    """One model: its table or view made again (an incremental one by its strategy) and its COMMENT written."""
    kind = "VIEW" if m.materialized == "view" else "TABLE"
    if m.incremental:
        incremental.strategy(m, models).run(con, plan, steps.run, steps.audit, progress)  # type: ignore[arg-type]
    else:
        steps.run(m, f"CREATE OR REPLACE {kind} {m.qualified} AS\n{m.body}")
    comment_model(con, m, kind, sql_dir)


def comment_model(con: duckdb.DuckDBPyConnection, m: Model, kind: str, sql_dir: Path) -> None:
    """The model's header as COMMENTs on the table (description and grain) and its columns."""
    doc = m.description + (f" Grain: {m.grain}." if m.grain else "")
    con.execute(f"COMMENT ON {kind} {m.qualified} IS {sql_string(doc.strip())}")
    _check_column_docs(con, m, sql_dir)
    for col, text in m.column_docs.items():
        con.execute(f"COMMENT ON COLUMN {m.qualified}.{col} IS {sql_string(text)}")


def run_audits(con: duckdb.DuckDBPyConnection, models: list[Model], audits: list[Path], failures: list[str]) -> int:
    """The queries of ``sql/audits`` (each must return no rows); returns how many audits the build ran, grain
    audits included."""
    for path in audits:
        rows = con.execute(path.read_text(encoding="utf-8")).fetchall()
        if rows:
            failures.append(f"audit {path.stem}: {len(rows)} violating row(s), e.g. {rows[0]}")
    return sum(bool(m.unique_key and not m.key_enforced_by) for m in models) + len(audits)


def check_lake(con: duckdb.DuckDBPyConnection, store: "Store", rehash: Callable[[str, str], bool]) -> None:
    """Refuse the build if a lake file is missing or one that ``rehash`` selects is altered."""
    damage = lake.damaged(con, store.lake, rehash=rehash, record=True)
    if damage:
        shown = "; ".join(d.line() for d in damage[:5]) + (f"; and {len(damage) - 5} more" if len(damage) > 5 else "")
        raise lake.LakeDamaged(f"nothing built or published: {shown}. `costledger verify` lists them all")


META_TABLES = (
    "meta.loaded_files",
    "meta.quarantine",
    "meta.rejected_files",
    "meta.runs",
    "meta.run_steps",
    "meta.settings",
    "meta.superseded_rows",
)


def publication(
    con: duckdb.DuckDBPyConnection, store: "Store", sql_dir: Path = SQL_DIR
) -> tuple[list[str], list[tuple[str, str]]]:
    """What a publication copies: the tables (meta, and every table model marked ``published: yes``, the default)
    and the statements that make the rest, as (name, statement): the macros (kept in the file, so that its views
    work in any DuckDB client), the raw views over the lake, then the view models and the models marked
    ``published: view`` in dependency order."""
    models = discover(sql_dir)
    tables = list(META_TABLES) + [m.qualified for m in models if m.materialized == "table" and m.published == "yes"]
    views = [(f"main.{_macro_name(s)}", s) for s in persistent_macro_statements(sql_dir)]
    views += raw_view_statements(con, store.lake)
    views += [
        (m.qualified, f"CREATE OR REPLACE VIEW {m.qualified} AS\n{m.published_body()}")
        for m in models
        if m.materialized == "view" or m.published == "view"
    ]
    return tables, views


def _macro_name(statement: str) -> str:
    found = re.search(r"\bMACRO\s+(\w+)", statement)
    return found.group(1) if found else "?"


def _drop_other_kind(con: duckdb.DuckDBPyConnection, m: Model) -> None:
    """CREATE OR REPLACE cannot turn a view into a table: drop the other kind first (a model whose kind changed, or a
    table model a Spark build left as a view over its Parquet)."""
    other = "TABLE" if m.materialized == "view" else "VIEW"
    if table_exists(con, m.layer, m.name, other):
        con.execute(f"DROP {other} {m.qualified}")
