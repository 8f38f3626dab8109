"""The cluster's fixed cost split between prompt (prefill) and generation (decode), marts.monthly_phase_cost, and the
reference model's list price of the month that it, and what the prefix cache saved, are valued at, from the landing
files on. Every figure is worked by hand below; the split's arithmetic on its own is in the mart's given/expect cases
(tests/models/cases/marts.monthly_phase_cost.yml)."""

from decimal import Decimal

import pytest

from tests.conftest import PRICE_MOONSHOT, request

#: c1 rents 248 node-hours on demand at $10 in July: a fixed cost of $2,480 and nothing else
CHARGE = {"charge_id": "od-1", "cluster_id": "c1", "charge_start": "2026-07-01T00:00:00Z",
          "charge_end": "2026-07-11T08:00:00Z", "kind": "on_demand", "quantity": "248", "unit": "node_hour",
          "unit_price": "10", "amount": "2480", "currency": "USD"}  # fmt: skip
#: one self-hosted request: 400,000 cache-hit + 600,000 cache-miss input = 1,000,000 prompt tokens; 200,000 output
#: + 50,000 reasoning = 250,000 generation tokens
REQUEST = request("r1", "t1", "2026-07-10T10:05:00Z", route="self_hosted", cache_hit_input_tokens=400_000,
                  cache_miss_input_tokens=600_000, output_tokens=200_000, reasoning_tokens=50_000)  # fmt: skip
LABELS = 'engine="0",instance="node-1:8000"'
#: the marts these tests read, each with what it reads: the other models are not built
READS = ("+marts.monthly_phase_cost", "+marts.monthly_cluster_telemetry")


def _sample(at: str, metric: str, value: str, labels: str = LABELS) -> dict:
    return {"timestamp": f"2026-07-10T{at}:00Z", "cluster_id": "c1", "metric": metric, "labels": labels,
            "value": value}  # fmt: skip


def _timed(prefill: tuple[str, str], decode: tuple[str, str]) -> list[dict]:
    """vLLM's phase-time histogram sums at 10:00 and at 11:00."""
    return [
        _sample(t, metric, v)
        for metric, values in (("vllm:request_prefill_time_seconds_sum", prefill),
                               ("vllm:request_decode_time_seconds_sum", decode))
        for t, v in zip(("10:00", "11:00"), values)
    ]  # fmt: skip


def _load(ledger, *extra: tuple[str, list[dict]]) -> None:
    for kind, rows in (("prices", [PRICE_MOONSHOT]), ("cluster-charges", [CHARGE]), ("requests", [REQUEST]), *extra):
        res = ledger.load(kind, rows)
        assert (res.status, res.rows_quarantined) == ("loaded", 0), res.message


def _phases(ledger) -> dict:
    return {r["phase"]: r for r in ledger.rows("SELECT * FROM marts.monthly_phase_cost WHERE cluster_id = 'c1'")}


@pytest.mark.slow
def test_the_fixed_cost_follows_the_engines_time_in_each_phase(ledger):
    # prefill 12.5 s -> 42.5 s (30 s), decode 100 s -> 370 s (270 s): prompt's share 30 / 300 = 0.1
    _load(ledger, ("engine-metrics", _timed(("12.5", "42.5"), ("100", "370"))))
    ledger.build(*READS)
    p, g = (_phases(ledger)[k] for k in ("prompt", "generation"))
    assert (p["allocation_method"], p["phase_seconds"], g["phase_seconds"]) == ("engine_phase_time", 30, 270)
    assert (p["allocation_share"], g["allocation_share"]) == pytest.approx((0.1, 0.9))
    # $2,480 x 0.1 = $248 to prompt; $2,480 - $248 = $2,232 to generation
    assert (p["cost_usd"], g["cost_usd"]) == (Decimal("248"), Decimal("2232"))
    # per million: $248 / 1,000,000 x 1e6 = $248; $2,232 / 250,000 x 1e6 = $8,928
    assert (p["tokens"], g["tokens"]) == (1_000_000, 250_000)
    assert (p["cost_per_million_tokens"], g["cost_per_million_tokens"]) == (Decimal("248"), Decimal("8928"))
    # the API's list price of the same tokens: prompt at the cluster's cache-hit share (400,000 x $0.30 + 600,000 x
    # $3.00) / 1,000,000 = (0.12 + 1.80) = $1.92 a million; generation at the output price, $15
    assert (p["api_list_per_million"], g["api_list_per_million"]) == (Decimal("1.92"), Decimal("15"))


@pytest.mark.slow
def test_sglang_s_cached_tokens_give_its_prefix_cache_share(ledger):
    # SGLang counts all its prompt tokens (0 -> 1,000) and, by cache source, those found cached: device 0 -> 300,
    # host 0 -> 100: 400 of 1,000 = 0.4
    samples = [_sample(t, "sglang:prompt_tokens_total", v) for t, v in (("10:00", "0"), ("11:00", "1000"))] + [
        _sample(t, "sglang:cached_tokens_total", v, labels=f'cache_source="{source}",{LABELS}')
        for source, values in (("device", ("0", "300")), ("host", ("0", "100")))
        for t, v in zip(("10:00", "11:00"), values)
    ]  # fmt: skip
    _load(ledger, ("engine-metrics", samples))
    ledger.build(*READS)
    row = ledger.one("SELECT * FROM marts.monthly_cluster_telemetry WHERE cluster_id = 'c1'")
    assert (row["prefix_cache_queried_tokens"], row["prefix_cache_hit_tokens"]) == (1000, 400)
    assert row["prefix_cache_hit_share"] == 0.4
    # 400 hits x ($3.00 - $0.30) / 1e6 = $0.00108
    assert row["prefix_cache_saved_usd"] == Decimal("0.00108")


@pytest.mark.slow
def test_a_month_is_valued_at_the_reference_price_in_force_at_its_end(ledger):
    # Moonshot cuts its prices on 20 July to $2.00 a cache-miss and $0.20 a cache-hit million, $10 output. July's
    # monthly figures take the new price: a hit saves $1.80 a million (not $2.70): 600,000 hits -> $1.08; the phase
    # comparison: prompt (400,000 x 0.20 + 600,000 x 2.00) / 1e6 = $1.28 a million, generation $10
    cut = {**PRICE_MOONSHOT, "effective_from": "2026-07-20T00:00:00Z", "cache_hit_input_per_million": "0.20",
           "cache_miss_input_per_million": "2.00", "output_per_million": "10.00"}  # fmt: skip
    samples = [
        _sample(t, metric, v)
        for metric, values in (("vllm:prefix_cache_queries_total", ("0", "1000000")),
                               ("vllm:prefix_cache_hits_total", ("0", "600000")))
        for t, v in zip(("10:00", "11:00"), values)
    ]  # fmt: skip
    _load(ledger, ("prices", [cut]), ("engine-metrics", samples))
    ledger.build(*READS)
    row = ledger.one("SELECT * FROM marts.monthly_cluster_telemetry WHERE cluster_id = 'c1'")
    assert row["prefix_cache_saved_usd"] == Decimal("1.08")
    p, g = (_phases(ledger)[k] for k in ("prompt", "generation"))
    assert (p["api_list_per_million"], g["api_list_per_million"]) == (Decimal("1.28"), Decimal("10"))
