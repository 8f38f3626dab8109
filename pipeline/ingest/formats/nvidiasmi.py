"""GPU metrics as ``nvidia-smi`` writes them, the meter every GPU machine has::

    TZ=UTC nvidia-smi --query-gpu=timestamp,uuid,index,name,pci.bus_id,utilization.gpu,power.draw --format=csv -l 60

    timestamp, uuid, index, name, pci.bus_id, utilization.gpu [%], power.draw [W]
    2026/10/05 10:00:00.123, GPU-3f1c8a52-..., 0, NVIDIA B200, 00000000:18:00.0, 40 %, 700.50 W

Told from a CSV header that names ``timestamp`` and ``utilization.gpu`` or ``power.draw``, in any order (``--query-gpu``
lists fields in the order asked). Each line gives one sample of each measure it holds, under the DCGM field of the
same meaning and unit: ``utilization.gpu`` [%] as ``DCGM_FI_DEV_GPU_UTIL``, ``power.draw`` [W] (or
``power.draw.average`` / ``power.draw.instant``, the first present) as ``DCGM_FI_DEV_POWER_USAGE``. Header names and
values are read with their spaces and units trimmed (``--format=csv,nounits`` too); a value is a plain decimal, with
its field's own unit or none (``40 W`` under ``utilization.gpu``, or ``1_000``, is quarantined). ``nvidia-smi``
writes its local time with no zone: the time is read as UTC, so run it with ``TZ=UTC``. A GPU is told by ``uuid``
(label ``UUID``), ``index`` (``gpu``), ``name`` (``modelName``) and ``pci.bus_id`` (``pci_bus_id``), the labels
dcgm-exporter gives it; one of ``uuid``, ``index`` or ``pci.bus_id`` is needed, and a line where all three are blank
names no GPU (quarantined). The file names no host nor cluster:
``[[metrics_clusters]]`` maps one of those labels to a cluster (every GPU of a model: ``label = "modelName"``). A
value ``nvidia-smi`` could not read (``[N/A]``, ``[Not Supported]``) is a quarantined sample naming its field.

A line gives up to two samples, so a row's line is its position among the samples (a line that cannot be read takes
one position), as a query_range response's is; every reason names the line of the file too.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from typing import TYPE_CHECKING

from pipeline.base.fileformats import METRIC_FORMATS
from pipeline.ingest.formats.metrics import assumed_note, series_labels
from pipeline.ingest.formats.registry import FileFormat, register_file_format
from pipeline.ingest.readers import FileRejected, ReadResult, TextColumns, utf8_text

if TYPE_CHECKING:
    from pipeline.ingest.formats.landed import Detected

#: a measure's DCGM field and the nvidia-smi fields that give it, the first present read
MEASURES = {
    "DCGM_FI_DEV_GPU_UTIL": ("utilization.gpu",),
    "DCGM_FI_DEV_POWER_USAGE": ("power.draw", "power.draw.average", "power.draw.instant"),
}
#: each measure's unit, as nvidia-smi writes it after the number
UNITS = {"DCGM_FI_DEV_GPU_UTIL": "%", "DCGM_FI_DEV_POWER_USAGE": "W"}
#: nvidia-smi's field -> the label dcgm-exporter gives the same thing
LABELS = {"uuid": "UUID", "index": "gpu", "name": "modelName", "pci.bus_id": "pci_bus_id"}
#: the labels that tell one GPU from another
GPU_IDS = ("UUID", "gpu", "pci_bus_id")
_UNIT = re.compile(r"\s*\[[^\]]*\]\s*$")
_TIME_SHAPES = ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S")
_PLAIN = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)")
_MEASURED = frozenset(f for fields in MEASURES.values() for f in fields)


def sniff_nvidia_smi(head: bytes) -> bool:
    first = head.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0].decode("utf-8", "replace")
    fields = {_field(name) for name in next(csv.reader([first.removesuffix("\r")]), [])}
    return "timestamp" in fields and bool(fields & _MEASURED)


def _field(name: str) -> str:
    """A header cell's field: ' utilization.gpu [%]' -> 'utilization.gpu'."""
    return _UNIT.sub("", name).strip().lower()


def _value(cell: str, field: str, unit: str) -> str:
    """A measure's number, its unit (``unit``, or none) trimmed; anything else is an error naming the field."""
    text = cell.strip()
    if text.startswith("["):
        raise ValueError(f"{field} is {text[:40]}: nvidia-smi could not read it")
    number = text.removesuffix(unit).strip()
    if not _PLAIN.fullmatch(number):
        raise ValueError(f"{field} is {text[:40]!r}: not a number in {unit} (or a number alone)")
    return number


def _instant(cell: str) -> str:
    text = cell.strip()
    for shape in _TIME_SHAPES:
        try:
            return dt.datetime.strptime(text, shape).isoformat()
        except ValueError:
            continue
    raise ValueError(f"timestamp {text[:40]!r} is not nvidia-smi's YYYY/MM/DD HH:MM:SS.mmm")


def _columns(path: object, header: list[str]) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """(field -> position, measure -> its field's position, label -> position) of a header; the file rejected
    naming what it lacks."""
    at = {_field(name): i for i, name in enumerate(header)}
    measures = {
        m: next(at[f] for f in fields if f in at) for m, fields in MEASURES.items() if any(f in at for f in fields)
    }
    labels = {label: at[f] for f, label in LABELS.items() if f in at}
    if "timestamp" not in at or not measures:
        raise FileRejected(
            f"{path}: nvidia-smi's CSV needs timestamp and utilization.gpu or power.draw in --query-gpu "
            "(and its header: --format=csv, not noheader)"
        )
    if not {"UUID", "gpu", "pci_bus_id"} & set(labels):
        raise FileRejected(f"{path}: nvidia-smi's CSV needs uuid, index or pci.bus_id to tell its GPUs apart")
    return at, measures, labels


def read_nvidia_smi(found: Detected, allowed: list[str]) -> ReadResult:
    """One row per line and measure, numbered by its position among the samples (see the module's text)."""
    lines = utf8_text(found.path, found.gz).removeprefix("\ufeff").split("\n")
    header = next(csv.reader([lines[0].removesuffix("\r")], skipinitialspace=True), [])
    at, measures, labels = _columns(found.path, header)
    cols = TextColumns(allowed)
    bad: list[tuple[int, str]] = []
    position, assumed = 0, set[tuple[str, str]]()
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = next(csv.reader([line.removesuffix("\r")], skipinitialspace=True))
        try:
            if len(cells) != len(header):
                raise ValueError(f"{len(cells)} fields where the header names {len(header)}")
            sampled_at = _instant(cells[at["timestamp"]])
            gpu = {label: cells[i].strip() for label, i in labels.items()}
            if not any(gpu.get(label) for label in GPU_IDS):
                raise ValueError("uuid, index and pci.bus_id are all blank: the line names no GPU")
            cluster, series, only = series_labels(
                {k: v for k, v in gpu.items() if v}, found.metrics_clusters, found.only_cluster
            )
            if only:
                assumed.update((metric, series) for metric in measures)
        except ValueError as exc:
            position += 1
            bad.append((position, f"line {number}: {exc}"))
            continue
        for metric, i in measures.items():
            position += 1
            try:
                value = _value(cells[i], header[i].strip(), UNITS[metric])
            except ValueError as exc:
                bad.append((position, f"line {number}: {exc}"))
                continue
            row = {"sampled_at": sampled_at, "cluster_id": cluster, "metric": metric, "labels": series, "value": value}
            cols.append(position, row)
    result = ReadResult(table=cols.table(), present=list(allowed), bad_lines=bad)
    result.notes += assumed_note(len(assumed), found.only_cluster)
    return result


register_file_format(
    FileFormat(
        name=METRIC_FORMATS[3], kind="gpu-metrics", sniff=sniff_nvidia_smi, read=read_nvidia_smi, container="csv"
    )
)
