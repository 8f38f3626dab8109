"""How a run reads and checks its landing files: the settings' per-file entries, ``--format``, the size limits and
plausibility bounds, a run's corrections."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from pipeline.base.fileformats import (
    BillingMapping,
    FileMapping,
    LoadTestMapping,
    LogMapping,
    MetricsCluster,
    MetricsFileMapping,
    PriceListMapping,
)
from pipeline.base.settings import GX_MAX_ROWS, MAX_FILE_BYTES, MAX_LINE_BYTES, MAX_TEXT_BYTES
from schemas.expectations import Bounds

#: A file under this folder of its kind folder corrects rows loaded earlier (``IngestOptions.correction``).
CORRECTIONS_FOLDER = "corrections"


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
    metrics_clusters: tuple[MetricsCluster, ...] = ()
    """[[metrics_clusters]]: the cluster of an engine or GPU metric series that has no cluster label."""
    only_cluster: str | None = None
    """The ledger's only cluster, when it has exactly one: a metrics series with no cluster label and no
    [[metrics_clusters]] entry belongs to it (said in the file's notes)."""
    prices_in_force: Mapping[tuple[str, str, str, str], Mapping[str, Any]] = field(default_factory=dict)
    """The price in force now of each (provider, model, service tier, long-context level), its columns as the ledger
    holds them: what a LiteLLM price map, which carries no dates, is compared with."""
    load_day: date | None = None
    """The day a file is loaded on (UTC; None: today): a price a LiteLLM map changes takes effect from it, unless
    the file's name gives a date."""
    metrics_file_mappings: tuple[MetricsFileMapping, ...] = ()
    """[[metrics_files]]: when a scrape without timestamps, whose name and text do not say, was taken."""
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

    shown_as: tuple[Path, str] | None = None
    """A landing folder copied from object storage: (its local copy, its URL). A file in the copy is named by its URL
    in messages and in the manifest."""

    def reading_settings(self, kind: str) -> str:
        """A fingerprint of what the settings say of reading a file of ``kind``: the bounds and limits every kind
        keeps, and the kind's own entries (its [[...]] mappings; the metrics' clusters). A file loaded with rows
        quarantined is read again by a nightly whose fingerprint for its kind differs (a settings change may mend
        them)."""
        import hashlib
        import json
        from dataclasses import asdict

        own = {
            "requests": (self.log_mappings,),
            "invoices": (self.billing_mappings, self.invoice_duplicates_wanted),
            "usage": (self.billing_mappings,),
            "prices": (self.price_list_mappings,),
            "load-tests": (self.load_test_mappings,),
            "engine-metrics": (self.metrics_clusters, self.only_cluster, self.metrics_file_mappings),
            "gpu-metrics": (self.metrics_clusters, self.only_cluster, self.metrics_file_mappings),
        }.get(kind, ())
        said = [asdict(self.bounds), self.max_text_bytes, self.max_line_bytes, self.extra_columns, *own]
        return hashlib.sha256(json.dumps(said, default=repr, sort_keys=True).encode()).hexdigest()[:16]

    def shown(self, path: Path) -> str:
        """How the file at ``path`` is named to the user and in the manifest."""
        if self.shown_as and path.is_relative_to(self.shown_as[0]):
            return f"{self.shown_as[1]}/{path.relative_to(self.shown_as[0]).as_posix()}"
        return str(path)

    def described(self, kind: str, path: Path) -> tuple[FileMapping, str | None]:
        """What the settings say of the file of ``kind`` at ``path``: the entry whose pattern matches its name (an
        empty one when none does), and the format named for it (``--format``, which names no load-test format; else
        the entry's; None: detect it)."""
        entries, empty = {
            "requests": (self.log_mappings, LogMapping),
            "invoices": (self.billing_mappings, BillingMapping),
            "usage": (self.billing_mappings, BillingMapping),
            "prices": (self.price_list_mappings, PriceListMapping),
            "load-tests": (self.load_test_mappings, LoadTestMapping),
            "engine-metrics": (self.metrics_file_mappings, MetricsFileMapping),
            "gpu-metrics": (self.metrics_file_mappings, MetricsFileMapping),
        }.get(kind, ((), FileMapping))
        entry: FileMapping = next((m for m in entries if m.applies_to(path)), empty())
        forced = None if kind == "load-tests" else self.log_format
        return entry, forced or entry.format
