"""The raw tables and the meta tables the models read, as views of the Spark session.

A raw view reads the same lake files DuckDB's raw view reads (the manifest's, in load order) and gives the same
rows: each column cast to its type, with its default where a file predates the column, the provenance of a verbatim
lake file from its name and row number, and the rows a correction superseded left out. The few small meta tables the
models read are handed over from DuckDB as Parquet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import sqlglot

from pipeline.transform.spark.translate import view_name
from schemas.ddl import PROVENANCE_COLUMNS, columns, sql_string, table_name, view_value_sql
from schemas.tables import KINDS

#: the meta tables the models read
META_TABLES = ("loaded_files", "settings", "superseded_rows")

_VERBATIM_HASH = r"regexp_extract(`_lake_file`, '([0-9a-f]{64})\\.parquet$', 1)"


def spark_type(duckdb_type: str) -> str:
    """A DuckDB column type in Spark's words (VARCHAR -> STRING, ...)."""
    return sqlglot.exp.DataType.build(duckdb_type, dialect="duckdb").sql(dialect="spark")


def _value_sql(c: Any, present: bool) -> str:
    """The raw view's value of column ``c`` (DuckDB's definition, in Spark's dialect)."""
    ref = f'"{c.name}"' if present else "NULL"
    return sqlglot.transpile(view_value_sql(c, ref), read="duckdb", write="spark")[0]


def hand_over_meta(con: duckdb.DuckDBPyConnection, spark: Any, folder: Path) -> None:
    """Copy the meta tables the models read to Parquet files in ``folder`` and register them in Spark."""
    folder.mkdir(parents=True, exist_ok=True)
    for table in META_TABLES:
        path = folder / f"{table}.parquet"
        con.execute(f"COPY (SELECT * FROM meta.{table}) TO {sql_string(str(path))} (FORMAT parquet)")
        spark.read.parquet(str(path)).createOrReplaceTempView(view_name("meta", table))


def register_raw(con: duckdb.DuckDBPyConnection, spark: Any, lake: Path) -> None:
    """Register every kind's raw view in Spark."""
    for kind, model in KINDS.items():
        files = con.execute(
            "SELECT lake_file FROM meta.loaded_files WHERE kind = ? AND lake_file IS NOT NULL ORDER BY load_seq", [kind]
        ).fetchall()
        superseded = con.execute("SELECT count(*) FROM meta.superseded_rows WHERE kind = ?", [kind]).fetchone()
        sql = _raw_sql(spark, kind, model, [lake / f for (f,) in files], bool(superseded and superseded[0]))
        spark.sql(f"CREATE OR REPLACE TEMP VIEW {view_name('raw', table_name(model))} AS {sql}")


def _raw_sql(spark: Any, kind: str, model: Any, paths: list[Path], superseded: bool) -> str:
    cols = columns(model)
    if not paths:
        empty = ", ".join(f"CAST(NULL AS {spark_type(c.duckdb_type)}) AS `{c.name}`" for c in cols)
        return f"SELECT {empty} WHERE false"
    verbatim = {p: not _has_provenance(p) for p in paths}  # each footer read once
    parts = []
    for provenance in (False, True):
        group = [p for p in paths if verbatim[p] == provenance]
        if not group:
            continue
        df = spark.read.option("mergeSchema", "true").parquet(*[str(p) for p in group])
        if provenance:
            df = df.selectExpr("*", "_metadata.file_name AS _lake_file", "_metadata.row_index AS _lake_row")
        name = f"lake__{table_name(model)}__{'verbatim' if provenance else 'stored'}"
        df.createOrReplaceTempView(name)
        present = set(df.columns)
        select = []
        for c in cols:
            if provenance and c.name == "source_file_hash":
                select.append(f"{_VERBATIM_HASH} AS `source_file_hash`")
            elif provenance and c.name == "source_line":
                select.append("CAST(`_lake_row` + 1 AS BIGINT) AS `source_line`")
            else:
                select.append(f"{_value_sql(c, c.name in present)} AS `{c.name}`")
        parts.append(f"SELECT {', '.join(select)} FROM {name}")
    body = " UNION ALL ".join(parts)
    if superseded:
        body = (
            f"SELECT * FROM ({body}) AS r WHERE NOT EXISTS (SELECT 1 FROM {view_name('meta', 'superseded_rows')} AS s "
            f"WHERE s.kind = '{kind}' AND s.file_hash = r.source_file_hash AND s.line = r.source_line)"
        )
    return body


def _has_provenance(path: Path) -> bool:
    """A lake file the ledger wrote carries its provenance columns; a verbatim copy of a landing file does not."""
    import pyarrow.parquet as pq

    return all(name in pq.read_schema(path).names for name in PROVENANCE_COLUMNS)
