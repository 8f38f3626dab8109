"""The DuckDB engine: the models run inside the ledger, the incremental ones by their strategies (new data only,
each rebuilt in full when its own fingerprint changed, see ``pipeline.transform.incremental``)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import duckdb

from pipeline.base.models import LAYERS, Model
from pipeline.base.query import table_exists
from pipeline.base.settings import Settings
from pipeline.transform import incremental, state
from pipeline.transform.build import BuildResult, Steps, check_lake, comment_model

if TYPE_CHECKING:
    from pipeline.storage.store import Store


class DuckDBEngine:
    """Full and incremental builds in the ledger's own DuckDB (the default engine)."""

    def __init__(
        self, settings: Settings, store: "Store", sql_dir: Path, progress: Callable[[str], None] | None
    ) -> None:
        self.settings, self.store, self.sql_dir, self.progress = settings, store, sql_dir, progress
        self.plan: incremental.Plan | None = None
        self.models: list[Model] = []
        self.built: set[str] = set()

    def rehash(self, con: duckdb.DuckDBPyConnection, models: list[Model]) -> Callable[[str, str], bool]:
        # the request and outcome files already built are re-hashed only if a model rebuilt in full reads them
        # again (``run``, when the plan is made)
        self.built, kinds = state.built_files(con), state.file_kinds(models)
        built = self.built
        return lambda kind, file_hash: kind not in kinds or file_hash not in built

    def begin(self, con: duckdb.DuckDBPyConnection, models: list[Model], steps: Steps) -> None:
        self.models = models
        for layer in LAYERS:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {layer}")
        for m in models:  # before any model runs: an append model's batch fills the keys models' tables too
            _drop_other_kind(con, m)

    def run(self, con: duckdb.DuckDBPyConnection, m: Model, steps: Steps) -> None:
        """One model: its table or view made again (an incremental one by its strategy) and its COMMENT written."""
        kind = "VIEW" if m.materialized == "view" else "TABLE"
        if m.incremental:
            if self.plan is None:  # at the first incremental model: the prices and settings it reads are built
                self.plan = incremental.plan(con, self.models, self.settings.batch_rows)
                reread, built = self.plan.reread_kinds, self.built
                if reread:
                    check_lake(con, self.store, lambda kind, file_hash: kind in reread and file_hash in built)
            incremental.strategy(m, self.models).run(con, self.plan, steps.run, steps.audit, self.progress)
        else:
            steps.run(m, f"CREATE OR REPLACE {kind} {m.qualified} AS\n{m.body}")
        comment_model(con, m, kind, self.sql_dir)

    def finish(self, con: duckdb.DuckDBPyConnection, models: list[Model], steps: Steps) -> None:
        if self.plan is not None:
            incremental.finish(con, self.plan)

    def audited_as_built(self, m: Model) -> bool:
        return bool(m.incremental)  # an incremental model audits the rows it writes, not its whole table

    def abort(self) -> None:
        pass  # everything it wrote is in the ledger's transaction

    def done(self, result: BuildResult) -> None:
        # the ledger no longer reads an earlier Spark build's Parquet: its views over it are DuckDB's tables again
        for old in self.store.spark.glob("build-*"):
            shutil.rmtree(old, ignore_errors=True)
        if self.plan is not None:
            result.rebuilt_in_full = dict(self.plan.rebuilt)
            result.incremental_models = len(self.plan.incremental)


def _drop_other_kind(con: duckdb.DuckDBPyConnection, m: Model) -> None:
    """CREATE OR REPLACE cannot turn a view into a table: drop the other kind first (a model whose kind changed, or a
    table model a Spark build left as a view over its Parquet)."""
    other = "TABLE" if m.materialized == "view" else "VIEW"
    if table_exists(con, m.layer, m.name, other):
        con.execute(f"DROP {other} {m.qualified}")


class SelectedEngine:
    """``build --select``: the selected models only, each computed whole from what it reads (an incremental one from
    all its inputs, the next full build rebuilding it in full, and what reads it); every lake file is checked first,
    since every file may be read again."""

    def __init__(
        self, settings: Settings, store: "Store", sql_dir: Path, progress: Callable[[str], None] | None
    ) -> None:
        self.sql_dir = sql_dir

    def rehash(self, con: duckdb.DuckDBPyConnection, models: list[Model]) -> Callable[[str, str], bool]:
        return lambda kind, file_hash: True

    def begin(self, con: duckdb.DuckDBPyConnection, models: list[Model], steps: Steps) -> None:
        for layer in LAYERS:
            con.execute(f"CREATE SCHEMA IF NOT EXISTS {layer}")

    def run(self, con: duckdb.DuckDBPyConnection, m: Model, steps: Steps) -> None:
        _drop_other_kind(con, m)
        kind = "VIEW" if m.materialized == "view" else "TABLE"
        steps.run(m, f"CREATE OR REPLACE {kind} {m.qualified} AS\n{m.published_body()}")
        comment_model(con, m, kind, self.sql_dir)

    def finish(self, con: duckdb.DuckDBPyConnection, models: list[Model], steps: Steps) -> None:
        _built_alone(con, [m.qualified for m in models if m.incremental])

    def audited_as_built(self, m: Model) -> bool:
        return False

    def abort(self) -> None:
        pass

    def done(self, result: BuildResult) -> None:
        pass


def _built_alone(con: duckdb.DuckDBPyConnection, names: list[str]) -> None:
    """The incremental models a selected build computed whole: the next build rebuilds them in full."""
    if names and table_exists(con, "meta", "build_state"):
        con.execute(
            "UPDATE meta.build_state SET sql_hash = ?, fingerprint = ? WHERE model IN (SELECT unnest(?))",
            [state.BUILT_ALONE, state.BUILT_ALONE, names],
        )
