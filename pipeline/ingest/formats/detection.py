"""What a landing file is, decided once, before a byte of it is read as rows: its container (CSV, JSON lines or
Parquet, gzip or not) from its name, and its format from ``--format``, else the settings entry whose pattern
matches its name, else what its first bytes say; and so its reader. The canonical columns are the format
``canonical``, read by the plain readers; a request log of a gateway or an inference server, a provider's cost or
usage export, a price list or a benchmark's result file is a registered format (``registry``) read through its
mapping.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.base.fileformats import METRIC_FORMATS, METRIC_KINDS
from pipeline.ingest.formats.landed import Container, Detected, container
from pipeline.ingest.formats.registry import FileFormat, file_formats, first_log_format
from pipeline.ingest.formats.requestlogs import read_request_log
from pipeline.ingest.readers import FileRejected

if TYPE_CHECKING:
    from pipeline.ingest.options import IngestOptions

#: The format of Prometheus text exposition (.prom files)
TEXT_FORMAT = METRIC_FORMATS[2]
#: How much of a file's start is read to tell its format
HEAD_BYTES = 1 << 16


def detect(kind: str, path: Path, options: IngestOptions) -> Detected:
    """What the landing file of ``kind`` at ``path`` is (raises ``FileRejected`` for a name no reader reads)."""
    box, gz = container(path)
    entry, named = options.described(kind, path)
    formats = file_formats(kind)
    if box == "text" and kind not in METRIC_KINDS:
        raise FileRejected(f"{path}: a .prom file holds Prometheus metrics; {' and '.join(METRIC_KINDS)} read it")
    clusters = options.metrics_clusters if kind in METRIC_KINDS else ()
    name = "canonical" if kind != "requests" and not formats else named or _told(kind, path, box, gz, formats)
    if (box == "text") != (name == TEXT_FORMAT) and kind in METRIC_KINDS:
        raise FileRejected(f"{path}: the format {TEXT_FORMAT} is read from .prom files, and only it is")
    if name == "canonical":
        return Detected(path=path, container=box, gz=gz, format=name, entry=entry)
    if kind == "requests":
        return Detected(path=path, container=box, gz=gz, format=name, entry=entry, reader=read_request_log)
    fmt = next((f for f in formats if f.name == name), None)
    if fmt is None:
        names = ", ".join(["canonical", *(f.name for f in formats)])
        raise FileRejected(f"{path}: {kind} files come in none but these formats: {names}")
    only = options.only_cluster if kind in METRIC_KINDS else None
    return Detected(
        path=path, container=box, gz=gz, format=name, entry=entry, reader=fmt.read, metrics_clusters=clusters,
        only_cluster=only, prices_in_force=options.prices_in_force, load_day=options.load_day,
    )  # fmt: skip


def _told(kind: str, path: Path, box: Container, gz: bool, formats: list[FileFormat]) -> str:
    """The format the file's first bytes tell: a request log by its first record that shows one (a CSV by its
    header), another kind's JSON or CSV file by the first of its registered ``formats`` of that container whose test
    its head passes."""
    if box == "parquet":
        return "canonical"
    if box == "text":
        return TEXT_FORMAT
    if kind == "requests":
        head = _head(path, gz, HEAD_BYTES).decode("utf-8", errors="replace")
        if box == "csv":
            header = head.split("\n", 1)[0]
            return "litellm" if "startTime" in header and ("spend" in header or "call_type" in header) else "canonical"
        return first_log_format(head)
    sniffed = [f for f in formats if f.container == box]
    if not sniffed:
        return "canonical"
    head_bytes = _head(path, gz, max(f.head_bytes for f in sniffed))
    return next((f.name for f in sniffed if f.sniff(head_bytes[: f.head_bytes])), "canonical")


def _head(path: Path, gz: bool, size: int) -> bytes:
    try:
        if gz:
            with gzip.open(path, "rb") as fh:
                return fh.read(size)
        with path.open("rb") as fh:
            return fh.read(size)
    except (OSError, EOFError, zlib.error):
        return b""  # the reader reports the broken file
