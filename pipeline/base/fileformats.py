"""What a file's format is called and what the settings may say about a file of it: the names of the formats each
kind reads besides its canonical files, and the per-file settings entries ([[request_logs]], [[load_tests]],
[[billing_exports]], [[price_lists]]). The settings read these shapes here; the readers that implement the formats
import them too, so settings never import a reader."""

from __future__ import annotations

from decimal import Decimal

import fnmatch
from dataclasses import dataclass
from pathlib import Path


@dataclass(kw_only=True, frozen=True)
class FileMapping:
    """A per-file settings entry: the file-name pattern it applies to and the format it names."""

    match: str = "*"
    format: str | None = None

    def applies_to(self, path: Path) -> bool:
        return fnmatch.fnmatch(path.name, self.match)


def _modules_in(folder: Path) -> tuple[str, ...]:
    """The names of the format modules in ``folder`` (read from the file names: nothing is imported)."""
    return tuple(sorted(p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "common", "registry")))


#: The request-log formats: the canonical columns, and one module each in pipeline/ingest/formats/requests/ (a format's
#: name is its module's: a new module is a new format, with no list to extend)
LOG_FORMATS = ("canonical", *_modules_in(Path(__file__).resolve().parents[1] / "ingest" / "formats" / "requests"))


@dataclass(kw_only=True, frozen=True)
class LogMapping(FileMapping):
    """Per-file defaults for fields a log does not carry ([[request_logs]] in the settings)."""

    route: str | None = None
    provider: str | None = None
    cluster_id: str | None = None
    model: str | None = None
    team: str | None = None
    workload: str | None = None
    task_id_field: str | None = None
    attempt_field: str | None = None


LOAD_TEST_FORMATS = ("canonical", "vllm_bench", "sglang_bench")


@dataclass(frozen=True)
class LoadTestMapping(FileMapping):
    """Per-file values a benchmark result does not carry ([[load_tests]] in the settings)."""

    cluster_id: str | None = None
    sweep_id: str | None = None
    measured_at: str | None = None


BILLING_FORMATS = ("openai_costs", "anthropic_costs")


USAGE_FORMATS = ("openai_usage", "anthropic_usage")


@dataclass(frozen=True)
class BillingMapping(FileMapping):
    """Per-file values a billing export does not carry ([[billing_exports]] in the settings)."""

    provider: str | None = None
    """The provider its lines are invoices of (default: openai / anthropic)."""


PRICE_LIST_FORMATS = ("litellm",)

#: A serving engine's or a GPU's metrics: the long CSV, a Prometheus HTTP API query_range response (JSON, resultType
#: matrix), Prometheus text exposition / OpenMetrics (.prom, .txt), or (GPUs only) nvidia-smi's --query-gpu CSV
METRIC_FORMATS = ("canonical", "prometheus_range", "prometheus_text", "nvidia_smi")
#: The formats of a serving engine's metrics (nvidia-smi measures GPUs only)
ENGINE_METRIC_FORMATS = METRIC_FORMATS[:3]
#: The kinds read in the metric formats
METRIC_KINDS = ("engine-metrics", "gpu-metrics")


#: The routes a budget may cover
BUDGET_ROUTES = ("api", "self_hosted", "both")


@dataclass(frozen=True)
class Budget:
    """A monthly budget ([[budgets]] in the settings): a team's (``*``: every team's) spend on a route (or both)."""

    team: str
    route: str
    usd: Decimal


@dataclass(kw_only=True, frozen=True)
class MetricsFileMapping(FileMapping):
    """When a scrape saved without timestamps was taken, for a file whose name and text do not say
    ([[metrics_files]] in the settings)."""

    scraped_at: str | None = None
    """ISO 8601, UTC unless it names an offset (kept as UTC, without one)."""


@dataclass(frozen=True)
class MetricsCluster:
    """A series whose label ``label`` has the value ``value`` belongs to cluster ``cluster_id`` ([[metrics_clusters]]
    in the settings; a series' own cluster_id or cluster label comes first)."""

    label: str
    value: str
    cluster_id: str


@dataclass(frozen=True)
class PriceListMapping(FileMapping):
    """What a price list does not say ([[price_lists]] in the settings)."""

    effective_from: str | None = None
    """When its prices apply from (ISO-8601; required for a LiteLLM file)."""
    currency: str | None = None
    """The currency of its prices (default USD)."""
