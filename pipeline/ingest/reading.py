"""A landing file's rows: what the file is is told once (``formats.detection``), then its reader reads it, under the
size limits of the settings (a file over them is rejected whole). A canonical file goes through the plain readers; a
request log, a provider's export, a price list or a benchmark's result file through its format's mapping into the
canonical columns.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.ingest.formats.detection import detect
from pipeline.ingest.formats.landed import Detected
from pipeline.ingest.options import IngestOptions
from pipeline.ingest.parquetfiles import read_parquet
from pipeline.ingest.readers import (
    FileRejected,
    Limits,
    ReadResult,
    limited,
    read_csv,
    read_jsonl,
    unknown_columns_message,
)
from schemas.tables import READ_OPTIONS, ReadOptions

#: Kinds whose files are another standard's (FOCUS: dozens of columns the ledger has no use for): not named as unknown
FOREIGN_COLUMN_KINDS = frozenset({"focus"})


def read_rows(kind: str, path: Path, allowed: list[str], options: IngestOptions) -> ReadResult:
    """The rows of the landing file of ``kind`` at ``path`` (``allowed``: the canonical columns)."""
    found = detect(kind, path, options)
    with limited(Limits(options.max_line_bytes, options.max_file_bytes, options.max_text_bytes)):
        return _read(kind, found, allowed, options)


def _read(kind: str, found: Detected, allowed: list[str], options: IngestOptions) -> ReadResult:
    if found.reader is not None:
        return found.reader(found, allowed)
    read = read_file(found.path, found.container, found.gz, allowed, READ_OPTIONS.get(kind, ReadOptions()).rename)
    if kind not in FOREIGN_COLUMN_KINDS and (
        message := unknown_columns_message(found.path, read.unknown, allowed, options.extra_columns)
    ):
        raise FileRejected(message)
    return read


def read_file(path: Path, fmt: str, gz: bool, allowed: list[str], rename: dict[str, str] | None = None) -> ReadResult:
    """Read a canonical landing file (``fmt``: csv, jsonl or parquet; ``gz``: gzip-compressed); ``rename`` maps
    lower-cased file column names to field names."""
    rename = rename or {}
    if fmt == "csv":
        return read_csv(path, gz, allowed, rename)
    if fmt == "jsonl":
        return read_jsonl(path, gz, allowed, rename)
    if gz:
        raise FileRejected(f"{path}: gzip-compressed Parquet is not supported; Parquet compresses itself")
    return read_parquet(path, allowed, rename)
