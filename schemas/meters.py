"""What the cluster's own meters say, as rows: a serving engine's token counters and queue gauges
(``engine-metrics``) and a GPU's telemetry from NVIDIA's DCGM exporter (``gpu-metrics``), one sample a row."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import DateTime, Numeric
from sqlmodel import Field

from schemas.provenance import Provenance

#: The serving engines' metrics the ledger reads (``engine-metrics``), by their names as vLLM and SGLang export them:
#: the tokens each engine processed (counters), the requests queued and running (gauges), the prompt tokens its
#: prefix cache was asked for and found (vLLM's counters; SGLang counts those found), and the seconds its requests
#: spent in the prefill and decode phases (the sums of vLLM's histograms, counters).
ENGINE_METRICS: tuple[str, ...] = (
    "vllm:prompt_tokens_total",
    "vllm:generation_tokens_total",
    "vllm:num_requests_waiting",
    "vllm:num_requests_running",
    "vllm:prefix_cache_queries_total",
    "vllm:prefix_cache_hits_total",
    "vllm:request_prefill_time_seconds_sum",
    "vllm:request_decode_time_seconds_sum",
    "sglang:prompt_tokens_total",
    "sglang:generation_tokens_total",
    "sglang:num_queue_reqs",
    "sglang:num_running_reqs",
    "sglang:cached_tokens_total",
)
#: The GPU telemetry the ledger reads (``gpu-metrics``), by the names NVIDIA's DCGM exporter gives them: the share of
#: time the graphics engine was active (a 0-1 gauge, a profiling field), the share of time a kernel ran (a 0-100
#: gauge, one of the exporter's default fields: how busy the GPU was where the profiling fields are not collected),
#: the energy drawn since the driver loaded (a counter, mJ) and the power drawn (a gauge, W).
GPU_METRICS: tuple[str, ...] = (
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "DCGM_FI_DEV_POWER_USAGE",
)
#: The GPU metrics that are a share of time, from 0 to 1 (a sample above 1 is quarantined)
GPU_SHARE_METRICS: tuple[str, ...] = ("DCGM_FI_PROF_GR_ENGINE_ACTIVE",)
#: The GPU metrics that are a percentage of time, from 0 to 100 (a sample above 100 is quarantined)
GPU_PERCENT_METRICS: tuple[str, ...] = ("DCGM_FI_DEV_GPU_UTIL",)


class EngineSample(Provenance, table=True):
    """One sample of a serving engine's metric: a counter's running total or a gauge's value at an instant, for one
    series (one engine of one instance) of a cluster. Read from a long CSV or a Prometheus query_range response."""

    __tablename__ = "engine_metrics"

    cluster_id: str = Field(primary_key=True, description="The cluster the engine serves on.")
    metric: str = Field(
        primary_key=True,
        description="The metric's name as the engine exports it: vllm:prompt_tokens_total, "
        "vllm:generation_tokens_total, vllm:num_requests_waiting, vllm:num_requests_running, "
        "vllm:prefix_cache_queries_total, vllm:prefix_cache_hits_total (prompt tokens looked up in and found in the "
        "prefix cache), vllm:request_prefill_time_seconds_sum, vllm:request_decode_time_seconds_sum (seconds "
        "requests spent in each phase), or SGLang's sglang:prompt_tokens_total, sglang:generation_tokens_total, "
        "sglang:num_queue_reqs, sglang:num_running_reqs, sglang:cached_tokens_total (prompt tokens found cached).",
    )
    labels: str = Field(
        primary_key=True,
        description="The series' labels besides the metric's name and the cluster, as name=\"value\" pairs sorted "
        'by name and joined by commas (instance="node-1:8000",model_name="kimi-k3"): one engine of one instance; '
        "(none) for a series with no other labels.",
    )
    sampled_at: datetime = Field(
        primary_key=True, sa_type=DateTime, description="When the sample was taken, UTC (the file's timestamp)."
    )
    value: Decimal = Field(
        sa_type=Numeric(38, 6),
        nullable=False,
        description="The sample: a counter's total since the engine started (it falls back to 0 when the engine "
        "restarts) or a gauge's value.",
    )


class GpuSample(Provenance, table=True):
    """One sample of a GPU's telemetry as NVIDIA's DCGM exporter publishes it, for one series (one GPU of one host) of
    a cluster. Read from a long CSV, a Prometheus query_range response or timestamped text exposition."""

    __tablename__ = "gpu_metrics"

    cluster_id: str = Field(primary_key=True, description="The cluster the GPU belongs to.")
    metric: str = Field(
        primary_key=True,
        description="The field's name as the DCGM exporter publishes it: DCGM_FI_PROF_GR_ENGINE_ACTIVE (share of "
        "time the graphics engine was active, 0-1), DCGM_FI_DEV_GPU_UTIL (percentage of time a kernel ran, 0-100), "
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ since the driver "
        "loaded, a counter) or DCGM_FI_DEV_POWER_USAGE (W, a gauge).",
    )
    labels: str = Field(
        primary_key=True,
        description="The series' labels besides the metric's name and the cluster, as name=\"value\" pairs sorted "
        'by name and joined by commas (Hostname="node-1",UUID="GPU-...",gpu="0",...): one GPU; (none) for a series '
        "with no other labels.",
    )
    sampled_at: datetime = Field(
        primary_key=True, sa_type=DateTime, description="When the sample was taken, UTC (the file's timestamp)."
    )
    value: Decimal = Field(
        sa_type=Numeric(38, 6),
        nullable=False,
        description="The sample: the energy counter's total (it falls back to 0 when the driver reloads) or a "
        "gauge's value.",
    )


#: ingest kind (CLI name) -> table class
#: What a provider's usage export counts (``usage.token_type``): the request log's token columns, and requests.
