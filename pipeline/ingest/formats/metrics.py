"""Engine and GPU metrics as Prometheus's HTTP API returns them: a ``query_range`` response (``GET
/api/v1/query_range``), ``{"status": "success", "data": {"resultType": "matrix", "result": [...]}}``, each result
one series: ``{"metric": {"__name__": ..., label: value, ...}, "values": [[unix seconds, "value"], ...]}``.

Each sample becomes one row of the canonical metrics columns. The series' ``cluster_id`` label (else its ``cluster``
label, else the first ``[[metrics_clusters]]`` entry whose label and value it carries) names the cluster; its other
labels, sorted, name the series (one engine of one instance, one GPU of one host). A sample's value stays the text
Prometheus wrote ("NaN", "+Inf" and numbers too large are quarantined by the typed columns' checks, never read as
floats); a series that maps to no cluster, or with a control character in a label, is quarantined with the reason,
every sample of it. A row's ``source_line`` is its position among the samples.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from pipeline.base.fileformats import METRIC_FORMATS, METRIC_KINDS, MetricsCluster
from pipeline.ingest.formats.registry import FileFormat, register_file_format
from pipeline.ingest.readers import FileRejected, ReadResult, TextColumns, repeated_key, utf8_text
from schemas.meters import ENGINE_METRICS, GPU_METRICS

if TYPE_CHECKING:
    from pipeline.ingest.formats.landed import Detected

#: The metrics each kind reads
READ_METRICS = {"engine-metrics": frozenset(ENGINE_METRICS), "gpu-metrics": frozenset(GPU_METRICS)}
#: The labels that name a series' cluster, the first present wins
CLUSTER_LABELS = ("cluster_id", "cluster")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
#: The labels that name a machine, in the order the settings example offers them for a [[metrics_clusters]] entry
_HOST_LABELS = ("instance", "Hostname", "hostname", "node", "host", "job", "model_name", "modelName")
#: The labels of a series with none besides its name and its cluster (the column is part of the key: never empty)
NO_LABELS = "(none)"
#: a character no label may hold: C0 controls, DEL, NEL and the Unicode line and paragraph separators
_CONTROL = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def sniff_prometheus_range(head: bytes) -> bool:
    return b'"resultType"' in head and b'"matrix"' in head


def instant(value: Any) -> str:
    """A sample's Unix time (seconds, a fraction allowed) as an ISO 8601 UTC timestamp."""
    try:
        seconds = Decimal(str(value))
        if not seconds.is_finite() or not 0 <= seconds < 10**11:
            raise ValueError
        return (_EPOCH + dt.timedelta(seconds=float(seconds))).isoformat()
    except (InvalidOperation, ValueError, OverflowError):
        raise ValueError(f"time {str(value)[:40]!r} is not Unix seconds") from None


class _Repeated(dict):
    """A JSON object that named a key twice (``repeated``): kept so that the series it belongs to is quarantined with
    the reason, where raising would lose the whole response."""

    repeated = ""


def _marking_repeats(pairs: list[tuple[str, object]]) -> dict:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    marked = _Repeated(obj)
    marked.repeated = str(repeated_key(pairs))
    return marked


def _escaped(value: str) -> str:
    """A label value as the text exposition writes it: backslash, double quote and newline escaped, so no value can
    read as the end of its pair and the start of another."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def series_labels(metric: dict, clusters: tuple[MetricsCluster, ...], only: str | None = None) -> tuple[str, str, bool]:
    """(cluster, the other labels as sorted name="value" pairs, values escaped, whether the cluster is ``only``, the
    ledger's only cluster, for want of any other) of a series' labels (``__name__`` left out); raises ValueError for
    a label named twice, a value that is a list or an object, a control character, or for labels that name no
    cluster (naming them, and the settings entry that would)."""
    if isinstance(metric, _Repeated):
        raise ValueError(f"the label {metric.repeated[:40]!r} appears twice: an ambiguous series is not loaded")
    for name, value in metric.items():
        if isinstance(value, (dict, list)):
            raise ValueError(f"label {str(name)[:40]!r} holds a list or an object, not a single value")
        if _CONTROL.search(f"{name}{value}"):
            raise ValueError(f"label {str(name)[:40]!r} holds a control character")
    cluster = next((str(metric[k]) for k in CLUSTER_LABELS if metric.get(k) not in (None, "")), None)
    cluster = cluster or next((m.cluster_id for m in clusters if str(metric.get(m.label)) == m.value), None)
    others = sorted((str(k), str(v)) for k, v in metric.items() if k != "__name__" and k not in CLUSTER_LABELS)
    labels = ",".join(f'{k}="{_escaped(v)}"' for k, v in others) or NO_LABELS
    if cluster is None and only is not None:
        return only, labels, True
    if cluster is None:
        named = dict(others)
        label = next((k for k in _HOST_LABELS if k in named), others[0][0] if others else "instance")
        raise ValueError(
            f"its labels ({labels[:160]}) name no cluster: no cluster_id or cluster label, no [[metrics_clusters]] "
            "entry matches, and the ledger does not have exactly one cluster to read it as; add to the settings: "
            f'[[metrics_clusters]] cluster_id = "..." label = "{label[:40]}" value = "{named.get(label, "...")[:60]}"'
        )
    return cluster, labels, False


def assumed_note(series: int, only: str | None) -> list[str]:
    """The file's note when ``series`` of its series named no cluster and were read as the ledger's only one."""
    if not series or only is None:
        return []
    return [
        f"{series} series named no cluster (no cluster or cluster_id label, no [[metrics_clusters]] entry): read as "
        f"{only}, the ledger's only cluster"
    ]


def _result(doc: Any, path: Any) -> list:
    """The response's series, or the file rejected naming what it is instead."""
    for part in (doc, doc.get("data") if isinstance(doc, dict) else None):
        if isinstance(part, _Repeated):
            raise FileRejected(f"{path}: the key {part.repeated[:40]!r} appears twice in the response: it is ambiguous")
    if not isinstance(doc, dict) or doc.get("status") != "success":
        status = doc.get("status") if isinstance(doc, dict) else type(doc).__name__
        raise FileRejected(f"{path}: not a successful Prometheus response (status {str(status)[:40]!r})")
    data = doc.get("data")
    kind = data.get("resultType") if isinstance(data, dict) else None
    if kind != "matrix" or not isinstance(data.get("result"), list):  # type: ignore[union-attr]
        raise FileRejected(
            f"{path}: a Prometheus response of resultType {str(kind)[:20]!r}; a query_range matrix is read"
        )
    return data["result"]  # type: ignore[index]


def _also_unread(name: object, kind: str) -> str:
    """What else is wrong with a series quarantined for its labels: a metric ``kind`` does not read (said at once,
    so that one correction and one reprocess settle the file)."""
    if str(name) in READ_METRICS[kind]:
        return ""
    return f"; and {str(name)[:60]} is not a metric the ledger reads ({', '.join(sorted(READ_METRICS[kind]))})"


def read_prometheus_range(found: Detected, allowed: list[str], kind: str) -> ReadResult:
    """A query_range response's samples, one row each (see the module's text)."""
    gz = found.json_gz("a Prometheus query_range response is")
    try:
        doc = json.loads(utf8_text(found.path, gz), parse_float=str, parse_int=str, object_pairs_hook=_marking_repeats)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise FileRejected(f"{found.path}: not JSON ({str(exc)[:80]})") from None
    cols = TextColumns(allowed)
    bad: list[tuple[int, str]] = []
    line, assumed = 0, 0
    for i, series in enumerate(_result(doc, found.path), start=1):
        metric = series.get("metric") if isinstance(series, dict) else None
        values = series.get("values") if isinstance(series, dict) else None
        if isinstance(series, _Repeated):
            line += 1
            bad.append(
                (line, f"series {i}: the key {series.repeated[:40]!r} appears twice: an ambiguous series is not loaded")
            )
            continue
        if not isinstance(metric, dict) or not isinstance(values, list):
            line += 1
            bad.append((line, f"series {i}: not a metric with values"))
            continue
        try:
            cluster, labels, only = series_labels(metric, found.metrics_clusters, found.only_cluster)
            assumed += only
        except ValueError as exc:
            also = _also_unread(metric.get("__name__"), kind)
            for _ in values or [None]:
                line += 1
                bad.append((line, f"series {i} ({str(metric.get('__name__'))[:60]}): {exc}{also}"))
            continue
        for sample in values:
            line += 1
            try:
                if not isinstance(sample, list) or len(sample) != 2:
                    raise ValueError("a sample is not [time, value]")
                row = {
                    "sampled_at": instant(sample[0]),
                    "cluster_id": cluster,
                    "metric": None if metric.get("__name__") is None else str(metric["__name__"]),
                    "labels": labels,
                    "value": str(sample[1]),
                }
            except ValueError as exc:
                bad.append((line, f"series {i}: {exc}"))
                continue
            cols.append(line, row)
    result = ReadResult(table=cols.table(), present=list(allowed), bad_lines=sorted(bad))
    result.notes += assumed_note(assumed, found.only_cluster)
    return result


def _range_reader(kind: str):  # noqa: ANN202 - a FileFormat reader
    return lambda found, allowed: read_prometheus_range(found, allowed, kind)


for _kind in METRIC_KINDS:
    register_file_format(
        FileFormat(name=METRIC_FORMATS[1], kind=_kind, sniff=sniff_prometheus_range, read=_range_reader(_kind))
    )
