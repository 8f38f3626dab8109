"""The file being loaded: one object from the landing file's recognition to its commit.

``LoadingFile`` carries what every step needs and what each step learns: the file's identity (kind, path, name
under its kind folder, SHA-256 and signature), how to read it (``IngestOptions``), its rows read
(``ReadResult``), its staging relations (``Staging``), the counts its checks gave, Great Expectations' pending
verdict, and where its lake file is written. The steps (``pipeline.ingest.files``) are functions of it.
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pipeline.base.fileformats import BillingMapping, LoadTestMapping, LogMapping, PriceListMapping
from pipeline.ingest.readers import ReadResult
from pipeline.base.settings import GX_MAX_ROWS, MAX_FILE_BYTES, MAX_LINE_BYTES, MAX_TEXT_BYTES
from pipeline.ingest.staging import Staging
from pipeline.storage.lake import Signature
from schemas.ddl import ColumnSpec, canonical_columns, natural_key, table_name
from schemas.expectations import Bounds
from schemas.tables import KINDS

if TYPE_CHECKING:
    from pipeline.storage.store import Store

#: A file under this folder of its kind folder corrects rows loaded earlier (``IngestOptions.correction``).
CORRECTIONS_FOLDER = "corrections"

Status = Literal["loaded", "skipped", "rejected", "repaired"]


@dataclass(kw_only=True, frozen=True)
class IngestOptions:
    """How files are read and validated (from the settings, and --format)."""

    gx_max_rows: int = GX_MAX_ROWS
    log_format: str | None = None
    """Format of every file: a request-log format for requests, a billing export format for invoices (None: the
    matching [[request_logs]] / [[billing_exports]] entry, else detected)."""
    log_mappings: tuple[LogMapping, ...] = ()
    load_test_mappings: tuple[LoadTestMapping, ...] = ()
    billing_mappings: tuple[BillingMapping, ...] = ()
    price_list_mappings: tuple[PriceListMapping, ...] = ()
    bounds: Bounds = Bounds()
    """Plausibility bounds: values beyond them are quarantined."""
    max_line_bytes: int = MAX_LINE_BYTES
    max_file_bytes: int = MAX_FILE_BYTES
    max_text_bytes: int = MAX_TEXT_BYTES
    """A text value longer than this quarantines its row."""
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


@dataclass(kw_only=True)
class LoadingFile:
    """One landing file on its way into the ledger (see the module's text)."""

    kind: str
    path: Path
    identity: str
    """Its name for the same-name conflict check: its path under its kind folder, or its file name."""
    options: IngestOptions = IngestOptions()
    run_id: str | None = None
    t0: float = field(default_factory=time.perf_counter)
    staging: Staging = field(default_factory=Staging)
    file_hash: str = ""
    signature: Signature | None = None
    """The file's signature before its hash was taken (``pipeline.storage.lake.signed_sha256``)."""
    read: ReadResult | None = None
    check_existing: bool = True
    """Whether its keys are looked up among the rows loaded before (not when its lake file is rewritten)."""
    raw_cols: list[str] = field(default_factory=list)
    """Columns kept as raw text beside their typed value (for the quarantine's record of a bad row)."""
    loaded: int = 0
    quarantined: int = 0
    duplicates: int = 0
    """Rows quarantined as identical duplicates."""
    verbatim: bool = False
    """Its lake file is the landing file byte for byte."""
    gx: Future[int] | None = None
    """Great Expectations' verdict, pending in GX's process: the rows it validated."""
    lake_name: str | None = None
    """Its lake file's name (a file loaded again); None: its hash."""
    tmp_path: Path | None = None
    """Its lake file's temporary name, until it is sealed (``place_in``)."""
    lake_path: Path | None = None
    """Its lake file in the lake (``place_in``)."""
    sealed: bool = False
    load_seq: int | None = None
    """Its place in the load order when it is loaded again; None: after every file loaded so far."""
    seconds: float = 0.0
    """Time spent on the file so far (a run works on the next file while GX checks this one)."""

    @property
    def shown(self) -> str:
        return str(self.path)

    @property
    def table(self) -> str:
        return f"raw.{table_name(KINDS[self.kind])}"

    @property
    def columns(self) -> list[ColumnSpec]:
        return canonical_columns(KINDS[self.kind])

    @property
    def key(self) -> list[str]:
        return natural_key(KINDS[self.kind])

    @property
    def present(self) -> set[str]:
        return set(self.read.present) if self.read else set()

    @property
    def correction(self) -> bool:
        return self.options.correction or self.identity.split("/", 1)[0] == CORRECTIONS_FOLDER

    @property
    def lake_rel(self) -> str:
        return f"{table_name(KINDS[self.kind])}/{self.lake_name or self.file_hash}.parquet"

    def place_in(self, store: "Store") -> None:
        """Name its lake file in the store: a temporary one until it is sealed, then its place in the lake."""
        self.tmp_path = store.tmp / f"{self.file_hash}.parquet.costledger-tmp"
        self.lake_path = store.lake / self.lake_rel

    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def result(self, status: Status, message: str = "", seconds: float | None = None) -> FileResult:
        """Its result: for a file loaded, the counts; otherwise the message. ``seconds``: default since ``t0``."""
        counts: dict[str, int] = {}
        if status == "loaded" and self.read is not None:
            counts = {
                "rows_in": self.read.rows_in,
                "rows_loaded": self.loaded,
                "rows_quarantined": self.quarantined,
                "rows_duplicate": self.duplicates,
            }
        spent = self.elapsed() if seconds is None else seconds
        return FileResult(path=self.shown, kind=self.kind, status=status, message=message, seconds=spent, **counts)


def unreadable_message(shown: str, exc: OSError) -> str:
    """The rejection of a file the operating system will not let the ledger read (a full disk is no such case: it
    stops the run, exit 6)."""
    import errno

    if exc.errno == errno.ENOSPC:
        raise exc
    return f"{shown}: cannot be read ({exc.strerror or exc}); nothing loaded: make it readable and run again"


def changed_message(shown: str, file_hash: str) -> str:
    return (
        f"{shown}: changed while it was being loaded (its copy is not the file hashed as sha256 "
        f"{file_hash[:12]}); nothing loaded: deliver it again once it is complete"
    )
