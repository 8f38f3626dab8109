"""The file being loaded: one object from the landing file's recognition to its commit.

``LoadingFile`` carries what every step needs and what each step learns: the file's identity (kind, path, name
under its kind folder, SHA-256 and signature), how to read it (``IngestOptions``), its rows read
(``ReadResult``), its work tables (``WorkTables``), the counts its checks gave, Great Expectations' pending
verdict, and where its lake file is written. The steps (``pipeline.ingest.files``) are functions of it.
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pipeline.ingest.options import CORRECTIONS_FOLDER, IngestOptions
from pipeline.ingest.readers import ReadResult
from pipeline.ingest.worktables import WorkTables
from pipeline.storage.lake import Signature
from schemas.ddl import ColumnSpec, canonical_columns, natural_key, table_name
from schemas.tables import KINDS

if TYPE_CHECKING:
    from pipeline.storage.store import Store

Status = Literal["loaded", "skipped", "rejected", "repaired"]


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
    tables: WorkTables = field(default_factory=WorkTables)
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
        return self.options.shown(self.path)

    def named(self, message: str) -> str:
        """``message`` with the file named as the user knows it: a reader names the path it read, which for a file
        copied from object storage is the local copy."""
        shown = self.shown
        return message if shown == str(self.path) else message.replace(str(self.path), shown)

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
        if status == "loaded" and self.read is not None and self.read.notes and not message:
            message = "; ".join(self.read.notes)
        return FileResult(
            path=self.shown, kind=self.kind, status=status, message=self.named(message), seconds=spent, **counts
        )


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
