"""What a file leaves in the ledger: its lake file, its quarantined rows, its keys, its manifest row; or its rejection.

The lake file is written under a temporary name, sealed read-only and renamed into the lake
(``seal_lake_file``); the rows of ``meta`` are written in the file's transaction (``write_file_rows``), so the
manifest never names a lake file that is not there, and ``rows in = rows loaded + rows quarantined`` holds for
every file it lists.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from pipeline.base.faults import crashpoint
from pipeline.ingest.loading import FileResult, LoadingFile
from pipeline.storage.catalog import UNDEDUPLICATED, key_hash_sql, mark_raw_view_stale, rebuild_in_full, sql_literal
from pipeline.storage.lake import seal

if TYPE_CHECKING:
    from pipeline.storage.store import Store

#: Quarantined raw values are kept to this many characters.
RAW_VALUE_CHARS = 200


def write_lake_tmp(con: duckdb.DuckDBPyConnection, f: LoadingFile) -> bool:
    """Write the lake file's temporary copy; True when it is the landing file itself, byte for byte.

    That is when every row loads and the raw view reads each as its checks typed it (``_as_is``); otherwise the
    good rows are re-encoded with their provenance. Nothing is written when no row loads.
    """
    read, tmp_path = f.read, f.tmp_path
    assert read is not None and tmp_path is not None
    if (
        read.verbatim
        and f.loaded == read.rows_in
        and bool(con.execute(f"SELECT bool_and(_as_is) FROM {f.tables.flags}").fetchone()[0])  # type: ignore[index]
    ):
        crashpoint("ingest.lake_copy")
        shutil.copyfile(f.path, tmp_path)
        return True
    if f.loaded:
        copy_good_rows(con, f, f.tables.good_rows, tmp_path)
    return False


def copy_good_rows(con: duckdb.DuckDBPyConnection, f: LoadingFile, rows: str, tmp_path: Path) -> None:
    """Write ``rows`` (a FROM clause over ``flags f``) as the file's lake Parquet under a temporary name
    (zstd level 1: on request logs a quarter faster to write than the default level 3, and no larger)."""
    col_list = ", ".join(f'f."{c.name}"' for c in f.columns)
    # the file hash is hex and the folder is ours: the literal is safe (COPY cannot bind a file name)
    con.execute(
        f"COPY (SELECT {col_list}, {sql_literal(f.file_hash)} AS source_file_hash, f._line AS source_line "
        f"FROM {rows}) TO {sql_literal(str(tmp_path))} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)"
    )


def seal_lake_file(tmp_path: Path, lake_path: Path, expected: str | None = None) -> str | None:
    """Seal the temporary lake file read-only and rename it into the lake. Returns its SHA-256 for the manifest;
    None, and nothing renamed, when it is not ``expected`` (a verbatim copy of a landing file that changed since
    it was hashed)."""
    crashpoint("ingest.lake_written")
    lake_path.parent.mkdir(parents=True, exist_ok=True)
    lake_sha = seal(tmp_path)
    if expected is not None and lake_sha != expected:
        return None
    os.replace(tmp_path, lake_path)
    crashpoint("ingest.lake_renamed")
    return lake_sha


def unseal(f: LoadingFile) -> None:
    """Remove a lake file sealed for a file that is not committed (a new file's hash names no other lake file)."""
    if f.sealed and f.lake_path is not None:
        f.lake_path.unlink(missing_ok=True)
        f.sealed = False


def _raw_json(f: LoadingFile) -> str:
    """SQL over ``flags f``: the row's values as JSON, each cut to 200 characters (a misaligned column cannot copy
    a prompt into the ledger)."""
    parts = (
        f'"{c.name}" := left('
        + (f"f._raw_{c.name}" if c.name in f.raw_cols else f'CAST(f."{c.name}" AS VARCHAR)')
        + f", {RAW_VALUE_CHARS})"
        for c in f.columns
    )
    return "to_json(struct_pack(" + ", ".join(parts) + "))"


def write_file_rows(
    con: duckdb.DuckDBPyConnection, f: LoadingFile, store: "Store", lake_file: tuple[str, str] | None
) -> None:
    """In the file's transaction: the quarantined rows (verdicts and unreadable lines), the loaded rows' keys in
    the key index, the manifest row (with the lake file and its SHA-256; the rows GX validated follow when it has
    agreed) and the raw view over the lake (marked stale: refreshed when next read, not once per file)."""
    st, read, kind = f.tables, f.read, f.kind
    assert read is not None
    con.execute(
        f"INSERT INTO meta.quarantine SELECT ?, ?, ?, v._line, v.bad_columns, v.verdict, {_raw_json(f)} "
        f"FROM {st.verdicts} v JOIN {st.flags} f ON f._line = v._line ORDER BY v._line",
        [f.file_hash, f.shown, kind],
    )
    if f.key and kind not in UNDEDUPLICATED and f.loaded:
        con.execute(f"INSERT INTO meta.key_index SELECT ?, {key_hash_sql(f.key, 'f')} FROM {st.good_rows}", [kind])
    if read.bad_lines:  # one statement over Arrow: a file of a wrong format can have millions of them
        lines, reasons = zip(*read.bad_lines)
        con.register(st.bad_lines, pa.table({"line": pa.array(lines, pa.int64()), "reason": pa.array(reasons)}))
        try:
            con.execute(
                f"INSERT INTO meta.quarantine SELECT ?, ?, ?, line, NULL, reason, NULL FROM {st.bad_lines} "
                "ORDER BY line",
                [f.file_hash, f.shown, kind],
            )
        finally:
            con.unregister(st.bad_lines)
    _write_manifest_row(con, f, lake_file)
    if con.execute(f"SELECT count(*) FROM {st.superseding}").fetchall()[0][0]:  # type: ignore[index]
        con.execute(
            f"INSERT INTO meta.superseded_rows SELECT ?, file_hash, line, ?, _line FROM {st.superseding}",
            [kind, f.file_hash],
        )
        rebuild_in_full(con)  # the incremental models folded in the rows now restated
    mark_raw_view_stale(con, store.lake, kind)


def _write_manifest_row(con: duckdb.DuckDBPyConnection, f: LoadingFile, lake_file: tuple[str, str] | None) -> None:
    assert f.read is not None
    con.execute(
        "INSERT INTO meta.loaded_files (file_hash, kind, path, size_bytes, rows_in, rows_loaded, "
        "rows_quarantined, loaded_at, run_id, load_seq, lake_file, rows_gx_validated, lake_sha256, "
        "relative_path, read_with) SELECT ?, ?, ?, ?, ?, ?, ?, current_localtimestamp(), ?, "
        "coalesce(?, (SELECT coalesce(max(load_seq), 0) + 1 FROM meta.loaded_files)), ?, NULL, ?, ?, ?",
        [
            f.file_hash,
            f.kind,
            f.shown,
            f.path.stat().st_size,
            f.read.rows_in,
            f.loaded,
            f.quarantined,
            f.run_id,
            f.load_seq,  # a file loaded again keeps its place; a new file comes after every file loaded so far
            lake_file[0] if lake_file else None,
            lake_file[1] if lake_file else None,
            f.identity,
            f.options.reading_settings(f.kind),
        ],
    )
    if f.read.notes:
        con.execute(
            "UPDATE meta.loaded_files SET notes = ? WHERE file_hash = ?", ["; ".join(f.read.notes), f.file_hash]
        )


def reject(con: duckdb.DuckDBPyConnection, f: LoadingFile, message: str, seconds: float | None = None) -> FileResult:
    """Record the file's rejection (``meta.rejected_files``, as its result names it) and return its result."""
    result = f.result("rejected", message, seconds)
    con.execute(
        "INSERT INTO meta.rejected_files VALUES (?, ?, ?, ?, current_localtimestamp(), ?)",
        [f.file_hash or None, f.kind, result.path, result.message, f.run_id],
    )
    return result
