"""A landing file and what it is: its container (CSV, JSON lines, Parquet or Prometheus text, gzip or not), told from
its name, and its format (``detection``). Every reader takes a ``Detected`` and never looks at the file's name
again."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Callable, Literal

from pipeline.base.fileformats import FileMapping, MetricsCluster
from pipeline.ingest.readers import FileRejected, ReadResult

Container = Literal["csv", "jsonl", "parquet", "text"]
SUFFIXES: dict[str, Container] = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    # Prometheus text exposition / OpenMetrics (the node exporter's textfile collector's suffix): metrics kinds only
    ".prom": "text",
}


@dataclass(frozen=True, kw_only=True)
class Detected:
    """A landing file and what it is: everything a reader needs to read it without looking again."""

    path: Path
    container: Container
    gz: bool
    format: str
    """``canonical`` or a registered format's name."""
    entry: FileMapping
    """The settings entry whose pattern matches the file's name (an empty one when none does)."""
    reader: Callable[[Detected, list[str]], ReadResult] | None = None
    """The reader of its format (None: the canonical readers)."""
    metrics_clusters: tuple[MetricsCluster, ...] = ()
    """For engine and GPU metrics: the settings' [[metrics_clusters]] (a label and value -> the cluster)."""
    only_cluster: str | None = None
    """For engine and GPU metrics: the ledger's only cluster, for a series that names none."""
    prices_in_force: Mapping[tuple[str, str, str, str], Mapping[str, Any]] = field(default_factory=dict)
    """For prices: the price in force now of each key (``IngestOptions.prices_in_force``)."""
    load_day: date | None = None
    """For prices: the day the file is loaded on (``IngestOptions.load_day``)."""

    @property
    def canonical(self) -> bool:
        return self.format == "canonical"

    def json_gz(self, what: str) -> bool:
        """Whether the file is gzip-compressed; a Parquet file is rejected: "``path``: ``what`` JSON, not Parquet"."""
        if self.container == "parquet":
            raise FileRejected(f"{self.path}: {what} JSON, not Parquet")
        return self.gz


def container(path: Path) -> tuple[Container, bool]:
    """(container, gzipped) from the file's name."""
    name = path.name.lower()
    gz = name.endswith(".gz")
    suffix = Path(name[:-3] if gz else name).suffix
    found = SUFFIXES.get(suffix)
    if found is None:
        raise FileRejected(
            f"{path}: unknown file type {suffix or '(none)'!r}; expected one of "
            f"{', '.join(sorted(SUFFIXES))} (optionally .gz)"
        )
    return found, gz
