"""Loading one landing file into its raw table: read, type, check, quarantine, commit.

A file is loaded whole or not at all, in one transaction together with its
manifest row, so ``rows in = rows loaded + rows quarantined`` holds for every
file in ``meta.loaded_files``. The same content again (same SHA-256) is skipped.
Rows are deduplicated on the table's natural key: an identical row is counted
once, a row with the same key and different content is a conflict. Both go to
``meta.quarantine`` with their reason; nothing is overwritten, nothing dropped.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import duckdb

from pipeline.readers import FileRejected, read_file
from schemas.ddl import ColumnSpec, all_raw_ddl, canonical_columns, natural_key, table_name
from schemas.rules import RULES, SPECIAL_FORMATS
from schemas.tables import KINDS

META_DDL = [
    "CREATE SCHEMA IF NOT EXISTS meta",
    """CREATE TABLE IF NOT EXISTS meta.loaded_files (
        file_hash VARCHAR NOT NULL, kind VARCHAR NOT NULL, path VARCHAR NOT NULL, size_bytes BIGINT NOT NULL,
        rows_in BIGINT NOT NULL, rows_loaded BIGINT NOT NULL, rows_quarantined BIGINT NOT NULL,
        loaded_at TIMESTAMP NOT NULL, run_id VARCHAR)""",
    "COMMENT ON TABLE meta.loaded_files IS 'Manifest: one row per landing file loaded (key: file_hash). rows_in = rows_loaded + rows_quarantined.'",
    """CREATE TABLE IF NOT EXISTS meta.quarantine (
        file_hash VARCHAR NOT NULL, path VARCHAR NOT NULL, kind VARCHAR NOT NULL, line BIGINT NOT NULL,
        columns VARCHAR, reason VARCHAR NOT NULL, raw_row VARCHAR)""",
    "COMMENT ON TABLE meta.quarantine IS 'Rows not loaded, each with file, line, the columns at fault, the reason and the raw allow-listed values (JSON). Never content.'",
    """CREATE TABLE IF NOT EXISTS meta.rejected_files (
        file_hash VARCHAR, kind VARCHAR NOT NULL, path VARCHAR NOT NULL, reason VARCHAR NOT NULL,
        rejected_at TIMESTAMP NOT NULL, run_id VARCHAR)""",
    "COMMENT ON TABLE meta.rejected_files IS 'Files rejected whole (missing column, unreadable, ...): nothing of them was loaded.'",
    """CREATE TABLE IF NOT EXISTS meta.runs (
        run_id VARCHAR NOT NULL, command VARCHAR NOT NULL, started_at TIMESTAMP NOT NULL, finished_at TIMESTAMP,
        files_seen BIGINT, files_loaded BIGINT, files_skipped BIGINT, files_rejected BIGINT,
        rows_in BIGINT, rows_loaded BIGINT, rows_quarantined BIGINT, outcome VARCHAR)""",
    "COMMENT ON TABLE meta.runs IS 'One row per ingest / nightly run.'",
    """CREATE TABLE IF NOT EXISTS meta.settings (key VARCHAR NOT NULL, value VARCHAR NOT NULL)""",
    "COMMENT ON TABLE meta.settings IS 'The settings the last build used (the SQL models read them from here).'",
]

Status = Literal["loaded", "skipped", "rejected"]


@dataclass(frozen=True)
class FileResult:
    """What happened to one landing file."""

    path: str
    kind: str
    status: Status
    rows_in: int = 0
    rows_loaded: int = 0
    rows_quarantined: int = 0
    message: str = ""
    seconds: float = 0.0


def init_ledger(con: duckdb.DuckDBPyConnection) -> None:
    """Create the raw and meta tables if missing (idempotent)."""
    for stmt in all_raw_ddl() + META_DDL:
        con.execute(stmt)


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------- typing SQL

def _text(col: str) -> str:
    return f"NULLIF(trim(CAST(i.\"{col}\" AS VARCHAR)), '')"


def _typed_expr(kind: str, c: ColumnSpec, present: set[str]) -> str:
    if c.name not in present:
        return f"CAST(NULL AS {c.duckdb_type})"
    t = _text(c.name)
    fmt = SPECIAL_FORMATS.get((kind, c.name))
    if fmt == "year_month":
        return (
            f"CASE WHEN regexp_full_match({t}, '\\d{{4}}-\\d{{2}}') THEN TRY_CAST({t} || '-01' AS DATE) "
            f"WHEN regexp_full_match({t}, '\\d{{4}}-\\d{{2}}-01') THEN TRY_CAST({t} AS DATE) END"
        )
    if c.duckdb_type in ("BIGINT", "INTEGER"):
        return f"CASE WHEN regexp_full_match({t}, '[+-]?\\d+') THEN TRY_CAST({t} AS {c.duckdb_type}) END"
    if c.duckdb_type == "TIMESTAMP":
        return f"CAST(TRY_CAST({t} AS TIMESTAMPTZ) AT TIME ZONE 'UTC' AS TIMESTAMP)"
    return f"TRY_CAST({t} AS {c.duckdb_type})"


_TYPE_WORDS = {"BIGINT": "a whole number", "INTEGER": "a whole number", "TIMESTAMP": "an ISO-8601 timestamp",
               "DATE": "a date (YYYY-MM-DD)", "BOOLEAN": "true or false", "VARCHAR": "text"}


def _type_word(kind: str, c: ColumnSpec) -> str:
    if SPECIAL_FORMATS.get((kind, c.name)) == "year_month":
        return "a month (YYYY-MM)"
    if c.duckdb_type.startswith("DECIMAL"):
        return f"a decimal number fitting {c.duckdb_type}"
    return _TYPE_WORDS[c.duckdb_type]


def _checks(kind: str, cols: list[ColumnSpec], present: set[str]) -> list[tuple[str, str, str]]:
    """(column, bad-when predicate over typed table t, message SQL expression)."""
    checks: list[tuple[str, str, str]] = []
    for c in cols:
        if c.required:
            checks.append((c.name, f"t._raw_{c.name} IS NULL", f"'{c.name} is missing'"))
        if c.name in present and c.duckdb_type != "VARCHAR":
            checks.append(
                (
                    c.name,
                    f"t._raw_{c.name} IS NOT NULL AND t.\"{c.name}\" IS NULL",
                    f"'{c.name}: ''' || left(t._raw_{c.name}, 60) || ''' is not {_type_word(kind, c)}'",
                )
            )
    for r in RULES[kind]:
        checks.append((r.column, f"coalesce(({_qualify(r.bad_when, cols)}), false)", "'" + r.message.replace("'", "''") + "'"))
    return checks


def _qualify(predicate: str, cols: list[ColumnSpec]) -> str:
    """Rules are written over bare column names; the typed table is aliased t."""
    import re

    names = {c.name for c in cols}
    return re.sub(r"\b([a-z_][a-z0-9_]*)\b(?!\s*\()", lambda m: f"t.\"{m.group(1)}\"" if m.group(1) in names else m.group(1), predicate)


# ---------------------------------------------------------------- ingest

def ingest_file(con: duckdb.DuckDBPyConnection, kind: str, path: Path, run_id: str | None = None) -> FileResult:
    """Load one file of ``kind`` into its raw table, whole or not at all."""
    t0 = time.perf_counter()
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    model = KINDS[kind]
    table = f"raw.{table_name(model)}"
    cols = canonical_columns(model)
    key = natural_key(model)
    shown = str(path)
    if not path.is_file():
        return _reject(con, kind, shown, None, f"{shown}: no such file", run_id, t0)
    file_hash = file_sha256(path)
    already = con.execute("SELECT path FROM meta.loaded_files WHERE file_hash = ?", [file_hash]).fetchall()
    if already:
        return FileResult(shown, kind, "skipped", message=f"same content already loaded from {already[0][0]}",
                          seconds=time.perf_counter() - t0)
    try:
        read = read_file(path, [c.name for c in cols])
    except FileRejected as exc:
        return _reject(con, kind, shown, file_hash, str(exc), run_id, t0)
    present = set(read.present)
    missing = [c.name for c in cols if c.required and c.name not in present]
    if missing:
        msg = f"{shown}: required column{'s' if len(missing) > 1 else ''} {', '.join(missing)} missing (line 1 / header)"
        return _reject(con, kind, shown, file_hash, msg, run_id, t0)

    con.register("incoming_arrow", read.table)
    try:
        _stage_checked(con, kind, cols, present, key, table)
        con.execute("BEGIN TRANSACTION")
        try:
            col_list = ", ".join(f'"{c.name}"' for c in cols)
            con.execute(
                f"INSERT INTO {table} ({col_list}, source_file_hash, source_line) "
                f"SELECT {col_list}, ?, _line FROM checked WHERE verdict IS NULL ORDER BY _line",
                [file_hash],
            )
            raw_json = "to_json(struct_pack(" + ", ".join(f"\"{c.name}\" := _raw_{c.name}" for c in cols) + "))"
            con.execute(
                f"INSERT INTO meta.quarantine SELECT ?, ?, ?, _line, bad_columns, verdict, {raw_json} "
                "FROM checked WHERE verdict IS NOT NULL",
                [file_hash, shown, kind],
            )
            if read.bad_lines:
                con.executemany(
                    "INSERT INTO meta.quarantine VALUES (?, ?, ?, ?, NULL, ?, NULL)",
                    [[file_hash, shown, kind, line, reason] for line, reason in read.bad_lines],
                )
            loaded, quarantined = con.execute(
                "SELECT count(*) FILTER (verdict IS NULL), count(*) FILTER (verdict IS NOT NULL) FROM checked"
            ).fetchone()  # type: ignore[misc]
            quarantined += len(read.bad_lines)
            con.execute(
                "INSERT INTO meta.loaded_files VALUES (?, ?, ?, ?, ?, ?, ?, current_localtimestamp(), ?)",
                [file_hash, kind, shown, path.stat().st_size, read.rows_in, loaded, quarantined, run_id],
            )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    finally:
        con.unregister("incoming_arrow")
        con.execute("DROP TABLE IF EXISTS checked")
    assert loaded + quarantined == read.rows_in, "rows in != loaded + quarantined"
    return FileResult(shown, kind, "loaded", read.rows_in, loaded, quarantined, seconds=time.perf_counter() - t0)


def _stage_checked(con: duckdb.DuckDBPyConnection, kind: str, cols: list[ColumnSpec], present: set[str],
                   key: list[str], table: str) -> None:
    """Build temp table ``checked``: typed columns, raw text, and a verdict (NULL = load it)."""
    typed = ", ".join(f"{_typed_expr(kind, c, present)} AS \"{c.name}\"" for c in cols)
    raws = ", ".join(
        (f"{_text(c.name)} AS _raw_{c.name}" if c.name in present else f"CAST(NULL AS VARCHAR) AS _raw_{c.name}")
        for c in cols
    )
    checks = _checks(kind, cols, present)
    reasons = "list_filter([" + ", ".join(f"CASE WHEN {p} THEN {m} END" for _, p, m in checks) + "], lambda x: x IS NOT NULL)"
    bad_cols = "list_distinct(list_filter([" + ", ".join(f"CASE WHEN {p} THEN '{c}' END" for c, p, _ in checks) + "], lambda x: x IS NOT NULL))"
    # An optional key column with a default (opex.cluster_id = '' for shared costs)
    key_fill = {c.name: "''" for c in cols if c.name in key and not c.required}
    typed_cols = ", ".join(
        f"coalesce(t.\"{c.name}\", {key_fill[c.name]}) AS \"{c.name}\"" if c.name in key_fill else f"t.\"{c.name}\""
        for c in cols
    )
    same_all = " AND ".join(f"c.\"{c.name}\" IS NOT DISTINCT FROM f.\"{c.name}\"" for c in cols)
    same_existing = " AND ".join(f"c.\"{c.name}\" IS NOT DISTINCT FROM e.\"{c.name}\"" for c in cols)
    key_join_f = " AND ".join(f"f.\"{k}\" = c.\"{k}\"" for k in key)
    key_join_e = " AND ".join(f"e.\"{k}\" = c.\"{k}\"" for k in key)
    key_part = ", ".join(f"\"{k}\"" for k in key)
    key_names = ", ".join(key)
    con.execute(f"CREATE OR REPLACE TEMP TABLE typed AS SELECT i._line, {typed}, {raws} FROM incoming_arrow i")
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE checked AS
        WITH judged AS (
            SELECT t._line, {typed_cols}, {", ".join(f"t._raw_{c.name}" for c in cols)},
                   {reasons} AS reasons, {bad_cols} AS bad_cols
            FROM typed t
        ),
        good AS (
            SELECT *, min(_line) OVER (PARTITION BY {key_part}) AS first_line
            FROM judged WHERE len(reasons) = 0
        ),
        firsts AS (SELECT * FROM good WHERE _line = first_line)
        SELECT c.* EXCLUDE (reasons, bad_cols, first_line),
               CASE
                 WHEN c._line <> c.first_line AND ({same_all})
                   THEN 'identical duplicate of line ' || c.first_line || ' (counted once)'
                 WHEN c._line <> c.first_line
                   THEN 'conflict: same key ({key_names}) as line ' || c.first_line || ' with different content; not loaded'
                 WHEN e.source_line IS NOT NULL AND ({same_existing})
                   THEN 'identical duplicate of a row already loaded (file ' || left(e.source_file_hash, 12) || ', line ' || e.source_line || '); counted once'
                 WHEN e.source_line IS NOT NULL
                   THEN 'conflict: key ({key_names}) already loaded from file ' || left(e.source_file_hash, 12) || ', line ' || e.source_line || ' with different content; not overwritten'
               END AS verdict,
               CASE WHEN c._line <> c.first_line OR e.source_line IS NOT NULL THEN '{key_names}' END AS bad_columns
        FROM good c
        JOIN firsts f ON {key_join_f}
        LEFT JOIN {table} e ON {key_join_e}
        UNION ALL
        SELECT j.* EXCLUDE (reasons, bad_cols), array_to_string(j.reasons, '; '), array_to_string(j.bad_cols, ', ')
        FROM judged j WHERE len(j.reasons) > 0
        """
    )
    con.execute("DROP TABLE typed")


def _reject(con: duckdb.DuckDBPyConnection, kind: str, shown: str, file_hash: str | None, message: str,
            run_id: str | None, t0: float) -> FileResult:
    con.execute(
        "INSERT INTO meta.rejected_files VALUES (?, ?, ?, ?, current_localtimestamp(), ?)",
        [file_hash, kind, shown, message, run_id],
    )
    return FileResult(shown, kind, "rejected", message=message, seconds=time.perf_counter() - t0)
