"""The engine-metrics kind: a serving engine's counters and gauges, from the long CSV or a Prometheus query_range
response (fixtures and their provenance: tests/fixtures/metrics/README.md)."""

import json
from decimal import Decimal

from pipeline.ingest.files import IngestOptions, ingest_file
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "metrics"


def _load(ledger, path, options: IngestOptions = IngestOptions()):
    return ingest_file(ledger.con, "engine-metrics", path, ledger.store, options=options)


def test_a_long_csv_loads_its_samples_as_written(ledger):
    res = _load(ledger, FIXTURES / "long.csv")
    assert (res.status, res.rows_in, res.rows_loaded, res.rows_quarantined) == ("loaded", 3, 3, 0)
    rows = ledger.rows("SELECT * FROM raw.engine_metrics ORDER BY metric DESC, sampled_at")
    # the counter's two samples (120, then 450 a minute later) and the queue's 2, under the labels as written
    assert [(str(r["sampled_at"]), r["metric"], r["value"]) for r in rows] == [
        ("2026-07-06 00:00:00", "sglang:prompt_tokens_total", Decimal("120")),
        ("2026-07-06 00:01:00", "sglang:prompt_tokens_total", Decimal("450")),
        ("2026-07-06 00:01:00", "sglang:num_queue_reqs", Decimal("2")),
    ]
    assert {r["labels"] for r in rows} == {'instance="node-1:30000",model_name="kimi-k3"'}
    assert {r["cluster_id"] for r in rows} == {"k3-b200-01"}


def test_a_query_range_response_is_detected_and_each_sample_is_a_row(ledger):
    res = _load(ledger, FIXTURES / "vllm_query_range.json")
    # 4 series of 3 + 2 + 2 + 2 samples = 9 rows; the last series has no cluster label: its 2 samples quarantined
    assert (res.status, res.rows_in, res.rows_loaded, res.rows_quarantined) == ("loaded", 9, 7, 2)
    rows = ledger.rows("SELECT * FROM raw.engine_metrics ORDER BY metric, labels, sampled_at")
    node1 = 'engine="0",instance="node-1:8000",job="vllm",model_name="kimi-k3"'
    node2 = 'engine="0",instance="node-2:8000",job="vllm",model_name="kimi-k3"'
    # 1783296000 s after 1970-01-01 is 2026-07-06 00:00:00 UTC; the generation counter's samples are half a second on
    assert [(r["metric"], r["labels"], str(r["sampled_at"]), r["value"]) for r in rows] == [
        ("vllm:generation_tokens_total", node1, "2026-07-06 00:00:00.500000", Decimal("200")),
        ("vllm:generation_tokens_total", node1, "2026-07-06 00:01:00.500000", Decimal("350")),
        ("vllm:prompt_tokens_total", node1, "2026-07-06 00:00:00", Decimal("1000")),
        ("vllm:prompt_tokens_total", node1, "2026-07-06 00:01:00", Decimal("4000")),
        ("vllm:prompt_tokens_total", node1, "2026-07-06 00:02:00", Decimal("9000")),
        ("vllm:prompt_tokens_total", node2, "2026-07-06 00:00:00", Decimal("500")),
        ("vllm:prompt_tokens_total", node2, "2026-07-06 00:01:00", Decimal("700")),
    ]
    assert {r["cluster_id"] for r in rows} == {"k3-b200-01"}
    reasons = [r["reason"] for r in ledger.rows("SELECT reason FROM meta.quarantine ORDER BY line")]
    # named with its labels, so a [[metrics_clusters]] entry can be written for it
    assert (
        reasons
        == [
            'series 4 (vllm:num_requests_waiting): its labels (engine="0",instance="node-9:8000",job="vllm",'
            'model_name="kimi-k3") name no cluster: no cluster_id or cluster label, no [[metrics_clusters]] entry '
            "matches, and the ledger does not have exactly one cluster to read it as; add to the settings: "
            '[[metrics_clusters]] cluster_id = "..." label = "instance" value = "node-9:8000"'
        ]
        * 2
    )


def _response(*series: dict) -> dict:
    return {"status": "success", "data": {"resultType": "matrix", "result": list(series)}}


def _series(name: str, values: list, **labels: str) -> dict:
    return {"metric": {"__name__": name, "cluster": "c1", "instance": "n1:8000", **labels}, "values": values}


def test_hostile_samples_are_quarantined_with_their_reason_and_the_rest_load(ledger, tmp_path):
    path = tmp_path / "hostile.json"
    doc = _response(
        _series(
            "vllm:prompt_tokens_total",
            [[1783296000, "NaN"], [1783296060, "+Inf"], [1783296120, "-5"], [1783296180, "1e308"], [1783296240, "7"]],
        ),
        _series("vllm:prompt_tokens_total", [[1783296000, "1"]], engine="0\x1b[31m"),
        _series("vllm:cache_config_info", [[1783296000, "1"]]),
        _series("vllm:prompt_tokens_total", [["soon", "1"], [1e300, "1"], [1783296000]]),
    )
    path.write_text(json.dumps(doc))
    res = _load(ledger, path)
    # 5 + 1 + 1 + 3 = 10 samples; only the 7 at 00:04 loads
    assert (res.status, res.rows_in, res.rows_loaded, res.rows_quarantined) == ("loaded", 10, 1, 9)
    assert ledger.one("SELECT value FROM raw.engine_metrics")["value"] == 7
    reasons = {r["line"]: r["reason"] for r in ledger.rows("SELECT line, reason FROM meta.quarantine")}
    assert "value" in reasons[1] and "value" in reasons[2] and "value is negative" in reasons[3]
    assert "value" in reasons[4]
    assert "control character" in reasons[6]
    assert "metric is not one the ledger reads" in reasons[7]
    assert "not Unix seconds" in reasons[8] and "not Unix seconds" in reasons[9]
    assert "not [time, value]" in reasons[10]


def test_a_response_that_is_no_query_range_matrix_is_rejected_whole(ledger, tmp_path):
    failed = tmp_path / "failed.json"
    failed.write_text(json.dumps({"status": "error", "errorType": "timeout", "error": "query timed out"}))
    res = _load(ledger, failed, IngestOptions(log_format="prometheus_range"))
    assert res.status == "rejected" and "not a successful Prometheus response (status 'error')" in res.message
    vector = tmp_path / "vector.json"
    vector.write_text(json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}}))
    res = _load(ledger, vector, IngestOptions(log_format="prometheus_range"))
    assert res.status == "rejected" and "resultType 'vector'" in res.message
    assert ledger.one("SELECT count(*) AS n FROM raw.engine_metrics")["n"] == 0


def test_a_series_with_two_problems_names_both_at_once(ledger, tmp_path):
    # no cluster label and no [[metrics_clusters]] entry, and a metric the ledger does not read: one reprocess, once
    # both are fixed, settles the file
    path = tmp_path / "range.json"
    series = {
        "metric": {"__name__": "vllm:cache_config_info", "instance": "node-1:8000"},
        "values": [[1783296000, "1"]],
    }
    path.write_text(json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [series]}}))
    res = _load(ledger, path)
    assert (res.status, res.rows_quarantined) == ("loaded", 1)
    reason = ledger.one("SELECT reason FROM meta.quarantine")["reason"]
    assert "name no cluster" in reason and "vllm:cache_config_info is not a metric the ledger reads" in reason
