"""Loading a file again under the settings in force now: ``costledger reprocess FILE...``.

A file is known by its content (SHA-256): loading the same bytes again is skipped, so a file read under a wrong
setting (a mapping, a bound, a price-list date) would stay as it was read forever. Reprocessing replaces what the
ledger holds of that file (its rows in the lake, its quarantined rows, its keys and its manifest row) by what it
gives now, in one transaction: if the new read fails or is rejected, the earlier load stays as it was. The file
keeps its place in the load order (a restating kind's latest row stays the latest), its new rows get a lake file of
their own (the earlier one is removed once no snapshot kept for rollback names it), and the next build is full (the
incremental models had folded its earlier rows in). A file a rollback took back (``meta.rolled_back_files``) is loaded
again the same way, after every file loaded so far.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from pipeline.storage.catalog import forget_file, refresh_stale_raw_views
from pipeline.ingest.files import FileResult, IngestOptions, abandon_file, open_file, settle_file, stage_file
from pipeline.base.fileformats import METRIC_KINDS
from pipeline.ingest.recognise import landed_hash
from pipeline.storage.lake import file_sha256

if TYPE_CHECKING:
    from pipeline.storage.store import Store


def reprocess_file(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    store: "Store",
    run_id: str,
    options: IngestOptions,
) -> FileResult:
    """Load ``path`` again in place of its earlier load (see the module's doc); the file must have been loaded."""
    t0 = time.perf_counter()
    shown = str(path)
    if not path.is_file():
        return FileResult(path=shown, kind="?", status="rejected", message=f"{shown}: no such file")
    found = _loaded_as(con, path)
    if isinstance(found, str):
        message = (
            f"{shown}: this content (sha256 {found[:12]}) was never loaded, so there is nothing to reprocess; "
            "load it with `costledger nightly` or `costledger ingest`"
        )
        return FileResult(path=shown, kind="?", status="rejected", message=message)
    kind, load_seq, identity, file_hash = found
    refresh_stale_raw_views(con, [kind])
    con.execute("BEGIN TRANSACTION")
    try:
        if load_seq is not None:  # loaded (a file a rollback took back has no manifest row to forget)
            forget_file(con, store.lake, kind, file_hash)
        con.execute("DELETE FROM meta.rolled_back_files WHERE file_hash = ?", [file_hash])  # loaded again, if so
        staged = stage_file(
            con,
            kind,
            path,
            store,
            run_id=run_id,
            options=options,
            identity=identity or path.name,
            lake_name=f"{run_id}-{file_hash}",  # a verbatim lake file's name ends with its hash
            load_seq=load_seq,
        )
        opened = open_file(con, staged, store, run_id, begin=False) if not isinstance(staged, FileResult) else staged
    except BaseException:
        con.execute("ROLLBACK")
        raise
    if isinstance(opened, FileResult):  # rejected now (another reason, or unreadable): the earlier load stays
        con.execute("ROLLBACK")
        message = f"{opened.message} (the earlier load of this file stays as it was)"
        return FileResult(path=shown, kind=kind, status="rejected", message=message, seconds=time.perf_counter() - t0)
    try:
        result = settle_file(con, opened)
    except BaseException:
        abandon_file(con, opened)
        raise
    # the earlier lake file stays while a snapshot kept for rollback reads it; the next run's clean-up removes it
    # after that (``Store.remove_orphans``)
    return result


def _loaded_as(con: duckdb.DuckDBPyConnection, path: Path) -> tuple[str, int | None, str | None, str] | str:
    """(kind, load order, identity, hash) of the load of ``path``'s content, or of its being rolled back (no load
    order); else its SHA-256. A scrape of either metrics kind whose name gives its time is known by that too
    (``landed_hash``)."""
    content = file_sha256(path)
    hashes = sorted({content, *(landed_hash(kind, path, content) for kind in METRIC_KINDS)})
    found = con.execute(
        "SELECT kind, load_seq, relative_path, file_hash FROM meta.loaded_files WHERE list_contains(?, file_hash) "
        "UNION ALL SELECT kind, NULL, NULL, file_hash FROM meta.rolled_back_files WHERE list_contains(?, file_hash)",
        [hashes, hashes],
    ).fetchall()
    return found[0] if found else content


def copied_from_object_storage(con: duckdb.DuckDBPyConnection, store: "Store", url: str) -> Path | FileResult:
    """The copy in the ledger's folder of the object at ``url`` that a nightly of its landing folder loaded, or the
    rejection saying why there is none."""
    from pipeline.storage.remote import local_copy

    found = con.execute(
        "SELECT kind, relative_path FROM meta.loaded_files WHERE path = ? ORDER BY load_seq DESC LIMIT 1", [url]
    ).fetchall()
    if not found or not found[0][1]:
        message = (
            f"{url}: no file this ledger loaded has this URL; a landing folder in object storage is loaded by "
            "`costledger nightly s3://bucket/prefix`, and its files can then be reprocessed by their URL"
        )
        return FileResult(path=url, kind="?", status="rejected", message=message)
    kind, relative = found[0]
    landing = url.removesuffix(f"/{kind}/{relative}")
    local = local_copy(store.state, landing) / kind / relative
    if not local.is_file():
        message = f"{url}: its copy in the ledger's folder is gone; run `costledger nightly {landing}` to copy it again"
        return FileResult(path=url, kind=kind, status="rejected", message=message)
    return local
