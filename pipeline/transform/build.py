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
from typing import TYPE_CHECKING, Callable, Protocol

import duckdb

from pipeline.storage import lake
from pipeline.base.models import SQL_DIR, Model, define_macros, discover, persistent_macro_statements
from pipeline.base.faults import crashpoint
from pipeline.storage.catalog import init_ledger, raw_view_statements
from pipeline.base.settings import Settings
from pipeline.base.errors import CostledgerError, UsageError
from pipeline.base.selection import select
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


@dataclass(kw_only=True)
class BuildResult:
    models: int
    audits: int
    seconds: float
    timings: list[tuple[str, float]]
    months_changed: list[str] = field(default_factory=list)
    rebuilt_in_full: dict[str, str] = field(default_factory=dict)
    """The incremental models rebuilt in full (every row computed again) and why, in words."""
    incremental_models: int = 0

    def rebuilt_sentence(self) -> str | None:
        """Which incremental models were rebuilt in full and why, in one line (None: all went on incrementally)."""
        if not self.rebuilt_in_full:
            return None
        reasons = set(self.rebuilt_in_full.values())
        if len(self.rebuilt_in_full) == self.incremental_models and len(reasons) == 1:
            return f"all {self.incremental_models} incremental models rebuilt in full ({reasons.pop()})"
        roots = {k: v for k, v in self.rebuilt_in_full.items() if not v.startswith("it reads ")}
        downstream = len(self.rebuilt_in_full) - len(roots)
        if not roots:  # each reads, directly or not, a model that is not incremental and changed: name those, with why
            causes = sorted({_first_cause(v) for v in self.rebuilt_in_full.values()})
            return (
                f"{len(self.rebuilt_in_full)} of {self.incremental_models} incremental models rebuilt in full: they "
                f"read {'; '.join(causes)}"
            )
        text = "; ".join(f"{k} ({v})" for k, v in roots.items())
        if downstream:
            text += f"; and {downstream} that read {'it' if len(roots) == 1 else 'them'}"
        return f"{len(self.rebuilt_in_full)} of {self.incremental_models} incremental models rebuilt in full: {text}"


def _first_cause(reason: str) -> str:
    """Of a chain "it reads A (it reads B (why))", the model that changed first and why: "B (why)"."""
    while reason.startswith("it reads ") and " (it reads " in reason:
        reason = reason.split(" (", 1)[1].removesuffix(")")
    return reason.removeprefix("it reads ")


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
    return BuildResult(
        models=len(models), audits=n_audits, seconds=time.perf_counter() - t0, timings=timings, months_changed=changed
    )


def check_columns(con: duckdb.DuckDBPyConnection, m: Model, sql_dir: Path, *, types: bool = True) -> None:
    """The model's table has exactly its declared columns, in their order, each of its declared type (``types``:
    Spark's Parquet names some types its own way); else the build stops naming the file, line and column."""
    got = con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? "
        "AND database_name = current_database() ORDER BY column_index",
        [m.layer, m.name],
    ).fetchall()
    where = m.path.relative_to(sql_dir.parent)
    have = dict(got)
    for c in m.columns:
        if c.name not in have:
            raise ModelFailed(
                f"build rolled back: {where}:{c.line}: column {c.name} is declared, but {m.qualified} does not "
                f"have it (its SELECT gives {', '.join(have)})"
            )
    place = {c.name: i for i, c in enumerate(m.columns)}
    for i, (name, sql_type) in enumerate(got):
        if name not in place:
            after = f"after column {got[i - 1][0]}" if i else "first"
            raise ModelFailed(
                f"build rolled back: {where}: {m.qualified} has column {name} ({sql_type}), which its header does "
                f"not declare: add '-- column {name} {sql_type}: what it means' {after}"
            )
        c = m.columns[place[name]]
        if place[name] != i:
            raise ModelFailed(
                f"build rolled back: {where}:{c.line}: column {name} is declared in place {place[name] + 1} "
                f"but is column {i + 1} of {m.qualified}: declare the columns in the order the SELECT gives them"
            )
        if types and c.type != sql_type:
            raise ModelFailed(
                f"build rolled back: {where}:{c.line}: column {name} is declared {c.type}, but {m.qualified} gives "
                f"{sql_type}: cast it in the SELECT, or declare {sql_type}"
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


class Engine(Protocol):
    """What runs the models (DuckDB in the ledger, or Spark over the lake): the build frame calls these in order."""

    def rehash(self, con: duckdb.DuckDBPyConnection, models: list[Model]) -> Callable[[str, str], bool]:
        """Which lake files (kind, file hash) are hashed again before the build, as the ones it reads."""
        ...

    def begin(self, con: duckdb.DuckDBPyConnection, models: list[Model], steps: Steps) -> None:
        """Inside the build's transaction, before the first model."""
        ...

    def run(self, con: duckdb.DuckDBPyConnection, m: Model, steps: Steps) -> None:
        """One model, in dependency order."""
        ...

    def finish(self, con: duckdb.DuckDBPyConnection, models: list[Model], steps: Steps) -> None:
        """After the last model: the results in the ledger, with the state the next build starts from."""
        ...

    def audited_as_built(self, m: Model) -> bool:
        """Whether the model's grain was audited while it was built (the others are audited after ``finish``)."""
        ...

    def abort(self) -> None:
        """After a rollback: what the build wrote outside the ledger is removed."""
        ...

    def done(self, result: BuildResult) -> None:
        """After the commit: what the ledger no longer reads is removed; the engine adds what it knows to the
        result."""
        ...


#: The engines by the name ``[engine] name`` gives, each "module:class" (imported when chosen: Spark's module needs
#: the optional extra).
ENGINES = {
    "duckdb": "pipeline.transform.duckdb_engine:DuckDBEngine",
    "spark": "pipeline.transform.spark.build:SparkEngine",
}
#: the engine of ``build --select`` (DuckDB's: the selected models computed whole)
SELECTED_ENGINE = "pipeline.transform.duckdb_engine:SelectedEngine"


def engine_for(
    settings: Settings, store: "Store", sql_dir: Path, progress: Callable[[str], None] | None, selected: bool = False
) -> Engine:
    """The engine the settings name (``selected``: the one that builds a selection)."""
    import importlib

    if selected and settings.engine_name != "duckdb":
        raise UsageError("--select builds on the DuckDB engine (a Spark build runs every model)")
    module, name = (SELECTED_ENGINE if selected else ENGINES[settings.engine_name]).split(":")
    return getattr(importlib.import_module(module), name)(settings, store, sql_dir, progress)


def build(
    con: duckdb.DuckDBPyConnection,
    settings: Settings,
    store: "Store",
    sql_dir: Path = SQL_DIR,
    progress: Callable[[str], None] | None = None,
    selection: tuple[str, ...] = (),
) -> BuildResult:
    """Run every model and audit in one transaction, on the engine the settings name; roll back on any failure.
    Before any model reads the lake: every file exists, and the ones this build reads are intact. ``selection``
    (``build --select``): only the models it names, on the engine that computes them whole, with the audits of
    ``sql/audits`` that read only them."""
    t0 = time.perf_counter()
    init_ledger(con, store.lake)
    every = discover(sql_dir)
    models = select(every, selection) if selection else every
    engine = engine_for(settings, store, sql_dir, progress, selected=bool(selection))
    check_lake(con, store, engine.rehash(con, models))
    define_macros(con, sql_dir)
    before = month_fingerprints(con, every)
    timings: list[tuple[str, float]] = []
    steps = Steps(con, sql_dir)
    con.execute("BEGIN TRANSACTION")
    try:
        write_settings(con, settings)
        engine.begin(con, models, steps)
        for m in models:
            t = time.perf_counter()
            engine.run(con, m, steps)
            timings.append((m.qualified, time.perf_counter() - t))
            crashpoint("build.model")
            if progress:
                progress(m.qualified)
        engine.finish(con, models, steps)
        for m in models:
            if not engine.audited_as_built(m):
                steps.audit(m)
        audits = sorted((sql_dir / "audits").glob("*.sql"))
        if selection:
            audits = [a for a in audits if _reads_only(a, every, {m.qualified for m in models})]
        n_audits = run_audits(con, models, audits, steps.failures)
        if steps.failures:
            raise AuditFailed("build rolled back; audits failed:\n  " + "\n  ".join(steps.failures))
        crashpoint("build.before_commit")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        engine.abort()
        raise
    crashpoint("build.committed")
    result = build_result(con, every, before, (t0, n_audits, timings))
    result.models = len(models)
    engine.done(result)
    return result


def _reads_only(audit: Path, models: list[Model], chosen: set[str]) -> bool:
    """Whether the audit query reads only models in ``chosen`` (it names at least one)."""
    text = audit.read_text(encoding="utf-8")
    named = {m.qualified for m in models if re.search(rf"\b{re.escape(m.qualified)}\b", text)}
    return bool(named) and named <= chosen


def comment_model(con: duckdb.DuckDBPyConnection, m: Model, kind: str, sql_dir: Path, *, types: bool = True) -> None:
    """The model's header as COMMENTs on the table (description and grain) and its columns, once its columns are
    checked against the declared ones."""
    doc = m.description + (f" Grain: {m.grain}." if m.grain else "")
    check_columns(con, m, sql_dir, types=types)
    comments = [f"COMMENT ON {kind} {m.qualified} IS {sql_string(doc.strip())}"] + [
        f"COMMENT ON COLUMN {m.qualified}.{c.name} IS {sql_string(c.meaning)}" for c in m.columns if c.meaning
    ]
    con.execute(";\n".join(comments))  # one call: a model's comments are many small catalog statements


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
    views += raw_view_statements(con, store.lake, spelled_from=store.published.parent)
    views += [
        (m.qualified, f"CREATE OR REPLACE VIEW {m.qualified} AS\n{m.published_body()}")
        for m in models
        if m.materialized == "view" or m.published == "view"
    ]
    return tables, views


def _macro_name(statement: str) -> str:
    found = re.search(r"\bMACRO\s+(\w+)", statement)
    return found.group(1) if found else "?"
