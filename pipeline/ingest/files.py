"""Loading one landing file into its raw table: read, type, check, quarantine, commit.

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

A file goes through three steps: ``stage_file`` (recognise, read, type and check every
row, deduplicate, write the lake file under a temporary name; Great Expectations'
check of a sample goes to GX's process), ``open_file`` (seal the lake file and write
the file's quarantine, keys, manifest row and raw view in a transaction left open) and
``settle_file`` (GX agrees: commit; else roll back and remove the lake file). A run
stages the next file between the last two (``pipeline.nightly.Run.load``), so GX's
check of one file overlaps DuckDB's work on the next, which sees the open file as
loaded; ``ingest_file`` does the three in a row.
"""

from __future__ import annotations

import gzip
import os
import shutil
import zlib
import time
from concurrent.futures import Future, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Literal

import duckdb

from pipeline.ingest.pricelists import PriceListMapping, read_price_list, sniff_price_list
from pipeline.ingest.billing import BillingMapping, read_export, sniff_billing, sniff_usage
from pipeline.storage.catalog import (
    UNDEDUPLICATED,
    key_hash_sql,
    mark_raw_view_stale,
    rebuild_in_full,
    refresh_raw_view,
    refresh_stale_raw_views,
    sql_literal,
)
from pipeline.faults import crashpoint
from pipeline.storage.lake import HashAhead, Signature, file_sha256, file_signature, lake_damage, seal, signed_sha256
from pipeline.ingest.loadtests import LoadTestMapping, read_load_test
from pipeline.ingest.loadtests import sniff as sniff_load_test
from pipeline.ingest.logformats import LogMapping, sniff
from pipeline.ingest.readers import (
    FileRejected,
    Limits,
    ReadResult,
    detect_format,
    limited,
    read_file,
    read_request_log,
    unknown_columns_message,
)
from schemas.ddl import ColumnSpec, canonical_columns, natural_key, table_name, view_value_sql
from schemas.expectations import SPECIAL_FORMATS, Bounds, suites
from schemas.tables import FX_DATE_COLUMNS, KINDS, LEDGER_CURRENCY, READ_OPTIONS, ReadOptions

if TYPE_CHECKING:
    from pipeline.storage.store import Store


#: A file under this folder of its kind folder corrects rows loaded earlier (``IngestOptions.correction``).
CORRECTIONS_FOLDER = "corrections"

#: Quarantined raw values are kept to this many characters.
RAW_VALUE_CHARS = 200

Status = Literal["loaded", "skipped", "rejected", "repaired"]


@dataclass(kw_only=True, frozen=True)
class IngestOptions:
    """How files are read and validated (from the settings, and --format)."""

    gx_max_rows: int = 20_000
    log_format: str | None = None
    """Format of every file: a request-log format for requests, a billing export format for invoices (None: the
    matching [[request_logs]] / [[billing_exports]] entry, else detected)."""
    log_mappings: tuple[LogMapping, ...] = ()
    load_test_mappings: tuple[LoadTestMapping, ...] = ()
    billing_mappings: tuple[BillingMapping, ...] = ()
    price_list_mappings: tuple[PriceListMapping, ...] = ()
    bounds: Bounds = Bounds()
    """Plausibility bounds: values beyond them are quarantined."""
    max_line_bytes: int = 64 * 2**20
    max_file_bytes: int = 64 * 2**30
    invoice_duplicates_wanted: tuple[str, ...] = ()
    """Invoice ids loaded even when they repeat an earlier invoice's periods and line amounts."""
    extra_columns: tuple[str, ...] = ()
    """Columns of canonical files the ledger leaves out without a word (any other unknown column rejects the file)."""
    correction: bool = False
    """The file corrects rows loaded earlier: a row with the key of an earlier row and other content restates it
    (``meta.superseded_rows``) instead of being a conflict. Also true for a file under a ``corrections/`` folder."""

    def mapping_for(self, path: Path) -> LogMapping:
        return next((m for m in self.log_mappings if m.applies_to(path)), LogMapping())

    def load_test_mapping_for(self, path: Path) -> LoadTestMapping:
        return next((m for m in self.load_test_mappings if m.applies_to(path)), LoadTestMapping())

    def billing_mapping_for(self, path: Path) -> BillingMapping:
        return next((m for m in self.billing_mappings if m.applies_to(path)), BillingMapping())

    def price_list_mapping_for(self, path: Path) -> PriceListMapping:
        return next((m for m in self.price_list_mappings if m.applies_to(path)), PriceListMapping())


@dataclass(kw_only=True, frozen=True)
class FileResult:
    """What happened to one landing file."""

    path: str
    kind: str
    status: Status
    rows_in: int = 0
    rows_loaded: int = 0
    rows_quarantined: int = 0
    rows_duplicate: int = 0
    """Of the rows quarantined, the identical duplicates (counted once): an overlapping delivery, not bad data."""
    message: str = ""
    seconds: float = 0.0


# ---------------------------------------------------------------- typing SQL


def _text(kind: str, col: str) -> str:
    """The column's value as trimmed text, NULL for empty (and the kind's null tokens, e.g. FOCUS 'NULL')."""
    expr = f"NULLIF(trim(CAST(i.\"{col}\" AS VARCHAR)), '')"
    for token in READ_OPTIONS.get(kind, ReadOptions()).null_tokens:
        expr = f"NULLIF({expr}, '{token}')"
    return expr


#: Names that identify what is priced: one spelling per name, whatever the file's Unicode form
NAME_COLUMNS = frozenset({"provider", "model"})
#: zero-width space, non-joiner and joiner, word joiner, byte-order mark
_ZERO_WIDTH = "[\\x{200B}-\\x{200D}\\x{2060}\\x{FEFF}]"


def _typed_expr(kind: str, c: ColumnSpec, present: set[str]) -> str:
    options = READ_OPTIONS.get(kind, ReadOptions())
    if c.name not in present:
        if c.name in options.defaults:
            return f"CAST('{options.defaults[c.name]}' AS {c.duckdb_type})"
        return f"CAST(NULL AS {c.duckdb_type})"
    t = _text(kind, c.name)
    if c.name in NAME_COLUMNS:
        # NFC (a composed é, not e + combining accent), no zero-width characters, trimmed; the letter case is kept.
        # ASCII text (as many bytes as characters), which most names are, has neither to change: the regular
        # expression and NFC, several times the cost of a trim on every row, are skipped for it
        normalised = f"NULLIF(trim(nfc_normalize(regexp_replace({t}, '{_ZERO_WIDTH}', '', 'g'))), '')"
        return f"CASE WHEN strlen({t}) = length({t}) THEN {t} ELSE {normalised} END"
    if c.name in options.lower:
        return f"lower({t})"
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
    if c.name == "currency":
        return f"upper({t})"
    return f"TRY_CAST({t} AS {c.duckdb_type})"


#: Source types that are the ledger's type already (Parquet): read as they are, not through text.
NATIVE_TYPES: dict[str, tuple[str, ...]] = {
    "BIGINT": ("BIGINT", "INTEGER", "SMALLINT", "TINYINT", "UINTEGER", "USMALLINT", "UTINYINT"),
    "INTEGER": ("INTEGER", "SMALLINT", "TINYINT", "USMALLINT", "UTINYINT"),
    "BOOLEAN": ("BOOLEAN",),
    "DATE": ("DATE",),
    "TIMESTAMP": ("TIMESTAMP", "TIMESTAMP_MS", "TIMESTAMP_S", "TIMESTAMP_NS"),
}


def _native_expr(c: ColumnSpec, source_type: str) -> str:
    if source_type == "TIMESTAMP_NS":
        # truncated to the microsecond, as text is: a cast rounds 23:59:59.999999999 into the next day and month
        return f'make_timestamp(epoch_ns(i."{c.name}") // 1000)'
    return f'CAST(i."{c.name}" AS {c.duckdb_type})'


def native_columns(kind: str, cols: list[ColumnSpec], source_types: dict[str, str]) -> set[str]:
    """Columns whose source type is already the ledger's (no parsing, no text round trip)."""
    options = READ_OPTIONS.get(kind, ReadOptions())
    return {
        c.name
        for c in cols
        if source_types.get(c.name) in NATIVE_TYPES.get(c.duckdb_type, ())
        and (kind, c.name) not in SPECIAL_FORMATS
        and c.name not in options.lower
    }


_TYPE_WORDS = {
    "BIGINT": "a whole number",
    "INTEGER": "a whole number",
    "TIMESTAMP": "an ISO-8601 timestamp",
    "DATE": "a date (YYYY-MM-DD)",
    "BOOLEAN": "true or false",
    "VARCHAR": "text",
}


def _type_word(kind: str, c: ColumnSpec) -> str:
    if SPECIAL_FORMATS.get((kind, c.name)) == "year_month":
        return "a month (YYYY-MM)"
    if c.duckdb_type.startswith("DECIMAL"):
        return f"a decimal number fitting {c.duckdb_type}"
    return _TYPE_WORDS[c.duckdb_type]


def _type_checks(kind: str, cols: list[ColumnSpec], present: set[str], native: set[str]) -> list[tuple[str, str, str]]:
    """(column, bad-when predicate over the typed table, message SQL expression) for missing and unparsable values.

    A ``native`` column arrived in its own type (Parquet): it can be missing, never unparsable.
    """
    checks: list[tuple[str, str, str]] = []
    for c in cols:
        if c.required:
            missing = f'"{c.name}" IS NULL' if c.name in native else f"_raw_{c.name} IS NULL"
            checks.append((c.name, missing, f"'{c.name} is missing'"))
        if c.name in present and c.name not in native and c.duckdb_type != "VARCHAR":
            checks.append(
                (
                    c.name,
                    f'_raw_{c.name} IS NOT NULL AND "{c.name}" IS NULL',
                    f"'{c.name}: ''' || left(_raw_{c.name}, 60) || ''' is not {_type_word(kind, c)}'",
                )
            )
    return checks


# ---------------------------------------------------------------- ingest


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
    ``settle_file`` one after the other (a run overlaps them across files: ``pipeline.nightly.Run.load``).

    ``identity`` is the file's name for the same-name conflict check: its path relative to its
    kind folder (``day=2026-07-10/part-0.csv``); default the file name. ``hashes``: see ``_recognise``.
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


@dataclass(kw_only=True)
class StagedFile:
    """A new file read, typed and checked (temp tables ``flags`` and ``verdicts``), its lake file written under a
    temporary name and Great Expectations' verdict on it pending in GX's process (``gx``)."""

    kind: str
    path: Path
    identity: str
    file_hash: str
    read: ReadResult
    raw_cols: list[str]
    loaded: int
    quarantined: int
    verbatim: bool
    gx: Future[int]
    tmp_path: Path
    lake_rel: str
    lake_path: Path
    seconds: float
    """Time spent on the file so far (the run works on the next file while GX checks this one)."""
    sealed: bool = False
    load_seq: int | None = None
    """Its place in the load order when it is loaded again; None: after every file loaded so far."""
    duplicates: int = 0
    """Rows quarantined as identical duplicates."""

    @property
    def shown(self) -> str:
        return str(self.path)


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
) -> StagedFile | FileResult:
    """Recognise, read, type and check the file and write its lake file under a temporary name, with GX's verdict
    left pending; or the file's result when that is all (skipped, repaired, rejected). Commits nothing: run inside
    the transaction of the file before it (``open_file``), it sees that file as loaded. ``lake_name`` and
    ``load_seq`` (a file loaded again, ``pipeline.reprocess``): its lake file's name and its place in the load
    order, instead of its hash and the next place."""
    t0 = time.perf_counter()
    identity = identity or path.name
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    model = KINDS[kind]
    table = f"raw.{table_name(model)}"
    cols = canonical_columns(model)
    shown = str(path)
    file_hash, signature, known = _recognise(
        con, kind, path, store, options=options, identity=identity, run_id=run_id, t0=t0, hashes=hashes
    )
    if known is not None:
        return known
    from pipeline.ingest.validate import warm_up

    warm_up()
    crashpoint("ingest.read")
    try:
        read = _read(kind, path, [c.name for c in cols], options)
    except FileRejected as exc:
        return _reject(con, kind, shown, file_hash, message=str(exc), run_id=run_id, t0=t0)
    except OSError as exc:
        return _reject(con, kind, shown, file_hash, message=_unreadable(shown, exc), run_id=run_id, t0=t0)
    present = set(read.present)
    if missing := _missing_required(cols, present, shown):
        return _reject(con, kind, shown, file_hash, message=missing, run_id=run_id, t0=t0)

    _register_incoming(con, read)
    if identity.split("/", 1)[0] == CORRECTIONS_FOLDER:
        options = replace(options, correction=True)
    lake_rel = f"{table_name(model)}/{lake_name or file_hash}.parquet"
    tmp_path = store.tmp / f"{file_hash}.parquet.costledger-tmp"
    gx, raw_cols, loaded, quarantined, verbatim = _check_and_write(
        con, kind, path, read, present=present, table=table, options=options, file_hash=file_hash, tmp_path=tmp_path
    )
    staged = StagedFile(
        kind=kind,
        path=path,
        identity=identity,
        file_hash=file_hash,
        read=read,
        raw_cols=raw_cols,
        loaded=loaded,
        quarantined=quarantined,
        verbatim=verbatim,
        gx=gx,
        tmp_path=tmp_path,
        lake_rel=lake_rel,
        lake_path=store.lake / lake_rel,
        seconds=time.perf_counter() - t0,
        load_seq=load_seq,
        duplicates=con.execute(
            "SELECT count(*) FROM verdicts WHERE starts_with(verdict, 'identical duplicate')"
        ).fetchall()[0][0],
    )
    message = _after_read(con, kind, path, (file_hash, signature), options)
    if message is not None:
        discard_staged(con, staged)
        return _reject(con, kind, shown, file_hash, message=message, run_id=run_id, t0=t0)
    return staged


def _check_and_write(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    path: Path,
    read: ReadResult,
    *,
    present: set[str],
    table: str,
    options: IngestOptions,
    file_hash: str,
    tmp_path: Path,
) -> tuple[Future[int], list[str], int, int, bool]:
    """``stage_file``'s checks (GX's sent to its process) and the lake file's temporary copy: (GX's pending result,
    the raw columns, rows to load, rows quarantined, whether the lake file is the landing file byte for byte)."""
    model = KINDS[kind]
    cols = canonical_columns(model)
    gx: Future[int] | None = None
    try:
        gx, _, raw_cols = _stage_checked(
            con,
            kind,
            cols,
            present,
            key=natural_key(model),
            table=table,
            check_existing=kind not in UNDEDUPLICATED,
            where=str(path),
            gx_max_rows=options.gx_max_rows,
            bounds=options.bounds,
            verbatim=read.verbatim,
            correction=options.correction,
        )
        loaded, quarantined = _kind_quarantines_and_counts(con, kind, read)
        verbatim = _write_lake_tmp(con, path, read, cols, loaded=loaded, file_hash=file_hash, tmp_path=tmp_path)
    except BaseException:
        if gx is not None and not gx.done():
            wait([gx])  # an error here: let GX finish before the next file uses its context
        _clean_up(con, read, tmp_path)
        raise
    assert loaded + quarantined == read.rows_in, "rows in != loaded + quarantined"
    return gx, raw_cols, loaded, quarantined, verbatim


def open_file(
    con: duckdb.DuckDBPyConnection,
    staged: StagedFile,
    store: "Store",
    run_id: str | None = None,
    begin: bool = True,
) -> StagedFile | FileResult:
    """Seal the staged file's lake file into the lake and, in a transaction left open, write its quarantined rows,
    its keys, its manifest row and the raw view over it; or its rejection (a verbatim copy that is not the file
    hashed). The staging tables are dropped. Nothing is committed before GX agrees: ``settle_file`` (or
    ``abandon_file``). ``begin=False``: the caller's transaction is already open (a file loaded again)."""
    t0 = time.perf_counter()
    s = staged
    try:
        lake_sha = _seal_lake_file(s.tmp_path, s.lake_path, s.file_hash if s.verbatim else None) if s.loaded else None
        if s.loaded and lake_sha is None:
            s.gx.result()  # GX's disagreement (a pipeline error) still stops the run
            message = _changed_while_loading(s.shown, s.file_hash)
            return _reject(con, s.kind, s.shown, s.file_hash, message=message, run_id=run_id, t0=t0 - s.seconds)
        s.sealed = lake_sha is not None
        lake_file = (s.lake_rel, lake_sha) if lake_sha else None
        if begin:
            con.execute("BEGIN TRANSACTION")
        try:
            _write_file_rows(con, s, store, run_id, lake_file)
        except BaseException:
            con.execute("ROLLBACK")
            _unseal(s)
            raise
    except BaseException:
        wait([s.gx])  # let GX finish before the next file uses its context
        raise
    finally:
        _clean_up(con, s.read, s.tmp_path)
    s.seconds += time.perf_counter() - t0
    return s


def settle_file(con: duckdb.DuckDBPyConnection, opened: StagedFile) -> FileResult:
    """Wait for GX's verdict on an opened file; it agrees: record the rows it validated and commit; else roll the
    file back (its sealed lake file removed) and raise."""
    t0 = time.perf_counter()
    s = opened
    try:
        gx_rows = s.gx.result()
        crashpoint("ingest.validated")
        con.execute("UPDATE meta.loaded_files SET rows_gx_validated = ? WHERE file_hash = ?", [gx_rows, s.file_hash])
        crashpoint("ingest.before_commit")
        con.execute("COMMIT")
    except BaseException:
        abandon_file(con, s)
        raise
    crashpoint("ingest.committed")
    seconds = s.seconds + time.perf_counter() - t0
    return FileResult(
        path=s.shown,
        kind=s.kind,
        status="loaded",
        rows_in=s.read.rows_in,
        rows_loaded=s.loaded,
        rows_quarantined=s.quarantined,
        seconds=seconds,
        rows_duplicate=s.duplicates,
    )


def abandon_file(con: duckdb.DuckDBPyConnection, opened: StagedFile) -> None:
    """Roll back an opened file's transaction (and whatever ran in it since) and remove its sealed lake file."""
    wait([opened.gx])
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass  # no transaction left to roll back
    _unseal(opened)
    _drop_staging(con)  # the rollback brought back the staging tables dropped in the transaction


def discard_staged(con: duckdb.DuckDBPyConnection, staged: StagedFile) -> None:
    """Drop a staged file that will not be opened: its temporary lake file and staging tables (GX finished)."""
    wait([staged.gx])
    _clean_up(con, staged.read, staged.tmp_path)


def _unseal(s: StagedFile) -> None:
    """Remove a lake file sealed for a file that is not committed (a new file's hash names no other lake file)."""
    if s.sealed:
        s.lake_path.unlink(missing_ok=True)
        s.sealed = False


def _missing_required(cols: list[ColumnSpec], present: set[str], shown: str) -> str | None:
    """The rejection message when the file lacks a required column, else None."""
    missing = [c.name for c in cols if c.required and c.name not in present]
    if not missing:
        return None
    plural = "s" if len(missing) > 1 else ""
    return f"{shown}: required column{plural} {', '.join(missing)} missing (line 1 / header)"


def _after_read(
    con: duckdb.DuckDBPyConnection, kind: str, path: Path, signed: tuple[str, Signature], options: IngestOptions
) -> str | None:
    """The rejection message of a file read and checked, or None: it changed while it was read (every read of the
    landing file is done, and the hash recorded must be of the bytes they saw: the same hash now, and no write since
    the first hash, ``signed_sha256``), or it is an invoice delivered again."""
    file_hash, signature = signed
    if file_sha256(path) != file_hash or file_signature(path) != signature:
        return _changed_while_loading(str(path), file_hash)
    if kind == "invoices":
        return _same_invoice_again(con, str(path), options.invoice_duplicates_wanted)
    return None


def _unreadable(shown: str, exc: OSError) -> str:
    """The rejection of a file the operating system will not let the ledger read (a full disk is no such case: it
    stops the run, exit 6)."""
    import errno

    if exc.errno == errno.ENOSPC:
        raise exc
    return f"{shown}: cannot be read ({exc.strerror or exc}); nothing loaded: make it readable and run again"


def _changed_while_loading(shown: str, file_hash: str) -> str:
    return (
        f"{shown}: changed while it was being loaded (its copy is not the file hashed as sha256 "
        f"{file_hash[:12]}); nothing loaded: deliver it again once it is complete"
    )


def _write_lake_tmp(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    read: ReadResult,
    cols: list[ColumnSpec],
    *,
    loaded: int,
    file_hash: str,
    tmp_path: Path,
) -> bool:
    """Write the lake file's temporary copy; True when it is the landing file itself, byte for byte.

    That is when every row loads and the raw view reads each as its checks typed it (``_as_is``); otherwise the
    good rows are re-encoded with their provenance. Nothing is written when no row loads.
    """
    if (
        read.verbatim
        and loaded == read.rows_in
        and bool(con.execute("SELECT bool_and(_as_is) FROM flags").fetchone()[0])
    ):
        shutil.copyfile(path, tmp_path)
        return True
    if loaded:
        _copy_good_rows(con, cols, "flags f ANTI JOIN verdicts v ON v._line = f._line", file_hash, tmp_path)
    return False


def _kind_quarantines_and_counts(con: duckdb.DuckDBPyConnection, kind: str, read: ReadResult) -> tuple[int, int]:
    """The kind's own quarantines (overlapping prices; amounts without an exchange rate), then (rows to load, rows
    quarantined: the verdicts and the unreadable lines)."""
    if kind == "prices":
        _quarantine_price_overlaps(con)
    if kind in FX_DATE_COLUMNS:
        _quarantine_without_rate(con, FX_DATE_COLUMNS[kind])
    total, quarantined = con.execute("SELECT (SELECT count(*) FROM flags), (SELECT count(*) FROM verdicts)").fetchall()[
        0
    ]  # type: ignore[misc]
    return total - quarantined, quarantined + len(read.bad_lines)


# a loaded file's identity (its path under its kind folder; the file name for files loaded by path)
_IDENTITY = "coalesce(relative_path, regexp_extract(path, '[^/]+$'))"


def loaded_identities(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], str | None]:
    """The (kind, identity) of every loaded file, with the lake file of its latest load: a guess of which files
    a run loaded before, that decides only when GX is imported and which files are hashed ahead (each file is
    still told new or seen by its hash)."""
    rows = con.execute(f"SELECT kind, {_IDENTITY}, lake_file FROM meta.loaded_files ORDER BY load_seq").fetchall()
    return {(kind, identity): lake_file for kind, identity, lake_file in rows}


def _recognise(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    path: Path,
    store: "Store",
    *,
    options: IngestOptions,
    identity: str,
    run_id: str | None,
    t0: float,
    hashes: HashAhead | None,
) -> tuple[str, Signature | None, FileResult | None]:
    """The file's SHA-256 and, for a file seen before, its result: skipped (same content; its lake file rewritten if
    damaged) or rejected (same name, different content; no such file; a file the OS will not let us read); None
    for a new file; with the file's SHA-256 and its signature before that hash (``signed_sha256``). ``hashes`` may
    hold the SHA-256s of the file and of its lake file taken ahead."""
    shown = str(path)
    if not path.is_file():
        return "", None, _reject(con, kind, shown, None, message=f"{shown}: no such file", run_id=run_id, t0=t0)
    try:
        file_hash, signature = (hashes.take_signed(path) if hashes else None) or signed_sha256(path)
    except OSError as exc:
        return "", None, _reject(con, kind, shown, None, message=_unreadable(shown, exc), run_id=run_id, t0=t0)
    already = con.execute(
        "SELECT path, lake_file, lake_sha256 FROM meta.loaded_files WHERE file_hash = ?", [file_hash]
    ).fetchall()
    if already:
        prev_path, lake_file, lake_sha = already[0]
        lake_path = store.lake / lake_file if lake_file else None
        if lake_path and lake_damage(lake_path, lake_sha, hashes.take(lake_path) if hashes else None):
            return (
                file_hash,
                signature,
                _repair_lake_file(con, kind, path, store, file_hash=file_hash, options=options, t0=t0),
            )
        message = f"same content already loaded from {prev_path}"
        return (
            file_hash,
            signature,
            FileResult(path=shown, kind=kind, status="skipped", message=message, seconds=time.perf_counter() - t0),
        )
    rolled_back = con.execute(
        "SELECT strftime(rolled_back_at, '%Y-%m-%d %H:%M'), snapshot FROM meta.rolled_back_files WHERE file_hash = ?",
        [file_hash],
    ).fetchall()
    if rolled_back:
        when, snapshot = rolled_back[0]
        message = (
            f"rolled back on {when} UTC (`costledger rollback` to {snapshot}): not loaded again; "
            f"`costledger reprocess {shown}` loads it"
        )
        return (
            file_hash,
            signature,
            FileResult(path=shown, kind=kind, status="skipped", message=message, seconds=time.perf_counter() - t0),
        )
    if kind not in UNDEDUPLICATED:
        same_name = con.execute(
            "SELECT path, file_hash FROM meta.loaded_files "
            f"WHERE kind = ? AND {_IDENTITY} = ? "
            "ORDER BY load_seq DESC LIMIT 1",
            [kind, identity],
        ).fetchall()
        if same_name:
            prev_path, prev_hash = same_name[0]
            message = (
                f"{shown}: conflict: a {kind} file named {identity} was already loaded from {prev_path} "
                f"(sha256 {prev_hash[:12]}) with different content (now sha256 {file_hash[:12]}); history is not "
                "edited: deliver new rows as a file of a new name (rows loaded before are counted once), corrected "
                f"rows in a {CORRECTIONS_FOLDER}/ folder of the kind folder"
            )
            return file_hash, signature, _reject(con, kind, shown, file_hash, message=message, run_id=run_id, t0=t0)
    return file_hash, signature, None  # ``stage_file`` checks both again once it is read: a change rejects it


def _write_file_rows(
    con: duckdb.DuckDBPyConnection,
    s: StagedFile,
    store: "Store",
    run_id: str | None,
    lake_file: tuple[str, str] | None,
) -> None:
    """In the file's transaction: the quarantined rows (verdicts and unreadable lines), the loaded rows' keys in
    the key index, the manifest row (with the lake file and its SHA-256; the rows GX validated follow when it has
    agreed) and the raw view over the lake."""
    kind, read, raw_cols = s.kind, s.read, s.raw_cols
    model = KINDS[kind]
    cols, key, shown = canonical_columns(model), natural_key(model), s.shown
    good_rows = "flags f ANTI JOIN verdicts v ON v._line = f._line"
    # each raw value cut to 200 characters: a misaligned column cannot copy a prompt into the ledger
    raw_json = (
        "to_json(struct_pack("
        + ", ".join(
            f'"{c.name}" := left('
            + (f"f._raw_{c.name}" if c.name in raw_cols else f'CAST(f."{c.name}" AS VARCHAR)')
            + f", {RAW_VALUE_CHARS})"
            for c in cols
        )
        + "))"
    )
    con.execute(
        f"INSERT INTO meta.quarantine SELECT ?, ?, ?, v._line, v.bad_columns, v.verdict, {raw_json} "
        "FROM verdicts v JOIN flags f ON f._line = v._line ORDER BY v._line",
        [s.file_hash, shown, kind],
    )
    if key and kind not in UNDEDUPLICATED and s.loaded:
        con.execute(f"INSERT INTO meta.key_index SELECT ?, {key_hash_sql(key, 'f')} FROM {good_rows}", [kind])
    if read.bad_lines:
        con.executemany(
            "INSERT INTO meta.quarantine VALUES (?, ?, ?, ?, NULL, ?, NULL)",
            [[s.file_hash, shown, kind, line, reason] for line, reason in read.bad_lines],
        )
    con.execute(
        "INSERT INTO meta.loaded_files (file_hash, kind, path, size_bytes, rows_in, rows_loaded, "
        "rows_quarantined, loaded_at, run_id, load_seq, lake_file, rows_gx_validated, lake_sha256, "
        "relative_path) SELECT ?, ?, ?, ?, ?, ?, ?, current_localtimestamp(), ?, "
        "coalesce(?, (SELECT coalesce(max(load_seq), 0) + 1 FROM meta.loaded_files)), ?, NULL, ?, ?",
        [
            s.file_hash,
            kind,
            shown,
            s.path.stat().st_size,
            read.rows_in,
            s.loaded,
            s.quarantined,
            run_id,
            s.load_seq,  # a file loaded again keeps its place; a new file comes after every file loaded so far
            lake_file[0] if lake_file else None,
            lake_file[1] if lake_file else None,
            s.identity,
        ],
    )
    if con.execute("SELECT count(*) FROM superseding").fetchall()[0][0]:
        con.execute(
            "INSERT INTO meta.superseded_rows SELECT ?, file_hash, line, ?, _line FROM superseding", [kind, s.file_hash]
        )
        rebuild_in_full(con)  # the incremental models folded in the rows now restated
    mark_raw_view_stale(con, store.lake, kind)  # refreshed when next read, not once per file


def _copy_good_rows(
    con: duckdb.DuckDBPyConnection, cols: list[ColumnSpec], rows: str, file_hash: str, tmp_path: Path
) -> None:
    """Write ``rows`` (a FROM clause over ``flags f``) as the file's lake Parquet under a temporary name
    (zstd level 1: on request logs a quarter faster to write than the default level 3, and no larger)."""
    col_list = ", ".join(f'f."{c.name}"' for c in cols)
    # the file hash is hex and the folder is ours: the literal is safe (COPY cannot bind a file name)
    con.execute(
        f"COPY (SELECT {col_list}, {sql_literal(file_hash)} AS source_file_hash, f._line AS source_line "
        f"FROM {rows}) TO {sql_literal(str(tmp_path))} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1)"
    )


def _seal_lake_file(tmp_path: Path, lake_path: Path, expected: str | None = None) -> str | None:
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


def _clean_up(con: duckdb.DuckDBPyConnection, read: ReadResult, tmp_path: Path) -> None:
    """After a file, loaded or not: its temporary Parquet (renamed into the lake when all went well), the
    incoming rows and the staging tables."""
    tmp_path.unlink(missing_ok=True)
    if read.parquet:
        con.execute("DROP VIEW IF EXISTS incoming_arrow")
    else:
        con.unregister("incoming_arrow")
    _drop_staging(con)


def _drop_staging(con: duckdb.DuckDBPyConnection) -> None:
    # one call for the seven statements (a round trip from Python each)
    tables = ("flags", "verdicts", "dup_first", "hit_keys", "existing_rows", "superseding")
    con.execute("DROP VIEW IF EXISTS flag_detail; " + " ".join(f"DROP TABLE IF EXISTS {t};" for t in tables))


def _quarantine_without_rate(con: duckdb.DuckDBPyConnection, date_column: str) -> None:
    """Quarantine the file's rows in a currency other than USD that has no ``fx`` rate on or before the row's
    date: an amount is never converted at 1."""
    refresh_stale_raw_views(con, ["fx"])  # rates loaded earlier in this run
    con.execute(
        f"""
        INSERT INTO verdicts
        SELECT f._line,
               'no fx rate for ' || f.currency || ' on or before ' || CAST(CAST(f."{date_column}" AS DATE) AS VARCHAR)
               || ' (load one as an fx file: currency, date, usd_per_unit); an amount is never converted at 1',
               'currency'
        FROM flags AS f
        WHERE NOT f._bad AND f._line NOT IN (SELECT _line FROM verdicts) AND f.currency <> ?
          AND NOT EXISTS (SELECT 1 FROM raw.fx AS x
                          WHERE x.currency = f.currency AND x.date <= CAST(f."{date_column}" AS DATE))
    """,
        [LEDGER_CURRENCY],
    )


def _same_invoice_again(con: duckdb.DuckDBPyConnection, shown: str, wanted: tuple[str, ...]) -> str | None:
    """The rejection message when an invoice of this file is one loaded before under another id or in another
    format: the same provider and the same lines by period, amount and currency as an invoice of an earlier file,
    without restating any of its lines (a re-export with the same invoice and line ids restates; that is not a
    copy). Invoice ids in ``wanted`` (``[invoices] duplicates_wanted``) load all the same."""
    refresh_stale_raw_views(con, ["invoices"])  # invoices loaded earlier in this run
    lines = (
        "list(struct_pack(s := period_start, e := period_end, a := amount, c := upper(currency)) "
        "ORDER BY period_start, period_end, amount, upper(currency))"
    )
    found = con.execute(
        f"""
        WITH new AS (
            SELECT provider, invoice_id, {lines} AS lines, list(line_id) AS line_ids
            FROM flags AS f
            WHERE f._line NOT IN (SELECT _line FROM verdicts) AND NOT list_contains(?, invoice_id)
            GROUP BY provider, invoice_id
        ),
        old AS (
            SELECT provider, invoice_id, source_file_hash, {lines} AS lines, list(line_id) AS line_ids
            FROM raw.invoices
            GROUP BY provider, invoice_id, source_file_hash
        )
        SELECT n.provider, n.invoice_id, o.invoice_id, l.path, len(n.lines)
        FROM new AS n
        JOIN old AS o
            ON o.provider = n.provider AND o.lines = n.lines
           AND (o.invoice_id <> n.invoice_id OR NOT list_has_any(o.line_ids, n.line_ids))
        JOIN meta.loaded_files AS l ON l.file_hash = o.source_file_hash
        ORDER BY l.load_seq
        LIMIT 1
    """,
        [list(wanted)],
    ).fetchall()
    if not found:
        return None
    provider, new_id, old_id, old_path, n = found[0]
    return (
        f"{shown}: invoice {new_id} of {provider} is the same invoice as {old_id}, loaded from {old_path} (the same "
        f"{n} line(s): periods, amounts and currency), delivered again under another id or format; nothing loaded, "
        f"so it is not counted twice. If both are real, list {new_id!r} in [invoices] duplicates_wanted"
    )


def _quarantine_price_overlaps(con: duckdb.DuckDBPyConnection) -> None:
    """Quarantine the file's price rows whose time range overlaps another price of the same provider, model,
    service tier and min_input_tokens: one in the current catalogue (the latest-loaded row of each key; keys
    this file restates are replaced, so not compared), or an earlier line of this file. The reason names both
    ranges."""
    refresh_stale_raw_views(con, ["prices"])  # prices loaded earlier in this run
    good = "(SELECT * FROM flags f WHERE f._line NOT IN (SELECT _line FROM verdicts))"

    def rng(a: str) -> str:
        return (
            f"strftime({a}.effective_from, '%Y-%m-%d %H:%M') || ' to ' || "
            f"coalesce(strftime({a}.effective_to, '%Y-%m-%d %H:%M'), 'the next price')"
        )

    overlap = (
        "n.provider = o.provider AND n.model = o.model AND n.service_tier = o.service_tier "
        "AND n.min_input_tokens = o.min_input_tokens AND n.effective_from <> o.effective_from "
        "AND ((o.effective_from < n.effective_from AND o.effective_to > n.effective_from) "
        "OR (n.effective_from < o.effective_from AND n.effective_to > o.effective_from))"
    )
    con.execute(f"""
        INSERT INTO verdicts
        SELECT n._line,
               'overlaps another price of ' || n.provider || '/' || n.model
               || CASE WHEN n.service_tier <> 'standard' OR n.min_input_tokens > 0
                  THEN ' (' || n.service_tier || ', from ' || n.min_input_tokens || ' input tokens)' ELSE '' END
               || ': this row runs ' || {rng("n")}
               || ', the ' || o.source || ' runs ' || {rng("o")} || '; restate one of them so they do not overlap',
               'effective_from, effective_to'
        FROM {good} AS n
        JOIN (
            SELECT c.provider, c.model, c.service_tier, c.min_input_tokens, c.effective_from, c.effective_to,
                   'loaded price' AS source, NULL AS _line
            FROM raw.prices AS c JOIN meta.loaded_files AS l ON l.file_hash = c.source_file_hash
            WHERE (c.provider, c.model, c.service_tier, c.min_input_tokens, c.effective_from) NOT IN
                  (SELECT provider, model, service_tier, min_input_tokens, effective_from FROM {good})
            QUALIFY row_number() OVER (PARTITION BY c.provider, c.model, c.service_tier, c.min_input_tokens,
                                       c.effective_from ORDER BY l.load_seq DESC, c.source_line DESC) = 1
            UNION ALL
            SELECT provider, model, service_tier, min_input_tokens, effective_from, effective_to,
                   'price on line ' || _line, _line FROM {good}
        ) AS o ON {overlap} AND (o._line IS NULL OR o._line < n._line)
        QUALIFY row_number() OVER (PARTITION BY n._line ORDER BY o._line NULLS FIRST) = 1
    """)


def _repair_lake_file(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    path: Path,
    store: "Store",
    *,
    file_hash: str,
    options: IngestOptions,
    t0: float,
) -> FileResult:
    """Rewrite a missing or altered lake file from its original landing file (same SHA-256).

    The rows loaded from a file are its well-typed rows minus the lines ``meta.quarantine`` holds for
    it (duplicates of history included): re-derived here, counted against the manifest, written,
    sealed and recorded. Nothing else changes.
    """
    model = KINDS[kind]
    cols = canonical_columns(model)
    shown = str(path)
    lake_rel, rows_loaded = con.execute(
        "SELECT lake_file, rows_loaded FROM meta.loaded_files WHERE file_hash = ?", [file_hash]
    ).fetchall()[0]
    lake_path = store.lake / lake_rel
    tmp_path = store.tmp / f"{file_hash}.parquet.costledger-tmp"
    try:
        read = _read(kind, path, [c.name for c in cols], options)
    except FileRejected as exc:
        return _reject(
            con, kind, shown, file_hash, message=f"cannot rewrite its lake file {lake_rel}: {exc}", run_id=None, t0=t0
        )
    _register_incoming(con, read)
    try:
        gx, _, _ = _stage_checked(
            con,
            kind,
            cols,
            set(read.present),
            key=natural_key(model),
            table=f"raw.{table_name(model)}",
            check_existing=False,
            where=shown,
            gx_max_rows=options.gx_max_rows,
            bounds=options.bounds,
        )
        good = (
            f"flags f ANTI JOIN (SELECT line FROM meta.quarantine WHERE file_hash = {sql_literal(file_hash)}) q "
            "ON q.line = f._line"
        )
        n = con.execute(f"SELECT count(*) FROM {good}").fetchall()[0][0]
        if n != rows_loaded:
            return _reject(
                con,
                kind,
                shown,
                file_hash,
                message=f"cannot rewrite its lake file {lake_rel}: the landing file now yields {n} rows, "
                f"the manifest recorded {rows_loaded}",
                run_id=None,
                t0=t0,
            )
        gx.result()  # GX agrees with the SQL rules (or this raises)
        _copy_good_rows(con, cols, good, file_hash, tmp_path)
        lake_sha = _seal_lake_file(tmp_path, lake_path)
        con.execute("UPDATE meta.loaded_files SET lake_sha256 = ? WHERE file_hash = ?", [lake_sha, file_hash])
        refresh_raw_view(con, store.lake, kind)
    finally:
        _clean_up(con, read, tmp_path)
    return FileResult(
        path=shown,
        kind=kind,
        status="repaired",
        rows_loaded=0,
        message=f"its lake file {lake_rel} was missing or altered: rewritten from this landing file "
        f"({rows_loaded} rows, same SHA-256 as loaded)",
        seconds=time.perf_counter() - t0,
    )


def _read(kind: str, path: Path, allowed: list[str], options: IngestOptions) -> ReadResult:
    """Read under the size limits of the settings (a file over them is rejected whole)."""
    with limited(Limits(options.max_line_bytes, options.max_file_bytes)):
        return _read_any(kind, path, allowed, options)


#: Kinds whose files may also come in a provider's own format: (sniffer, reader, the options' entry for a file).
_PROVIDER_FORMATS: dict[str, tuple[Callable[[bytes], str | None], Callable[..., ReadResult], Callable[..., Any]]] = {
    "invoices": (sniff_billing, read_export, IngestOptions.billing_mapping_for),
    "usage": (sniff_usage, read_export, IngestOptions.billing_mapping_for),
    "prices": (sniff_price_list, read_price_list, IngestOptions.price_list_mapping_for),
}


def _read_any(kind: str, path: Path, allowed: list[str], options: IngestOptions) -> ReadResult:
    """Canonical files through the plain readers; request logs of other formats through their mappings."""
    if kind == "requests":
        mapping = options.mapping_for(path)
        log_format = options.log_format or mapping.format
        if log_format is None:
            fmt, gz = detect_format(path)
            if fmt != "parquet":
                head = _head_bytes(path, gz)
                log_format = sniff(head, fmt == "csv")
            else:
                log_format = "canonical"
        if log_format != "canonical":
            return read_request_log(path, log_format, mapping, allowed)
    if kind in _PROVIDER_FORMATS:  # a provider's own export or price list, read as it is
        sniff_format, read, mapping_for = _PROVIDER_FORMATS[kind]
        file_mapping = mapping_for(options, path)
        fmt, gz = detect_format(path)
        provider_format = options.log_format or file_mapping.format
        if provider_format is None and fmt == "jsonl":
            provider_format = sniff_format(_head_bytes(path, gz))
        if provider_format not in (None, "canonical"):
            return read(path, provider_format, file_mapping, allowed)
    if kind == "load-tests":
        lt_mapping = options.load_test_mapping_for(path)
        fmt, gz = detect_format(path)
        lt_format = lt_mapping.format or (
            sniff_load_test(_head_bytes(path, gz, 1 << 22)) if fmt == "jsonl" else "canonical"
        )
        if lt_format != "canonical":
            return read_load_test(path, lt_format, lt_mapping, allowed)
    read = read_file(path, allowed, READ_OPTIONS.get(kind, ReadOptions()).rename)
    if kind not in FOREIGN_COLUMN_KINDS and (
        message := unknown_columns_message(path, read.unknown, allowed, options.extra_columns)
    ):
        raise FileRejected(message)
    return read


#: Kinds whose files are another standard's (FOCUS: dozens of columns the ledger has no use for): not named as unknown
FOREIGN_COLUMN_KINDS = frozenset({"focus"})


def _register_incoming(con: duckdb.DuckDBPyConnection, read: ReadResult) -> None:
    """Make the file's rows available to DuckDB as ``incoming_arrow`` (columns, plus _line)."""
    if read.parquet is None:
        con.register("incoming_arrow", read.table)
        return
    path, mapping, _ = read.parquet
    cols = ", ".join(f'"{src}" AS "{dst}"' for src, dst in mapping.items())
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW incoming_arrow AS SELECT {cols}{', ' if cols else ''}"
        f"CAST(file_row_number + 1 AS BIGINT) AS _line "
        f"FROM read_parquet({sql_literal(str(path))}, file_row_number = true)"
    )


def _head_bytes(path: Path, gz: bool, size: int = 1 << 16) -> bytes:
    try:
        if gz:
            with gzip.open(path, "rb") as fh:
                return fh.read(size)
        with path.open("rb") as fh:
            return fh.read(size)
    except (OSError, EOFError, zlib.error):
        return b""  # the reader reports the broken file


def _stage_checked(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    cols: list[ColumnSpec],
    present: set[str],
    *,
    key: list[str],
    table: str,
    check_existing: bool,
    where: str,
    gx_max_rows: int,
    bounds: Bounds = Bounds(),
    verbatim: bool = False,
    correction: bool = False,
) -> tuple[Future[int], set[str], list[str]]:
    """Build temp table ``flags`` (every row: typed columns, raw text, ``_mistyped``, ``_bad``), view ``flag_detail``
    (the bad rows, with one flag per expectation) and temp table ``verdicts`` (the rows not to load: line, reason,
    columns at fault).

    One pass types and checks every row; the kind's expectation suite is evaluated by DuckDB on every row
    and by Great Expectations on the well-typed rows (all, or a deterministic sample beyond ``gx_max_rows``),
    and the two must agree. Duplicates are found by grouping the file's keys (duplicates inside the file)
    and by probing the key index ``meta.key_index`` (keys already loaded; only the rows the probe hits are
    read back from the lake). Returns GX's pending result (the rows it validated; it runs in GX's process
    while DuckDB finds the verdicts and writes the lake file), the columns read natively and the text columns
    kept raw.
    """
    suite = suites(bounds)[kind]
    native, raw_cols, type_checks = _flag_rows(con, kind, cols, present, key=key, suite=suite, verbatim=verbatim)
    validated = _great_expectations(con, kind, cols, suite, where=where, gx_max_rows=gx_max_rows, bounds=bounds)
    _verdicts(
        con,
        kind,
        cols,
        key,
        table=table,
        check_existing=check_existing,
        type_checks=type_checks,
        suite=suite,
        correction=correction,
    )
    return validated, native, raw_cols


def _flag_rows(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    cols: list[ColumnSpec],
    present: set[str],
    *,
    key: list[str],
    suite: list,
    verbatim: bool = False,
) -> tuple[set[str], list[str], list[tuple[str, str, str]]]:
    """Temp table ``flags``: every row typed, its raw text where typing may fail, ``_mistyped`` (a type check
    failed), ``_bad`` (any check failed) and ``_as_is`` (see ``_as_is_sql``; ``verbatim``: the file may be kept
    byte for byte); view ``flag_detail``: the bad rows with one flag per expectation. Returns the columns read
    natively, the raw columns and the type checks."""
    options = READ_OPTIONS.get(kind, ReadOptions())
    source_types = {r[0]: r[1] for r in con.execute("DESCRIBE SELECT * FROM incoming_arrow").fetchall()}
    native = native_columns(kind, cols, source_types)
    # VARCHAR columns kept as they came (trimmed, NULL tokens removed) are their own raw text
    plain_text = {
        c.name
        for c in cols
        if c.duckdb_type == "VARCHAR"
        and c.name in present
        and c.name not in native
        and c.name not in options.lower
        and c.name != "currency"
        and c.default is None
    }
    typed_exprs = {}
    for c in cols:
        expr = _native_expr(c, source_types[c.name]) if c.name in native else _typed_expr(kind, c, present)
        if c.default_sql is not None:  # an optional column with a default (opex.cluster_id '' = shared costs)
            expr = f"coalesce({expr}, {c.default_sql})"
        typed_exprs[c.name] = expr
    typed_parts = [f'{expr} AS "{name}"' for name, expr in typed_exprs.items()]
    as_is = _as_is_sql(kind, cols, present, native, source_types, typed_exprs) if verbatim else "false"
    raw_cols = [c.name for c in cols if c.name not in native and c.name not in plain_text]
    raws = "".join(
        (f", {_text(kind, n)} AS _raw_{n}" if n in present else f", CAST(NULL AS VARCHAR) AS _raw_{n}")
        for n in raw_cols
    )
    type_checks = _type_checks(kind, cols, present, native | plain_text)
    checks = [(f'"_chk_{chk.name}"', f"coalesce({chk.sql_bad_when()}, false)") for chk in suite]
    # the table keeps only whether a row is mistyped and whether it is bad; each expectation's flag is a view over the
    # bad rows alone (materialising one column per check for every row cost 0.05 of 0.18 s a 323 k-row file)
    mistyped = " OR ".join(f"({p})" for _, p, _ in type_checks) or "false"
    any_flag = " OR ".join([mistyped] + [e for _, e in checks])
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE flags AS SELECT *, coalesce({mistyped}, false) AS _mistyped, "
        f"coalesce({any_flag}, false) AS _bad "
        f"FROM (SELECT i._line, {', '.join(typed_parts)}{raws}, {as_is} AS _as_is FROM incoming_arrow i)"
    )
    detail = ", ".join(f"{e} AS {name}" for name, e in checks) or "false AS _none"
    con.execute(f"CREATE OR REPLACE TEMP VIEW flag_detail AS SELECT *, {detail} FROM flags WHERE _bad")

    return native, raw_cols, type_checks


def _as_is_sql(
    kind: str,
    cols: list[ColumnSpec],
    present: set[str],
    native: set[str],
    source_types: dict[str, str],
    typed: dict[str, str],
) -> str:
    """SQL true for a row that the raw view, reading the landing file itself, would give exactly as its checks
    typed it; "false" for every row when the file's types are not the ledger's (then its lake file is written).

    A column the file has must be of the ledger's type; a column it lacks must not take a per-kind default (the
    view knows only the class's). Of the columns the file has, a native one reads the same by construction; a
    text or decimal one (trimmed, lower-cased, parsed) must equal its value as the view reads it.
    """
    options = READ_OPTIONS.get(kind, ReadOptions())
    for c in cols:
        if c.name in present and source_types.get(c.name) != c.duckdb_type:
            return "false"
        if c.name not in present and c.name in options.defaults:
            return "false"
    same = []
    for c in cols:
        if c.name in present and c.name not in native:
            view = view_value_sql(c, f'i."{c.name}"')
            same.append(f"({typed[c.name]}) IS NOT DISTINCT FROM {view}")
    return " AND ".join(same) or "true"


def _great_expectations(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    cols: list[ColumnSpec],
    suite: list,
    *,
    where: str,
    gx_max_rows: int,
    bounds: Bounds,
) -> Future[int]:
    """The kind's suite run by GX on the well-typed rows (all, or beyond ``gx_max_rows`` every step-th line of the
    rows the SQL rules pass and of those they flag), checked against the SQL flags of the same rows; returns the
    rows GX validated."""
    from pipeline.ingest.validate import gx_worker, validate_rows

    # Great Expectations on the well-typed rows: all of them up to gx_max_rows; beyond, a deterministic sample
    # (every step-th line) of the rows the SQL rules pass and of the rows they flag, so GX sees both kinds
    n_good, n_flagged = con.execute(  # type: ignore[misc]
        "SELECT count(*) FILTER (WHERE NOT _bad), count(*) FILTER (WHERE _bad) FROM flags WHERE NOT _mistyped"
    ).fetchall()[0]
    step_good = max(1, -(-n_good // gx_max_rows))
    step_flagged = max(1, -(-n_flagged // gx_max_rows))
    # pandas holds timestamps from 1677 to 2262 only: rows beyond (infinity, year 10000) are not handed to GX;
    # they fail the plausibility bound in SQL, and GX checks that bound on every row it does get
    in_pandas = (
        " AND ".join(
            f"(\"{c.name}\" IS NULL OR \"{c.name}\" BETWEEN '1900-01-01' AND '2200-01-01')"
            for c in cols
            if c.duckdb_type in ("TIMESTAMP", "DATE")
        )
        or "true"
    )
    sample = (
        f"NOT _mistyped AND {in_pandas} "
        f"AND CASE WHEN _bad THEN _line % {step_flagged} = 0 ELSE _line % {step_good} = 0 END"
    )
    col_list = ", ".join(f'"{c.name}"' for c in cols)
    rows = con.sql(f"SELECT _line, {col_list} FROM flags WHERE {sample}").to_arrow_table()
    timestamps = [c.name for c in cols if c.duckdb_type in ("TIMESTAMP", "DATE")]
    sql_flags: dict[str, set[int]] = {chk.name: set() for chk in suite}
    if suite:
        chk_cols = ", ".join(f'"_chk_{chk.name}"' for chk in suite)
        for line, *hits in con.execute(f"SELECT _line, {chk_cols} FROM flag_detail WHERE {sample}").fetchall():
            for chk, hit in zip(suite, hits):
                if hit:
                    sql_flags[chk.name].add(line)
    return gx_worker().submit(validate_rows, kind, rows, timestamps, sql_flags, where, bounds)


def _on(a: str, b: str, key: list[str]) -> str:
    # a key part may be empty (a self-hosted request has no provider, shared opex no cluster): empty matches empty
    return " AND ".join(f'{a}."{k}" IS NOT DISTINCT FROM {b}."{k}"' for k in key)


def _duplicate_sources(
    con: duckdb.DuckDBPyConnection, kind: str, key: list[str], table: str, check_existing: bool
) -> str:
    """Temp table ``dup_first`` (keys more than once among the file's good rows, with their first line) and the
    rows already loaded with one of the file's keys (the key index probed, only its hits read back from the
    lake); returns the name of the relation holding those rows."""
    key_part = ", ".join(f'"{k}"' for k in key)
    key_hash = key_hash_sql(key)
    # keys that occur more than once among the file's good rows, with their first line
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE dup_first AS SELECT {key_part}, min(_line) AS first_line "
        f"FROM flags WHERE NOT _bad GROUP BY ALL HAVING count(*) > 1"
    )
    # keys already loaded: probe the key index (the file's hashes are the build side), then read back only those rows
    existing = f"(SELECT * FROM {table} WHERE false)"
    if check_existing:
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE hit_keys AS SELECT DISTINCT {key_part} FROM flags "
            f"WHERE NOT _bad AND {key_hash} IN (SELECT key_hash FROM meta.key_index WHERE kind = ? "
            f"AND key_hash IN (SELECT {key_hash} FROM flags WHERE NOT _bad))",
            [kind],
        )
        if con.execute("SELECT count(*) FROM hit_keys").fetchall()[0][0]:  # type: ignore[index]
            refresh_stale_raw_views(con, [kind])  # the rows of files loaded (or open) in this run too
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE existing_rows AS SELECT e.* FROM {table} e SEMI JOIN hit_keys h ON "
                f"{_on('e', 'h', key)}"
            )
            existing = "existing_rows"
    return existing


def _verdicts(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    cols: list[ColumnSpec],
    key: list[str],
    *,
    table: str,
    check_existing: bool,
    type_checks: list[tuple[str, str, str]],
    suite: list,
    correction: bool = False,
) -> None:
    """Temp table ``verdicts``: the rows not to load (bad rows, duplicates inside the file, keys already
    loaded), with the reason and the columns at fault; and temp table ``superseding``: in a ``correction`` file,
    the rows that restate a row loaded earlier (same key, other content), with that row's file and line."""
    messages = list(type_checks) + [
        (chk.column, f'"_chk_{chk.name}"', "'" + chk.message.replace("'", "''") + "'") for chk in suite
    ]
    reasons = (
        "array_to_string(list_filter(["
        + ", ".join(f"CASE WHEN {p} THEN {m} END" for _, p, m in messages)
        + "], lambda x: x IS NOT NULL), '; ')"
    )
    bad_cols = (
        "array_to_string(list_distinct(list_filter(["
        + ", ".join(f"CASE WHEN {p} THEN '{c}' END" for c, p, _ in messages)
        + "], lambda x: x IS NOT NULL)), ', ')"
    )
    con.execute("CREATE OR REPLACE TEMP TABLE superseding (_line BIGINT, file_hash VARCHAR, line BIGINT)")
    if not key:  # rows without a natural key (FOCUS): nothing to deduplicate
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE verdicts AS SELECT _line, {reasons} AS verdict, {bad_cols} AS bad_columns "
            "FROM flag_detail"
        )
        return

    key_names = ", ".join(key)

    def on(a: str, b: str) -> str:
        return _on(a, b, key)

    def same(a: str, b: str) -> str:
        return " AND ".join(f'{a}."{c.name}" IS NOT DISTINCT FROM {b}."{c.name}"' for c in cols)

    existing = _duplicate_sources(con, kind, key, table, check_existing)
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE verdicts AS
        SELECT _line, {reasons} AS verdict, {bad_cols} AS bad_columns FROM flag_detail
        UNION ALL
        SELECT * FROM (
            SELECT c._line,
                   CASE
                     WHEN c._line <> d.first_line AND ({same("c", "f")})
                       THEN 'identical duplicate of line ' || d.first_line || ' (counted once)'
                     WHEN c._line <> d.first_line
                       THEN 'conflict: same key ({key_names}) as line ' || d.first_line
                            || ' with different content; not loaded'
                     WHEN e.source_line IS NOT NULL AND ({same("c", "e")})
                       THEN 'identical duplicate of a row already loaded (file ' || left(e.source_file_hash, 12)
                            || ', line ' || e.source_line || '); counted once'
                     WHEN e.source_line IS NOT NULL AND NOT {"true" if correction else "false"}
                       THEN 'conflict: key ({key_names}) already loaded from '
                            || coalesce((SELECT l.path FROM meta.loaded_files AS l
                                         WHERE l.file_hash = e.source_file_hash), 'file ' || e.source_file_hash)
                            || ', line ' || e.source_line || ', with different content; not overwritten. If this '
                            || 'row corrects that one, deliver the file in a {CORRECTIONS_FOLDER}/ folder of its kind '
                            || 'folder (or ingest --correction)'
                   END AS verdict,
                   '{key_names}' AS bad_columns
            FROM flags c
            LEFT JOIN dup_first d ON {on("d", "c")}
            LEFT JOIN flags f ON f._line = d.first_line
            LEFT JOIN {existing} e ON {on("e", "c")}
            WHERE NOT c._bad AND (d.first_line IS NOT NULL OR e.source_line IS NOT NULL)
        ) WHERE verdict IS NOT NULL
        """
    )
    if correction:
        _superseding(con, existing, key)


def _superseding(con: duckdb.DuckDBPyConnection, existing: str, key: list[str]) -> None:
    """A correction file's rows that load and share a key with a row loaded earlier: they restate it (rows with the
    same content were found duplicates, so every such row has other content)."""
    con.execute(f"""
        INSERT INTO superseding
        SELECT c._line, e.source_file_hash, e.source_line
        FROM flags c JOIN {existing} e ON {_on("e", "c", key)}
        WHERE NOT c._bad AND c._line NOT IN (SELECT _line FROM verdicts)
    """)


def _reject(
    con: duckdb.DuckDBPyConnection,
    kind: str,
    shown: str,
    file_hash: str | None,
    *,
    message: str,
    run_id: str | None,
    t0: float,
) -> FileResult:
    con.execute(
        "INSERT INTO meta.rejected_files VALUES (?, ?, ?, ?, current_localtimestamp(), ?)",
        [file_hash, kind, shown, message, run_id],
    )
    return FileResult(path=shown, kind=kind, status="rejected", message=message, seconds=time.perf_counter() - t0)
