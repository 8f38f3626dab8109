"""A full build of the SQL models on Apache Spark, published through the same DuckDB file.

Spark reads the lake (``lake``), runs every model's SQL in Spark's dialect (``translate``) in dependency order and
writes each table model as a Parquet folder under ``<db>.d/spark/build-<time>/<schema>/<model>/``. DuckDB then takes
the results in one transaction: a published table model becomes a table of the ledger, one marked ``published: no``
(the request-level intermediates) a view over its Parquet folder, and the view models are DuckDB's views as on a
DuckDB build. The grain audits and ``sql/audits`` run in DuckDB over those; a failure rolls the whole build back and
removes its folder. So the SQL shell, the report, ``status`` and ``verify`` read a Spark build as they read any.

An incremental model goes on from the last Spark build when nothing it depends on changed (the planner,
``pipeline.transform.planner``, says which and what it recomputes; ``going_on`` how): the priced requests of the new
lake files alone, the tasks of the new rows' keys, the months and days they touch. Every other model is computed
whole. The state the build leaves is Spark's: the next DuckDB build is a
full one.
"""

from __future__ import annotations

import shutil
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import duckdb

from pipeline.base.models import LAYERS, Model
from pipeline.base.query import table_exists
from pipeline.base.settings import Settings
from pipeline.transform.build import (
    BuildResult,
    ModelFailed,
    Steps,
    check_lake,
    comment_model,
)
from pipeline.transform.spark import going_on as going
from pipeline.transform.spark import incremental
from pipeline.transform.spark import lake as spark_lake
from pipeline.transform.spark import session
from pipeline.transform.state import built_files, file_kinds
from pipeline.transform.spark.translate import TranslationFailed, spark_macros, view_name
from pipeline.transform.spark.translations import Translations
from schemas.ddl import sql_string

if TYPE_CHECKING:
    from pipeline.storage.store import Store


class SparkEngine:
    """The models on Spark, whole or going on from the last Spark build; the results taken into the ledger in the
    build's transaction."""

    def __init__(
        self, settings: Settings, store: "Store", sql_dir: Path, progress: Callable[[str], None] | None
    ) -> None:
        self.settings, self.store, self.sql_dir, self.progress = settings, store, sql_dir, progress
        self.macros = spark_macros(sql_dir)
        self.root = store.spark
        self.translations = Translations(self.root / "sql", self.macros)
        self.out = self.root / f"build-{datetime.now(timezone.utc):%Y%m%dT%H%M%S%fZ}"
        self.spark: Any = None
        self.plan: incremental.SparkPlan | None = None
        self.skipped: set[str] = set()
        self.models: list[Model] = []
        self.touched: tuple[list[date], list[date]] | None = None
        """The months and the days the models that go on by month or day recompute."""
        self.keys: dict[str, Any] = {}
        """Each keys model's recomputed keys, kept until the build ends (the model and ``touched`` read them)."""

    def rehash(self, con: duckdb.DuckDBPyConnection, models: list[Model]) -> Callable[[str, str], bool]:
        # the append models' files already folded in are re-hashed only if the plan reads them again (``begin``)
        kinds, self.skipped = file_kinds(models, ("append",)), built_files(con)
        return lambda kind, file_hash: kind not in kinds or file_hash not in self.skipped

    def begin(self, con: duckdb.DuckDBPyConnection, models: list[Model], steps: Steps) -> None:
        self.models = models
        self.plan = incremental.plan(con, models, self.root)
        going_on = set(self.plan.new_files)
        reread = file_kinds([m for m in models if m.qualified not in going_on], ("append",))
        if reread and self.skipped:
            check_lake(con, self.store, lambda kind, file_hash: kind in reread and file_hash in self.skipped)
        self.spark = session.start(self.settings, self.root)
        spark_lake.hand_over_meta(con, self.spark, self.out / "meta")
        spark_lake.register_raw(con, self.spark, self.store.lake)

    def run(self, con: duckdb.DuckDBPyConnection, m: Model, steps: Steps) -> None:
        going_on = self._going_on(m)
        if isinstance(going_on, going.AppendRows):
            assert self.plan is not None and self.plan.previous is not None
            incremental.carry_over(self.plan.previous / m.layer / m.name, self.out / m.layer / m.name)
        _run_on_spark(self.spark, m, self.translations, self.out, self.sql_dir, going_on)

    def _going_on(self, m: Model) -> going.GoingOn | None:
        """How model ``m`` goes on from the last Spark build, or None: computed whole."""
        p = self.plan
        assert p is not None
        if p.previous is None:
            return None
        earlier = p.previous / m.layer / m.name
        if m.qualified in p.new_files:
            return going.AppendRows(new_files=p.new_files[m.qualified])
        if scope := p.keys.get(m.qualified):
            return going.KeyRows(scope=scope, earlier=earlier, keys=self._keys_of(m.qualified))
        if m.qualified in p.months | p.days:
            if self.touched is None:  # once, at the first: the append and keys models are written by then
                self.touched = going.touched(self.spark, self.models, p, self.macros, self._keys_of)
            column = "month" if m.qualified in p.months else "day"
            dates = self.touched[0 if column == "month" else 1]
            if self.progress:
                self.progress(f"{m.qualified}: {len(dates)} {column}(s) recomputed, the others carried over")
            return going.PartitionRows(column=column, dates=dates, earlier=earlier)
        return None

    def _keys_of(self, name: str) -> Any:
        """The keys model ``name``'s recomputed keys, computed at the first reader (``going_on.recomputed_keys``)."""
        if name not in self.keys:
            assert self.plan is not None
            scope = self.plan.keys[name]
            self.keys[name] = going.recomputed_keys(self.spark, scope, self.plan.new_files[scope.appended])
        return self.keys[name]

    def _free_keys(self) -> None:
        keys, self.keys = list(self.keys.values()), {}
        for kept in keys:
            kept.unpersist()

    def finish(self, con: duckdb.DuckDBPyConnection, models: list[Model], steps: Steps) -> None:
        _take_results(con, models, self.out, self.sql_dir)
        assert self.plan is not None
        incremental.record(con, self.plan, models, self.out)

    def audited_as_built(self, m: Model) -> bool:
        return False  # every model is audited in DuckDB, over the results taken in

    def abort(self) -> None:
        try:
            self._free_keys()
        except Exception:  # a session that failed may not answer; releasing it drops what it kept
            pass
        session.release(self.spark)
        shutil.rmtree(self.out, ignore_errors=True)

    def done(self, result: BuildResult) -> None:
        self._free_keys()
        session.release(self.spark)
        self.translations.prune()
        if self.plan is not None:
            result.rebuilt_in_full = dict(self.plan.rebuilt)
            result.incremental_models = len(self.plan.incremental)
        for old in self.root.glob("build-*"):  # the ledger's views now read this build's folder only
            if old != self.out:
                shutil.rmtree(old, ignore_errors=True)


def _scoped_inputs(spark: Any, m: Model, going_on: going.GoingOn | None) -> None:
    """An incremental model's inputs (``scoped.NAME``): whole, or the rows a model that goes on reads. Each model has
    its own views of them (two models may name an input alike)."""
    for i in sorted(m.inputs, key=lambda i: i.within is not None):  # a ``within`` input reads a day input's view
        schema, name = i.source.split(".", 1)
        cols = ", ".join(f"`{c}`" for c in i.columns) or "*"
        only = f" WHERE {going_on.where(i)}" if going_on else ""
        own = f"{view_name(m.layer, m.name)}__scoped__{i.name}"
        spark.sql(f"CREATE OR REPLACE TEMP VIEW {own} AS SELECT {cols} FROM {view_name(schema, name)}{only}")


def _run_on_spark(
    spark: Any, m: Model, translations: Translations, out: Path, sql_dir: Path, going_on: going.GoingOn | None = None
) -> None:
    """Model ``m`` on Spark: a view, or a table written as Parquet under ``out``; ``going_on``: computed from part of
    its inputs and joined to the earlier build's rows (``pipeline.transform.spark.going_on``)."""
    where = f"model {m.qualified} ({m.path.relative_to(sql_dir.parent)})"
    try:
        steps, sql = translations.steps(m.body, prefix=f"{view_name(m.layer, m.name)}__")
    except TranslationFailed as exc:
        raise ModelFailed(f"build rolled back: {where} cannot run on Spark: {exc}") from exc
    target = view_name(m.layer, m.name)
    kept: list[Any] = []
    try:
        if going_on is not None:
            kept += going_on.start(spark, m)
        _scoped_inputs(spark, m, going_on)
        for step in steps:
            df = spark.sql(step.sql)
            if step.shared:  # computed once, now, and kept on the executors (spilling to disk) for its readers
                df = going.keep(df)
                kept.append(df)
            df.createOrReplaceTempView(step.view)
        if m.materialized == "view":
            spark.sql(f"CREATE OR REPLACE TEMP VIEW {target} AS {sql}")
            return
        folder = out / m.layer / m.name
        result = spark.sql(sql)
        if going_on is None:
            result.write.mode("overwrite").parquet(str(folder))
        elif going_on.appends:
            result.write.mode("append").parquet(str(folder))
        else:
            result = going_on.combine(spark, result)
            result.write.mode("overwrite").parquet(str(folder))
        # read back with the schema it was written with: Spark need not run a job that opens a file to learn it
        spark.read.schema(result.schema).parquet(str(folder)).createOrReplaceTempView(target)
        # a table model's result is now read from its Parquet, and no other model reads its steps: what they kept
        # (at 100 M requests, gigabytes of executor memory and disk) is freed. A view model keeps them: reading the
        # view reads them.
        for df in kept:
            df.unpersist()
    except Exception as exc:  # Spark's analysis and runtime errors come through py4j or gRPC in several classes
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ModelFailed(f"build rolled back: {where} failed on Spark: {spark_error(exc)}") from exc


def spark_error(exc: BaseException) -> str:
    """The line of a Spark error that says what went wrong: its error class, else the JVM exception's own line (py4j
    puts "An error occurred while calling ..." first)."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    for line in lines:
        if line.startswith("[") or ("Exception:" in line and not line.startswith("at ")):
            return line.removeprefix(": ")[:500]
    return (lines or [type(exc).__name__])[0][:500]


def _take_results(con: duckdb.DuckDBPyConnection, models: list[Model], out: Path, sql_dir: Path) -> None:
    """The models into the ledger (tables, or views over Parquet for the unpublished ones) with their comments."""
    for layer in LAYERS:
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {layer}")
    for m in models:
        for kind in ("TABLE", "VIEW"):
            if table_exists(con, m.layer, m.name, kind):
                con.execute(f"DROP {kind} {m.qualified}")
        if m.materialized == "view":
            con.execute(f"CREATE VIEW {m.qualified} AS\n{m.body}")
            kind = "VIEW"
        else:
            files = sql_string(str(out / m.layer / m.name / "*.parquet"))
            kind = "TABLE" if m.published == "yes" else "VIEW"
            con.execute(f"CREATE {kind} {m.qualified} AS SELECT * FROM read_parquet({files})")
        comment_model(con, m, kind, sql_dir, types=False)
