"""Is this file new? A landing file told by its SHA-256: new, seen before (skipped, its lake file repaired if
damaged), rolled back, or a same-name conflict.

The ledger never edits history: a file of a name already loaded with other content is rejected, a file
rolled back is not loaded again unless asked (``costledger reprocess``), and a file seen before whose lake
file is missing or altered has that lake file rewritten from it (``repair_lake_file``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from pipeline.ingest.checks import check_rows
from pipeline.ingest.reading import read_rows
from pipeline.ingest.lakewrite import copy_good_rows, reject, seal_lake_file
from pipeline.ingest.loading import CORRECTIONS_FOLDER, FileResult, LoadingFile, unreadable_message
from pipeline.ingest.readers import FileRejected
from pipeline.storage.catalog import UNDEDUPLICATED, refresh_raw_view, sql_literal
from pipeline.storage.lake import HashAhead, lake_damage, signed_sha256

if TYPE_CHECKING:
    from pipeline.storage.store import Store

# a loaded file's identity (its path under its kind folder; the file name for files loaded by path)
_IDENTITY = "coalesce(relative_path, regexp_extract(path, '[^/]+$'))"


def landed_hash(kind: str, path: Path, content_sha256: str) -> str:
    """The hash a landing file is known by: its SHA-256, except for a scrape saved without timestamps whose name gives
    its time (``vllm-2026-10-05T10-00-00Z.prom``): the time is part of what it holds, so an idle engine's scrape
    that repeats the one before byte for byte is a sample of its own, not the same content again."""
    from pipeline.base.fileformats import METRIC_KINDS
    from pipeline.ingest.formats.scrapetime import from_name

    name = path.name.lower()
    if kind not in METRIC_KINDS or not name.removesuffix(".gz").endswith(".prom"):
        return content_sha256
    when = from_name(path.name)
    if when is None:
        return content_sha256
    return hashlib.sha256(f"{content_sha256}\0scraped_at={when}".encode()).hexdigest()


def loaded_identities(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], str | None]:
    """The (kind, identity) of every loaded file, with the lake file of its latest load: a guess of which files
    a run loaded before, that decides only when GX is imported and which files are hashed ahead (each file is
    still told new or seen by its hash)."""
    rows = con.execute(f"SELECT kind, {_IDENTITY}, lake_file FROM meta.loaded_files ORDER BY load_seq").fetchall()
    return {(kind, identity): lake_file for kind, identity, lake_file in rows}


def recognise(
    con: duckdb.DuckDBPyConnection, f: LoadingFile, store: "Store", hashes: HashAhead | None = None
) -> FileResult | None:
    """Take the file's SHA-256 and its signature before that hash (``signed_sha256``) into ``f``; return its result
    when it was seen before (skipped, repaired) or cannot be loaded (rejected: no such file, unreadable, a same-name
    conflict); None for a new file. ``hashes`` may hold the SHA-256s of the file and its lake file taken ahead."""
    shown = f.shown
    if not f.path.is_file():
        return reject(con, f, f"{shown}: no such file")
    try:
        content, f.signature = (hashes.take_signed(f.path) if hashes else None) or signed_sha256(f.path)
    except OSError as exc:
        return reject(con, f, unreadable_message(shown, exc))
    f.file_hash = landed_hash(f.kind, f.path, content)
    already = con.execute(
        "SELECT path, lake_file, lake_sha256 FROM meta.loaded_files WHERE file_hash = ?", [f.file_hash]
    ).fetchall()
    if already:
        prev_path, lake_file, lake_sha = already[0]
        lake_path = store.lake / lake_file if lake_file else None
        if lake_path and lake_damage(lake_path, lake_sha, hashes.take(lake_path) if hashes else None):
            return repair_lake_file(con, f, store)
        return f.result("skipped", f"same content already loaded from {prev_path}")
    if skipped := _rolled_back(con, f):
        return skipped
    if f.kind not in UNDEDUPLICATED:
        return _same_name_conflict(con, f)
    return None  # ``stage_file`` checks hash and signature again once it is read: a change rejects it


def _rolled_back(con: duckdb.DuckDBPyConnection, f: LoadingFile) -> FileResult | None:
    rolled_back = con.execute(
        "SELECT strftime(rolled_back_at, '%Y-%m-%d %H:%M'), snapshot FROM meta.rolled_back_files WHERE file_hash = ?",
        [f.file_hash],
    ).fetchall()
    if not rolled_back:
        return None
    when, snapshot = rolled_back[0]
    message = (
        f"rolled back on {when} UTC (`costledger rollback` to {snapshot}): not loaded again; "
        f"`costledger reprocess {f.shown}` loads it"
    )
    return f.result("skipped", message)


def _same_name_conflict(con: duckdb.DuckDBPyConnection, f: LoadingFile) -> FileResult | None:
    same_name = con.execute(
        f"SELECT path, file_hash FROM meta.loaded_files WHERE kind = ? AND {_IDENTITY} = ? "
        "ORDER BY load_seq DESC LIMIT 1",
        [f.kind, f.identity],
    ).fetchall()
    if not same_name:
        return None
    prev_path, prev_hash = same_name[0]
    message = (
        f"{f.shown}: conflict: a {f.kind} file named {f.identity} was already loaded from {prev_path} "
        f"(sha256 {prev_hash[:12]}) with different content (now sha256 {f.file_hash[:12]}); history is not "
        "edited: deliver new rows as a file of a new name (rows loaded before are counted once), corrected "
        f"rows in a {CORRECTIONS_FOLDER}/ folder of the kind folder"
    )
    return reject(con, f, message)


def repair_lake_file(con: duckdb.DuckDBPyConnection, f: LoadingFile, store: "Store") -> FileResult:
    """Rewrite a missing or altered lake file from its original landing file (same SHA-256).

    The rows loaded from a file are its well-typed rows minus the lines ``meta.quarantine`` holds for
    it (duplicates of history included): re-derived here, counted against the manifest, written,
    sealed and recorded. Nothing else changes.
    """
    lake_rel, rows_loaded = con.execute(
        "SELECT lake_file, rows_loaded FROM meta.loaded_files WHERE file_hash = ?", [f.file_hash]
    ).fetchall()[0]
    repair = LoadingFile(
        kind=f.kind, path=f.path, identity=f.identity, options=f.options, file_hash=f.file_hash, check_existing=False
    )
    repair.place_in(store)
    tmp_path = repair.tmp_path
    assert tmp_path is not None
    try:
        repair.read = read_rows(f.kind, f.path, [c.name for c in f.columns], f.options)
    except FileRejected as exc:
        return reject(con, f, f"cannot rewrite its lake file {lake_rel}: {exc}")
    repair.tables.register(con, repair.read)
    try:
        gx = check_rows(con, repair)
        good = (
            f"{repair.tables.flags} f ANTI JOIN (SELECT line FROM meta.quarantine "
            f"WHERE file_hash = {sql_literal(f.file_hash)}) q ON q.line = f._line"
        )
        n = con.execute(f"SELECT count(*) FROM {good}").fetchall()[0][0]
        if n != rows_loaded:
            message = (
                f"cannot rewrite its lake file {lake_rel}: the landing file now yields {n} rows, "
                f"the manifest recorded {rows_loaded}"
            )
            return reject(con, f, message)
        gx.result()  # GX agrees with the SQL rules (or this raises)
        copy_good_rows(con, repair, good, tmp_path)
        lake_sha = seal_lake_file(tmp_path, store.lake / lake_rel)  # the name the manifest holds
        con.execute("UPDATE meta.loaded_files SET lake_sha256 = ? WHERE file_hash = ?", [lake_sha, f.file_hash])
        refresh_raw_view(con, store.lake, f.kind)
    finally:
        tmp_path.unlink(missing_ok=True)
        repair.tables.clean_up(con, repair.read)
    message = (
        f"its lake file {lake_rel} was missing or altered: rewritten from this landing file "
        f"({rows_loaded} rows, same SHA-256 as loaded)"
    )
    return f.result("repaired", message)
