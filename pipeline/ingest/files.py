"""Loading one landing file into its raw table: recognise, read, type, check, quarantine, commit.

A file is loaded whole or not at all: its good rows are written to a new Parquet
file in the lake (under a temporary name, then renamed), and the manifest row that
names that file is committed in one transaction with the file's quarantined rows
and the refreshed raw view. So ``rows in = rows loaded + rows quarantined`` holds
for every file in ``meta.loaded_files``. The same content again (same SHA-256) is
skipped. Rows are deduplicated on the table's natural key: an identical row is
counted once, a row with the same key and different content is a conflict. Both go
to ``meta.quarantine`` with their reason; nothing is overwritten, nothing dropped.
Snapshot kinds (invoices) are the exception: a newer export of an invoice
replaces the older one (``intermediate.int_invoice_lines_current``), so their rows
are only deduplicated within the file.

The file is one object from start to end (``pipeline.ingest.loading.LoadingFile``); each step below is a
function of it, and the work of each lives in its own module: ``recognise`` (new or seen), ``reading`` (what the
file is, and its rows), ``checks`` and ``kindrules`` (every row typed and judged), ``lakewrite`` (the lake file and
the rows of ``meta``). A file goes through three steps: ``stage_file`` (recognise, read, type and check every row,
deduplicate, write the lake file under a temporary name; Great Expectations'
check of a sample goes to GX's process), ``open_file`` (seal the lake file and write
the file's quarantine, keys, manifest row and raw view in a transaction left open) and
``settle_file`` (GX agrees: commit; else roll back and remove the lake file). A run
stages the next file between the last two (``pipeline.ingest.loader.FileLoader``), so GX's
check of one file overlaps DuckDB's work on the next, which sees the open file as
loaded; ``ingest_file`` does the three in a row.
"""

from __future__ import annotations

from concurrent.futures import wait
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from pipeline.base.faults import crashpoint
from pipeline.base.text import first_line
from pipeline.ingest.checks import check_rows
from pipeline.ingest.reading import read_rows
from pipeline.ingest.kindrules import quarantines_and_counts, same_invoice_again
from pipeline.ingest.lakewrite import reject, seal_lake_file, unseal, write_file_rows, write_lake_tmp
from pipeline.ingest.loading import FileResult, IngestOptions, LoadingFile, changed_message, unreadable_message
from pipeline.ingest.readers import FileRejected
from pipeline.ingest.recognise import landed_hash, loaded_identities, recognise
from pipeline.ingest.validate import ValidationPipelineError
from pipeline.storage.catalog import UNDEDUPLICATED, refresh_stale_raw_views
from pipeline.storage.lake import HashAhead, file_sha256, file_signature
from schemas.tables import KINDS

if TYPE_CHECKING:
    from pipeline.storage.store import Store

__all__ = [
    "FILE_FAILURES",
    "FileResult",
    "IngestOptions",
    "LoadingFile",
    "abandon_file",
    "discard_staged",
    "file_failed",
    "ingest_file",
    "loaded_identities",
    "open_file",
    "settle_file",
    "stage_file",
]


#: What one file's load may end in that is the file's own failure, not the run's: its reading or checking exhausted
#: the memory the ledger may use, DuckDB aborted the file's transaction, Great Expectations could not agree with
#: the SQL rules on its rows, or DuckDB refused one of its values in a way no check foresaw. The file is rejected
#: whole with the reason and the run goes on; a full disk (IOException), Ctrl-C and anything else still stop it.
FILE_FAILURES: tuple[type[BaseException], ...] = (
    MemoryError,
    ValidationPipelineError,
    duckdb.OutOfMemoryException,
    duckdb.TransactionException,
    duckdb.ConversionException,
    duckdb.InvalidInputException,
    duckdb.OutOfRangeException,
)


def file_failed(
    con: duckdb.DuckDBPyConnection, kind: str, path: Path, *, identity: str, run_id: str | None, exc: BaseException
) -> FileResult:
    """Record the rejection of a file whose load ended in one of ``FILE_FAILURES`` (its transaction is rolled back
    first), with a one-line reason naming it."""
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass  # no transaction was open
    f = LoadingFile(kind=kind, path=path, identity=identity, run_id=run_id)
    return reject(con, f, failure_message(f.shown, exc))


def failure_message(shown: str, exc: BaseException) -> str:
    """One line: why the file was rejected whole. The cause is the first memory or validation failure behind ``exc``
    (an out-of-memory error leaves the transaction aborted, and the clean-up's error is the one raised)."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(
        cause, (MemoryError, duckdb.OutOfMemoryException, ValidationPipelineError)
    ):
        cause = cause.__context__
    exc = cause or exc
    first = first_line(exc)
    if isinstance(exc, (MemoryError, duckdb.OutOfMemoryException)):
        why = (
            "reading and checking it needs more memory than the ledger may use ([ledger] memory_limit): a value or "
            "a column far larger than it looks"
        )
    elif isinstance(exc, ValidationPipelineError):
        why = first.removeprefix(f"{shown}: ")
    else:
        why = f"DuckDB could not load it ({first})"
    return f"{shown}: rejected whole, nothing loaded from it: {why}; the rest of the run went on"


def ingest_file(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    path: Path,
    store: "Store",
    *,
    run_id: str | None = None,
    options: IngestOptions = IngestOptions(),
    identity: str | None = None,
    hashes: HashAhead | None = None,
) -> FileResult:
    """Load one file of ``kind`` into its raw table, whole or not at all: ``stage_file``, ``open_file`` and
    ``settle_file`` one after the other (a run overlaps them across files: ``pipeline.run.nightly.Run.load``).

    ``identity`` is the file's name for the same-name conflict check: its path relative to its
    kind folder (``day=2026-07-10/part-0.csv``); default the file name. ``hashes``: see ``recognise``.
    """
    staged = stage_file(con, kind, path, store, run_id=run_id, options=options, identity=identity, hashes=hashes)
    if isinstance(staged, FileResult):
        return staged
    opened = open_file(con, staged, store, run_id)
    if isinstance(opened, FileResult):
        return opened
    result = settle_file(con, opened)
    refresh_stale_raw_views(con)
    return result


def stage_file(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    path: Path,
    store: "Store",
    *,
    run_id: str | None = None,
    options: IngestOptions = IngestOptions(),
    identity: str | None = None,
    hashes: HashAhead | None = None,
    lake_name: str | None = None,
    load_seq: int | None = None,
) -> LoadingFile | FileResult:
    """Recognise, read, type and check the file and write its lake file under a temporary name, with GX's verdict
    left pending; or the file's result when that is all (skipped, repaired, rejected). Commits nothing: run inside
    the transaction of the file before it (``open_file``), it sees that file as loaded. ``lake_name`` and
    ``load_seq`` (a file loaded again, ``pipeline.run.reprocess``): its lake file's name and its place in the load
    order, instead of its hash and the next place."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    f = LoadingFile(
        kind=kind,
        path=path,
        identity=identity or path.name,
        options=options,
        run_id=run_id,
        lake_name=lake_name,
        load_seq=load_seq,
        check_existing=kind not in UNDEDUPLICATED,
    )
    known = recognise(con, f, store, hashes)
    if known is not None:
        return known
    from pipeline.ingest.validate import warm_up

    warm_up()
    crashpoint("ingest.read")
    try:
        f.read = read_rows(kind, path, [c.name for c in f.columns], options)
    except FileRejected as exc:
        return reject(con, f, str(exc))
    except OSError as exc:
        return reject(con, f, unreadable_message(f.shown, exc))
    crashpoint("ingest.after_read")
    # a header alone, blank lines, an empty JSON array: no row to load, nor to quarantine (a file whose records are
    # none of them rows of the ledger, ``nothing_read``, is loaded as nothing so that the nightly does not offer it
    # again)
    if f.read.rows_in == 0 and f.read.nothing_read is None:
        return reject(con, f, f"{f.shown}: the file holds no rows; rejected whole, nothing loaded")
    if missing := _missing_required(f):
        return reject(con, f, missing)
    f.place_in(store)
    f.tables.register(con, f.read)
    _check_and_write(con, f)
    f.seconds = f.elapsed()
    message = _after_read(con, f)
    if message is not None:
        discard_staged(con, f)
        return reject(con, f, message)
    return f


def _check_and_write(con: duckdb.DuckDBPyConnection, f: LoadingFile) -> None:
    """``stage_file``'s checks (GX's sent to its process) and the lake file's temporary copy: sets GX's pending
    result, the rows to load and quarantined, the duplicates, and whether the lake file is the landing file."""
    try:
        f.gx = check_rows(con, f)
        f.loaded, f.quarantined = quarantines_and_counts(con, f)
        f.duplicates = con.execute(
            f"SELECT count(*) FROM {f.tables.verdicts} WHERE starts_with(verdict, 'identical duplicate')"
        ).fetchall()[0][0]  # type: ignore[index]
        f.verbatim = write_lake_tmp(con, f)
    except BaseException:
        if f.gx is not None and not f.gx.done():
            wait([f.gx])  # an error here: let GX finish before the next file uses its context
        _clean_up(con, f)
        raise
    assert f.read is not None and f.loaded + f.quarantined == f.read.rows_in, "rows in != loaded + quarantined"


def open_file(
    con: duckdb.DuckDBPyConnection,
    staged: LoadingFile,
    store: "Store",
    run_id: str | None = None,
    begin: bool = True,
) -> LoadingFile | FileResult:
    """Seal the staged file's lake file into the lake and, in a transaction left open, write its quarantined rows,
    its keys, its manifest row and the raw view over it; or its rejection (a verbatim copy that is not the file
    hashed). The work tables are dropped. Nothing is committed before GX agrees: ``settle_file`` (or
    ``abandon_file``). ``begin=False``: the caller's transaction is already open (a file loaded again)."""
    f = staged
    t_open = f.elapsed()
    try:
        expected = f.file_hash if f.verbatim else None
        lake_sha = seal_lake_file(f.tmp_path, f.lake_path, expected) if f.loaded else None
        if f.loaded and lake_sha is None:
            f.gx.result()  # type: ignore[union-attr]  # GX's disagreement (a pipeline error) still stops the run
            return reject(con, f, changed_message(f.shown, f.file_hash), f.seconds + f.elapsed() - t_open)
        f.sealed = lake_sha is not None
        if begin:
            con.execute("BEGIN TRANSACTION")
        try:
            write_file_rows(con, f, store, (f.lake_rel, lake_sha) if lake_sha else None)
        except BaseException:
            con.execute("ROLLBACK")
            unseal(f)
            raise
    except BaseException:
        wait([f.gx])  # type: ignore[list-item]  # let GX finish before the next file uses its context
        raise
    finally:
        _clean_up(con, f)
    f.seconds += f.elapsed() - t_open
    return f


def settle_file(con: duckdb.DuckDBPyConnection, opened: LoadingFile) -> FileResult:
    """Wait for GX's verdict on an opened file; it agrees: record the rows it validated and commit; else roll the
    file back (its sealed lake file removed) and raise."""
    f = opened
    t_settle = f.elapsed()
    try:
        gx_rows = f.gx.result()  # type: ignore[union-attr]
        crashpoint("ingest.validated")
        con.execute("UPDATE meta.loaded_files SET rows_gx_validated = ? WHERE file_hash = ?", [gx_rows, f.file_hash])
        crashpoint("ingest.before_commit")
        con.execute("COMMIT")
    except BaseException:
        abandon_file(con, f)
        raise
    crashpoint("ingest.committed")
    return f.result("loaded", seconds=f.seconds + f.elapsed() - t_settle)


def abandon_file(con: duckdb.DuckDBPyConnection, opened: LoadingFile) -> None:
    """Roll back an opened file's transaction (and whatever ran in it since) and remove its sealed lake file."""
    wait([opened.gx])  # type: ignore[list-item]
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass  # no transaction left to roll back
    unseal(opened)
    opened.tables.drop_tables(con)  # the rollback brought back the work tables dropped in the transaction


def discard_staged(con: duckdb.DuckDBPyConnection, staged: LoadingFile) -> None:
    """Drop a staged file that will not be opened: its temporary lake file and work tables (GX finished)."""
    wait([staged.gx])  # type: ignore[list-item]
    _clean_up(con, staged)


def _clean_up(con: duckdb.DuckDBPyConnection, f: LoadingFile) -> None:
    """After a file, loaded or not: its temporary Parquet (renamed into the lake when all went well), its incoming
    rows and its work tables."""
    if f.tmp_path is not None:
        f.tmp_path.unlink(missing_ok=True)
    f.tables.clean_up(con, f.read)


def _missing_required(f: LoadingFile) -> str | None:
    """The rejection message when the file lacks a required column, else None."""
    missing = [c.name for c in f.columns if c.required and c.name not in f.present]
    if not missing:
        return None
    plural = "s" if len(missing) > 1 else ""
    return f"{f.shown}: required column{plural} {', '.join(missing)} missing (line 1 / header)"


def _after_read(con: duckdb.DuckDBPyConnection, f: LoadingFile) -> str | None:
    """The rejection message of a file read and checked, or None: it changed while it was read (every read of the
    landing file is done, and the hash recorded must be of the bytes they saw: the same hash now, and no write since
    the first hash, ``signed_sha256``), or it is an invoice delivered again."""
    if landed_hash(f.kind, f.path, file_sha256(f.path)) != f.file_hash or file_signature(f.path) != f.signature:
        return changed_message(f.shown, f.file_hash)
    if f.kind == "invoices":
        return same_invoice_again(con, f)
    return None
