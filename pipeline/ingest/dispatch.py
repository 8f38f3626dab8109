"""Which reader reads a landing file: the canonical readers, or a log, billing, price-list or load-test format.

A file's format comes from ``--format``, else the settings entry whose glob matches it, else what its first bytes
say (``sniff``); a format other than the canonical one reads through its mapping into the canonical columns.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any, Callable

from pipeline.ingest.billing import read_export, sniff_billing, sniff_usage
from pipeline.ingest.loading import IngestOptions
from pipeline.ingest.loadtests import read_load_test
from pipeline.ingest.loadtests import sniff as sniff_load_test
from pipeline.ingest.logformats import sniff
from pipeline.ingest.pricelists import read_price_list, sniff_price_list
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
from schemas.tables import READ_OPTIONS, ReadOptions


def read_rows(kind: str, path: Path, allowed: list[str], options: IngestOptions) -> ReadResult:
    """The file's rows, read under the size limits of the settings (a file over them is rejected whole)."""
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


def _head_bytes(path: Path, gz: bool, size: int = 1 << 16) -> bytes:
    try:
        if gz:
            with gzip.open(path, "rb") as fh:
                return fh.read(size)
        with path.open("rb") as fh:
            return fh.read(size)
    except (OSError, EOFError, zlib.error):
        return b""  # the reader reports the broken file
