"""What the report says of a cluster's GPU meters, from hand-made rows of marts.monthly_cluster_telemetry: which
DCGM field the busy share rests on is said."""

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace

from pipeline.serve.meters import meter_sentences
from pipeline.serve.records import ClusterTelemetry, PhaseCost


def _row(busy_source: str) -> ClusterTelemetry:
    return ClusterTelemetry(
        month=dt.date(2026, 10, 1), cluster_id="k3", gpus_metered=8, provisioned_gpu_hours=Decimal("5952"),
        metered_gpu_hours=Decimal("5952"), engine_active_gpu_hours=Decimal("1488"), engine_active_share=0.25,
        token_utilisation=None, energy_kwh=None, energy_source=None, energy_usd=None, energy_line=None,
        waiting_hours=0, least_waiting_hour_tokens_per_second=None, capacity_tokens_per_second=None,
        queue_pressure=False, busy_source=busy_source, prefix_cache_queried_tokens=None, prefix_cache_hit_tokens=None,
        prefix_cache_hit_share=None, api_cache_hit_share=None, prefix_cache_saved_usd=None,
    )  # fmt: skip


def _said(busy_source: str) -> str:
    return " ".join(meter_sentences(SimpleNamespace(telemetry=[_row(busy_source)], phases=[])))


def test_the_busy_share_says_which_dcgm_field_it_rests_on():
    # 1,488 busy GPU-hours of 5,952 provisioned (8 GPUs x 744 hours) = 25.0%
    assert _said("engine_active") == (
        "k3's GPUs were busy 25.0% of their 5,952 provisioned GPU-hours by their own meters (the time their graphics "
        "engines were active, as NVIDIA's DCGM exporter reports it)."
    )
    assert "the time a kernel ran, DCGM's GPU utilisation" in _said("gpu_util") and "upper bound" in _said("gpu_util")
    assert "where DCGM reports it, else the time a kernel ran" in _said("mixed")


def test_the_prefix_cache_s_share_is_said_beside_the_api_s_with_its_worth():
    from dataclasses import replace

    row = replace(
        _row("engine_active"), prefix_cache_queried_tokens=Decimal("1000000"),
        prefix_cache_hit_tokens=Decimal("600000"), prefix_cache_hit_share=0.6, api_cache_hit_share=0.5,
        prefix_cache_saved_usd=Decimal("1.62"),
    )  # fmt: skip
    said = " ".join(meter_sentences(SimpleNamespace(telemetry=[row], phases=[])))
    assert (
        "k3's serving engines found 60.0% of the prompt tokens they looked up in their prefix cache (600,000 of "
        "1,000,000: prefill not computed again), beside 50.0% of the API route's input tokens read from its "
        "provider's cache; on the reference API those hits would have saved $1.62" in said
    )


def _phase(phase: str, tokens: int, cost: str, per_million: str, api: str | None) -> PhaseCost:
    return PhaseCost(
        month=dt.date(2026, 7, 1), cluster_id="c1", phase=phase, tokens=tokens, allocation_method="engine_phase_time",
        phase_seconds=None, allocation_share=None, cost_usd=Decimal(cost), cost_per_million_tokens=Decimal(per_million),
        api_list_per_million=None if api is None else Decimal(api),
    )  # fmt: skip


def test_the_phase_split_is_said_with_each_phase_beside_the_api_s_list_price():
    # $248 of 1,000,000 prompt tokens = $248 a million; $2,232 of 250,000 generation tokens = $8,928 a million;
    # the fixed cost they add up to: $2,480
    rows = [_phase("prompt", 1_000_000, "248", "248", "1.92"), _phase("generation", 250_000, "2232", "8928", "15")]
    said = " ".join(meter_sentences(SimpleNamespace(telemetry=[], phases=rows)))
    assert said.startswith("c1's fixed cost of $2,480.00, split by the seconds its engines' requests spent")
    assert (
        "$248.00 to prompt ($248.00 a million prompt tokens, beside the reference API's $1.92 list price at the "
        "cluster's cache-hit share); $2,232.00 to generation ($8,928.00 a million generation tokens, beside the "
        "reference API's $15.00 output list price)." in said
    )
    # without a reference price the comparison is left out, not printed as n/a
    bare = [_phase("prompt", 1_000_000, "248", "248", None), _phase("generation", 250_000, "2232", "8928", None)]
    assert "reference API" not in " ".join(meter_sentences(SimpleNamespace(telemetry=[], phases=bare)))
