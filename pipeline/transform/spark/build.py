"""A full build of the SQL models on Apache Spark, published through the same DuckDB file.

Spark reads the lake (``lake``), runs every model's SQL in Spark's dialect (``translate``) in dependency order and
writes each table model as a Parquet folder under ``<db>.d/spark/build-<time>/<schema>/<model>/``. DuckDB then takes
the results in one transaction: a published table model becomes a table of the ledger, one marked ``published: no``
(the request-level intermediates) a view over its Parquet folder, and the view models are DuckDB's views as on a
DuckDB build. The grain audits and ``sql/audits`` run in DuckDB over those; a failure rolls the whole build back and
removes its folder. So the SQL shell, the report, ``status`` and ``verify`` read a Spark build as they read any.

An append model goes on from the last Spark build when nothing it depends on changed: its earlier Parquet files are
linked into the new folder and only the new lake files' rows are computed (``incremental``). Every other model is
computed whole. The state the build leaves is Spark's: the next DuckDB build is a full one.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
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
from pipeline.transform.spark import incremental
from pipeline.transform.spark import lake as spark_lake
from pipeline.transform.spark import session
from pipeline.transform.state import built_files
from pipeline.transform.spark.translate import Macro, TranslationFailed, spark_macros, to_spark_steps, view_name
from schemas.ddl import sql_string

if TYPE_CHECKING:
    from pipeline.storage.store import Store


class SparkEngine:
    """Every model whole on Spark; the results taken into the ledger in the build's transaction."""

    def __init__(
        self, settings: Settings, store: "Store", sql_dir: Path, progress: Callable[[str], None] | None
    ) -> None:
        self.settings, self.store, self.sql_dir = settings, store, sql_dir
        self.macros = spark_macros(sql_dir)
        self.root = store.spark
        self.out = self.root / f"build-{datetime.now(timezone.utc):%Y%m%dT%H%M%S%fZ}"
        self.spark: Any = None
        self.plan: incremental.SparkPlan | None = None
        self.skipped: set[str] = set()

    def rehash(self, con: duckdb.DuckDBPyConnection, models: list[Model]) -> Callable[[str, str], bool]:
        # the append models' files already folded in are re-hashed only if the plan reads them again (``begin``)
        kinds, self.skipped = incremental.append_kinds(models), built_files(con)
        return lambda kind, file_hash: kind not in kinds or file_hash not in self.skipped

    def begin(self, con: duckdb.DuckDBPyConnection, models: list[Model], steps: Steps) -> None:
        self.plan = incremental.plan(con, models, self.root)
        going_on = set(self.plan.new_files)
        reread = incremental.append_kinds([m for m in models if m.qualified not in going_on])
        if reread & incremental.append_kinds(models) and self.skipped:
            check_lake(con, self.store, lambda kind, file_hash: kind in reread and file_hash in self.skipped)
        self.spark = session.start(self.settings, self.root)
        spark_lake.hand_over_meta(con, self.spark, self.out / "meta")
        spark_lake.register_raw(con, self.spark, self.store.lake)

    def run(self, con: duckdb.DuckDBPyConnection, m: Model, steps: Steps) -> None:
        assert self.plan is not None
        new = self.plan.new_files.get(m.qualified)
        if new is None:
            _run_on_spark(self.spark, m, self.macros, self.out, self.sql_dir)
            return
        assert self.plan.previous is not None
        incremental.carry_over(self.plan.previous / m.layer / m.name, self.out / m.layer / m.name)
        _run_on_spark(self.spark, m, self.macros, self.out, self.sql_dir, new_files=new)

    def finish(self, con: duckdb.DuckDBPyConnection, models: list[Model], steps: Steps) -> None:
        _take_results(con, models, self.out, self.sql_dir)
        assert self.plan is not None
        incremental.record(con, self.plan, models, self.out)

    def audited_as_built(self, m: Model) -> bool:
        return False  # every model is audited in DuckDB, over the results taken in

    def abort(self) -> None:
        session.release(self.spark)
        shutil.rmtree(self.out, ignore_errors=True)

    def done(self, result: BuildResult) -> None:
        session.release(self.spark)
        if self.plan is not None:
            result.rebuilt_in_full = dict(self.plan.rebuilt)
            result.incremental_models = len(self.plan.incremental)
        for old in self.root.glob("build-*"):  # the ledger's views now read this build's folder only
            if old != self.out:
                shutil.rmtree(old, ignore_errors=True)


def _scoped_inputs(spark: Any, m: Model, new_files: list[str] | None) -> None:
    """An incremental model's inputs (``scoped.NAME``): whole, or for an append model that goes on, the rows of the
    ``new_files`` alone. Each model has its own views of them (two models may name an input alike)."""
    only = ""
    if new_files is not None:
        hashes = ", ".join(f"'{h}'" for h in new_files if all(c in "0123456789abcdef" for c in h))
        only = f" WHERE source_file_hash IN ({hashes})" if hashes else " WHERE false"
    for i in m.inputs:
        schema, name = i.source.split(".", 1)
        cols = ", ".join(f"`{c}`" for c in i.columns) or "*"
        own = f"{view_name(m.layer, m.name)}__scoped__{i.name}"
        spark.sql(f"CREATE OR REPLACE TEMP VIEW {own} AS SELECT {cols} FROM {view_name(schema, name)}{only}")


def _run_on_spark(
    spark: Any, m: Model, macros: dict[str, Macro], out: Path, sql_dir: Path, new_files: list[str] | None = None
) -> None:
    """Model ``m`` on Spark: a view, or a table written as Parquet under ``out``; with ``new_files``, an append model's
    rows of those files written beside the rows already in its folder."""
    where = f"model {m.qualified} ({m.path.relative_to(sql_dir.parent)})"
    try:
        steps, sql = to_spark_steps(m.body, macros, prefix=f"{view_name(m.layer, m.name)}__")
    except TranslationFailed as exc:
        raise ModelFailed(f"build rolled back: {where} cannot run on Spark: {exc}") from exc
    _scoped_inputs(spark, m, new_files)
    target = view_name(m.layer, m.name)
    kept: list[Any] = []
    try:
        for step in steps:
            df = spark.sql(step.sql)
            if step.shared:  # computed once, now, and kept on the executors (spilling to disk) for its readers
                df = _keep(df)
                kept.append(df)
            df.createOrReplaceTempView(step.view)
        if m.materialized == "view":
            spark.sql(f"CREATE OR REPLACE TEMP VIEW {target} AS {sql}")
            return
        folder = out / m.layer / m.name
        result = spark.sql(sql)
        if new_files is None:
            result.write.mode("overwrite").parquet(str(folder))
        elif new_files:
            result.write.mode("append").parquet(str(folder))
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


def _keep(df: Any) -> Any:
    """``df`` computed once and kept for the reads that follow (a step several parts of a model read). Caching, not
    a checkpoint: a cached result can be freed through the session alone, on a local session and over Spark Connect
    alike."""
    from pyspark import StorageLevel

    df = df.persist(StorageLevel.MEMORY_AND_DISK)
    df.count()
    return df


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
        comment_model(con, m, kind, sql_dir)
