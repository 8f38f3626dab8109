"""Which engine runs the SQL models: DuckDB (embedded, the default; full and incremental builds) or Apache Spark
(``[engine] name = "spark"``: full builds, see ``pipeline.transform.spark``). Both leave the same tables in the
ledger, so what follows a build (publishing, the report, the SQL shell) does not know which ran."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import duckdb

from pipeline.base.models import SQL_DIR
from pipeline.base.settings import Settings
from pipeline.transform import build as duckdb_build
from pipeline.transform.build import BuildResult

if TYPE_CHECKING:
    from pipeline.storage.store import Store

ENGINES = ("duckdb", "spark")


def build(
    con: duckdb.DuckDBPyConnection,
    settings: Settings,
    store: "Store",
    sql_dir: Path = SQL_DIR,
    progress: Callable[[str], None] | None = None,
) -> BuildResult:
    """Build the models on the engine the settings name."""
    if settings.engine_name == "spark":
        from pipeline.transform.spark import build as spark_build  # pyspark is an optional extra

        return spark_build.build(con, settings, store, sql_dir, progress)
    result = duckdb_build.build(con, settings, store, sql_dir, progress)
    # the ledger no longer reads an earlier Spark build's Parquet: its views over it are DuckDB's tables again
    for old in store.spark.glob("build-*"):
        shutil.rmtree(old, ignore_errors=True)
    return result
