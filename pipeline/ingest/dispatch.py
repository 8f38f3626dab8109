"""Which reader reads a landing file: the canonical readers, or a log, billing, price-list or load-test format.

A file's format comes from ``--format``, else the settings entry whose glob matches it, else what its first bytes
say (``sniff``); a format other than the canonical one reads through its mapping into the canonical columns.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Callable

from pipeline.base.fileformats import FileMapping
from pipeline.ingest.formats import file_formats
from pipeline.ingest.loading import IngestOptions
from pipeline.ingest.logformats import read_request_log, sniff
from pipeline.ingest.readers import (
    FileRejected,
    Limits,
    ReadResult,
    detect_format,
    limited,
    read_file,
    unknown_columns_message,
)
from schemas.tables import READ_OPTIONS, ReadOptions


def read_rows(kind: str, path: Path, allowed: list[str], options: IngestOptions) -> ReadResult:
    """The file's rows, read under the size limits of the settings (a file over them is rejected whole)."""
    with limited(Limits(options.max_line_bytes, options.max_file_bytes, options.max_text_bytes)):
        return _read_any(kind, path, allowed, options)


#: The settings entry that describes a file of each kind read in another format than the canonical one
_ENTRY_FOR: dict[str, Callable[[IngestOptions, Path], FileMapping]] = {
    "invoices": IngestOptions.billing_mapping_for,
    "usage": IngestOptions.billing_mapping_for,
    "prices": IngestOptions.price_list_mapping_for,
    "load-tests": IngestOptions.load_test_mapping_for,
}


def _read_any(kind: str, path: Path, allowed: list[str], options: IngestOptions) -> ReadResult:
    """Canonical files through the plain readers; request logs and the registered formats through their mappings."""
    if kind == "requests":
        mapping = options.mapping_for(path)
        log_format = options.log_format or mapping.format
        if log_format is None:
            fmt, gz = detect_format(path)
            log_format = sniff(_head_bytes(path, gz), fmt == "csv") if fmt != "parquet" else "canonical"
        if log_format != "canonical":
            return read_request_log(path, log_format, mapping, allowed)
    if formats := file_formats(kind):  # a provider's own export, a price list, a benchmark's result file
        entry = _ENTRY_FOR[kind](options, path)
        name = (None if kind == "load-tests" else options.log_format) or entry.format
        fmt, gz = detect_format(path)
        if name is None and fmt == "jsonl":
            head = _head_bytes(path, gz, max(f.head_bytes for f in formats))
            name = next((f.name for f in formats if f.sniff(head[: f.head_bytes])), None)
        if name not in (None, "canonical"):
            return next(f for f in formats if f.name == name).read(path, name, entry, allowed)
    read = read_file(path, allowed, READ_OPTIONS.get(kind, ReadOptions()).rename)
    if kind not in FOREIGN_COLUMN_KINDS and (
        message := unknown_columns_message(path, read.unknown, allowed, options.extra_columns)
    ):
        raise FileRejected(message)
    return read


#: Kinds whose files are another standard's (FOCUS: dozens of columns the ledger has no use for): not named as unknown
FOREIGN_COLUMN_KINDS = frozenset({"focus"})


def _head_bytes(path: Path, gz: bool, size: int = 1 << 16) -> bytes:
    try:
        if gz:
            with gzip.open(path, "rb") as fh:
                return fh.read(size)
        with path.open("rb") as fh:
            return fh.read(size)
    except (OSError, EOFError, zlib.error):
        return b""  # the reader reports the broken file
