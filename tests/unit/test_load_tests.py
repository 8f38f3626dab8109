"""The load-tests kind: canonical sweeps and the serving benchmarks' own result files (vLLM, SGLang), mapped by hand."""

from decimal import Decimal

from pipeline.ingest.files import IngestOptions, ingest_file
from pipeline.base.fileformats import LoadTestMapping
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "load_tests"


def _load(ledger, name: str, mapping: LoadTestMapping):
    return ingest_file(
        ledger.con, "load-tests", FIXTURES / name, ledger.store, options=IngestOptions(load_test_mappings=(mapping,))
    )


def test_vllm_bench_serve_results_map_onto_sweep_points(ledger):
    res = _load(ledger, "vllm-c32.json", LoadTestMapping(match="vllm-*", cluster_id="c1"))
    # 3 runs: two map; the third has neither p95_e2el_ms nor p99_e2el_ms and is quarantined
    assert (res.status, res.rows_in, res.rows_loaded, res.rows_quarantined) == ("loaded", 3, 2, 1)
    rows = ledger.rows("SELECT * FROM raw.load_tests ORDER BY concurrency")
    # run 1: total_token_throughput 9540.37, p95_e2el_ms 45120.75, median 39800.25, date 2026-09-15 10:15:00, label
    assert (rows[0]["sweep_id"], rows[0]["cluster_id"], rows[0]["concurrency"], str(rows[0]["measured_at"])) == (
        "k3-tuned",
        "c1",
        32,
        "2026-09-15 10:15:00",
    )
    assert (
        rows[0]["tokens_per_second"],
        rows[0]["p95_latency_ms"],
        rows[0]["p50_latency_ms"],
        rows[0]["output_tokens_per_second"],
    ) == (Decimal("9540.37"), Decimal("45120.75"), Decimal("39800.25"), Decimal("1590.06"))
    # run 2: no p95, so its p99 (90000.5 >= p95) stands in
    assert (rows[1]["concurrency"], rows[1]["p95_latency_ms"]) == (64, Decimal("90000.5"))
    reason = ledger.one("SELECT reason FROM meta.quarantine")["reason"]
    assert "p95_e2el_ms" in reason and "--percentile-metrics e2el" in reason


def test_sglang_bench_serving_results_need_a_timestamp_from_the_settings(ledger):
    res = _load(
        ledger,
        "sglang.jsonl",
        LoadTestMapping(match="sglang*", cluster_id="c1", sweep_id="s1", measured_at="2026-09-01T08:00:00"),
    )
    assert (res.rows_in, res.rows_loaded, res.rows_quarantined) == (2, 2, 0)
    rows = ledger.rows("SELECT * FROM raw.load_tests ORDER BY concurrency")
    # line 2: max_concurrency null -> the measured mean concurrency 7.6 rounded = 8; total_throughput 6000; p95 15000
    assert (rows[0]["concurrency"], rows[0]["tokens_per_second"], rows[0]["p95_latency_ms"]) == (8, 6000, 15000)
    # line 1: no total_throughput -> input 7996.0 + output 1599.2 = 9595.2; no p95 -> p99 24000
    assert (rows[1]["concurrency"], rows[1]["tokens_per_second"], rows[1]["p95_latency_ms"]) == (
        16,
        Decimal("9595.2"),
        24000,
    )
    assert {str(r["measured_at"]) for r in rows} == {"2026-09-01 08:00:00"}


def test_sglang_without_a_timestamp_is_quarantined_not_guessed(ledger):
    res = _load(ledger, "sglang.jsonl", LoadTestMapping(match="sglang*", cluster_id="c1"))
    assert (res.rows_loaded, res.rows_quarantined) == (0, 2)
    assert "measured_at" in ledger.rows("SELECT reason FROM meta.quarantine")[0]["reason"]


def test_canonical_points_that_break_the_rules_are_quarantined(ledger):
    base = {"sweep_id": "A", "cluster_id": "c1", "measured_at": "2026-06-20T10:00:00Z", "p95_latency_ms": "100"}
    res = ledger.load(
        "load-tests",
        [
            {**base, "concurrency": "0", "tokens_per_second": "10"},  # concurrency < 1
            {**base, "concurrency": "2", "tokens_per_second": "0"},  # not > 0
            {**base, "concurrency": "4", "tokens_per_second": "10", "p50_latency_ms": "200"},  # p95 < p50
            {**base, "concurrency": "8", "tokens_per_second": "10", "p50_latency_ms": "50"},  # fine
        ],
    )
    assert (res.rows_in, res.rows_loaded, res.rows_quarantined) == (4, 1, 3)
    reasons = " | ".join(r["reason"] for r in ledger.rows("SELECT reason FROM meta.quarantine ORDER BY line"))
    assert "concurrency is less than 1" in reasons and "tokens_per_second is not above 0" in reasons
    assert "p95_latency_ms is below p50_latency_ms" in reasons
