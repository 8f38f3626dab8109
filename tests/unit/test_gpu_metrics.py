"""The gpu-metrics kind and the Prometheus text exposition format both metric kinds read (fixtures and their
provenance: tests/fixtures/metrics/README.md)."""

from decimal import Decimal

import pytest

from pipeline.base.fileformats import MetricsCluster
from pipeline.ingest.files import IngestOptions, ingest_file
from tests.conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "metrics"
HOST = IngestOptions(metrics_clusters=(MetricsCluster(label="Hostname", value="b200-node-01", cluster_id="k3"),))


def _load(ledger, path, kind="gpu-metrics", options: IngestOptions = HOST):
    return ingest_file(ledger.con, kind, path, ledger.store, options=options)


def test_a_dcgm_scrape_file_loads_the_fields_the_ledger_reads_under_the_mapped_cluster(ledger):
    res = _load(ledger, FIXTURES / "dcgm_scrapes.prom")
    # 2 scrapes x 2 GPUs x 3 fields read (power, energy, engine active) = 12 rows; the SM clock is not read
    assert (res.status, res.rows_in, res.rows_loaded, res.rows_quarantined) == ("loaded", 12, 12, 0)
    rows = ledger.rows("""SELECT * FROM raw.gpu_metrics WHERE labels LIKE '%gpu="0"%' ORDER BY metric, sampled_at""")
    # 1783296000000 ms is 2026-07-06 00:00:00 UTC; the second scrape is 60,000 ms on
    assert [(r["metric"], str(r["sampled_at"]), r["value"]) for r in rows] == [
        ("DCGM_FI_DEV_POWER_USAGE", "2026-07-06 00:00:00", Decimal("700.5")),
        ("DCGM_FI_DEV_POWER_USAGE", "2026-07-06 00:01:00", Decimal("710")),
        ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "2026-07-06 00:00:00", Decimal("3600000000")),
        ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "2026-07-06 00:01:00", Decimal("3642000000")),
        ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "2026-07-06 00:00:00", Decimal("0.75")),
        ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "2026-07-06 00:01:00", Decimal("0.8")),
    ]
    assert {r["cluster_id"] for r in rows} == {"k3"}
    # the mapped label stays in the series' labels, sorted by name (upper case first)
    assert rows[0]["labels"] == (
        'DCGM_FI_DRIVER_VERSION="570.124.06",Hostname="b200-node-01",UUID="GPU-3f1c8a52-6d0e-4b7a-9c21-0a4f5e6b7c80",'
        'device="nvidia0",gpu="0",modelName="NVIDIA B200",pci_bus_id="00000000:18:00.0"'
    )


def test_a_scrape_whose_host_maps_to_no_cluster_is_quarantined_naming_its_labels(ledger):
    res = _load(ledger, FIXTURES / "dcgm_scrapes.prom", options=IngestOptions())
    assert (res.status, res.rows_in, res.rows_loaded, res.rows_quarantined) == ("loaded", 12, 0, 12)
    reasons = {r["reason"] for r in ledger.rows("SELECT reason FROM meta.quarantine")}
    assert all('Hostname="b200-node-01"' in r and "[[metrics_clusters]]" in r for r in reasons)


def test_openmetrics_timestamps_are_seconds_and_bad_lines_are_named(ledger, tmp_path):
    path = tmp_path / "vllm.prom"
    path.write_text(
        "# TYPE vllm:prompt_tokens counter\n"
        'vllm:prompt_tokens_total{cluster="c1",engine="0"} 100 1783296000.5\n'  # seconds: 00:00:00.5
        'vllm:prompt_tokens_created{cluster="c1",engine="0"} 1783200000\n'  # not read: passed over
        'vllm:prompt_tokens_total{cluster="c1",engine="0"} 250\n'  # no timestamp
        'vllm:prompt_tokens_total{cluster="c1",engine="0} 1 2\n'  # the label's quote never closes
        'vllm:prompt_tokens_total{cluster="c1",engine="0\\n"} 1 1783296001\n'  # an escaped newline in a label
        'vllm:generation_tokens_total{cluster="c1"} NaN 1783296002\n'
        "{not a sample}\n"
        "# EOF\n"
    )
    res = _load(ledger, path, kind="engine-metrics", options=IngestOptions())
    # 6 lines that are samples of read metrics or no sample at all (the _created line is passed over); 1 loads
    assert (res.status, res.rows_in, res.rows_loaded, res.rows_quarantined) == ("loaded", 6, 1, 5)
    row = ledger.one("SELECT sampled_at, value, labels FROM raw.engine_metrics")
    assert (str(row["sampled_at"]), row["value"], row["labels"]) == ("2026-07-06 00:00:00.500000", 100, 'engine="0"')
    reasons = {r["line"]: r["reason"] for r in ledger.rows("SELECT line, reason FROM meta.quarantine")}
    assert "no timestamp" in reasons[4]
    assert "label" in reasons[5]
    assert "control character" in reasons[6]
    assert "value" in reasons[7]
    assert "not a sample line" in reasons[8]


def test_a_series_with_no_labels_but_its_cluster_is_one_series(ledger, tmp_path):
    path = tmp_path / "one.prom"
    path.write_text('vllm:prompt_tokens_total{cluster="c1"} 1 1783296000000\n')
    res = _load(ledger, path, kind="engine-metrics", options=IngestOptions())
    assert (res.status, res.rows_loaded, res.rows_quarantined) == ("loaded", 1, 0)
    assert ledger.one("SELECT labels FROM raw.engine_metrics")["labels"] == "(none)"


def test_a_prom_file_of_another_kind_is_rejected_naming_the_kinds_that_read_it(ledger, tmp_path):
    path = tmp_path / "scrape.prom"
    path.write_text('vllm:prompt_tokens_total{cluster="c1"} 1 1783296000000\n')
    res = ingest_file(ledger.con, "opex", path, ledger.store)
    assert res.status == "rejected" and "engine-metrics and gpu-metrics" in res.message


def test_hostile_scrape_lines_are_quarantined_with_their_line_and_reason(ledger, tmp_path):
    path = tmp_path / "hostile.prom"
    label = 'Hostname="b200-node-01",gpu="0"'
    path.write_text(
        "\n".join(
            [
                f"DCGM_FI_DEV_POWER_USAGE{{{label}}} NaN 1783296000000",
                f"DCGM_FI_DEV_POWER_USAGE{{{label}}} +Inf 1783296060000",
                f"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{{label}}} -5 1783296000000",
                f"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{{label}}} 1e308 1783296060000",
                'DCGM_FI_PROF_GR_ENGINE_ACTIVE{Hostname="b200-node-01",gpu="0\x07"} 0.5 1783296000000',
                f"DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{label}}} 0.5 1e300",
                f"DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{label}}} 0.5 1783296000000",
            ]
        )
        + "\n"
    )
    res = _load(ledger, path)
    # 7 samples; only the last loads
    assert (res.status, res.rows_in, res.rows_loaded, res.rows_quarantined) == ("loaded", 7, 1, 6)
    reasons = {r["line"]: r["reason"] for r in ledger.rows("SELECT line, reason FROM meta.quarantine")}
    assert sorted(reasons) == [1, 2, 3, 4, 5, 6]
    assert "value is negative" in reasons[3]
    assert "control character" in reasons[5]
    assert reasons[6] == "time '1e300' is not Unix milliseconds"  # the text format counts milliseconds


@pytest.mark.parametrize("name", ["huge.prom", "huge.json"])
def test_a_50_mb_single_line_metrics_file_loads_nothing_and_says_why(ledger, tmp_path, name):
    path = tmp_path / name
    with path.open("w") as fh:  # one line of 50 MB (under the 64 MiB line limit): a value whose quote never closes
        start = '{"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {"gpu": "'
        fh.write(start if name.endswith("json") else 'DCGM_FI_DEV_POWER_USAGE{gpu="')
        fh.write("9" * (50 << 20))
    res = _load(ledger, path)
    if name.endswith("json"):  # a query_range response that never ends: the file is rejected whole
        assert res.status == "rejected" and "not JSON" in res.message, res.message
    else:  # a sample line that does not parse: quarantined, naming line 1 and the label
        assert (res.status, res.rows_in, res.rows_loaded, res.rows_quarantined) == ("loaded", 1, 0, 1)
        quarantined = ledger.one("SELECT line, reason FROM meta.quarantine")
        assert quarantined["line"] == 1 and "label" in quarantined["reason"]
    assert ledger.one("SELECT count(*) AS n FROM raw.gpu_metrics")["n"] == 0


def _reasons(ledger) -> dict[int, str]:
    return {r["line"]: r["reason"] for r in ledger.rows("SELECT line, reason FROM meta.quarantine")}


def test_every_hostile_sample_is_quarantined_with_its_reason_and_the_rest_loads(ledger, tmp_path):
    path = tmp_path / "hostile.prom"
    ok = 'DCGM_FI_DEV_POWER_USAGE{cluster="k3",gpu="0"} 700 1783296000\n'
    path.write_text(
        ok  # line 1: loads
        + 'DCGM_FI_DEV_POWER_USAGE{cluster="k3",gpu="1"} 700 1e2000000\n'  # 2: a timestamp past any decimal context
        + 'DCGM_FI_DEV_POWER_USAGE{cluster="k3",gpu="2",gpu="3"} 700 1783296000\n'  # 3: a label named twice
        + 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{cluster="k3",gpu="0"} 5.0 1783296000\n'  # 4: a share above 1
        + 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{cluster="k3",gpu="1"} 1 1783296000\n'  # 5: a share of 1 loads
        + 'DCGM_FI_DEV_POWER_USAGE{cluster="k3",gpu="4\x0c\u2028"} 700 1783296000\n'  # 6: form feed, U+2028
        + 'DCGM_FI_DEV_POWER_USAGE{cluster="k3",gpu="5"} 700 1783296060\n'  # 7: loads, named as line 7
        + "# EOF\n"  # 8: OpenMetrics ends here
        + 'DCGM_FI_DEV_POWER_USAGE{cluster="k3",gpu="6"} 700 1783296000\n'  # 9: after # EOF
    )
    res = _load(ledger, path)
    assert (res.status, res.rows_in, res.rows_loaded, res.rows_quarantined) == ("loaded", 8, 3, 5)
    reasons = _reasons(ledger)
    assert reasons[2] == "time '1e2000000' is not Unix seconds"  # OpenMetrics: the file has # EOF
    assert reasons[3] == "the label 'gpu' appears twice: an ambiguous sample is not loaded"
    assert reasons[4] == "value is above 1: DCGM_FI_PROF_GR_ENGINE_ACTIVE is a share of time, from 0 to 1"
    assert reasons[6] == "label 'gpu' holds a control character"
    assert reasons[9] == "a line after # EOF, where an OpenMetrics exposition ends"
    loaded = ledger.rows("SELECT source_line FROM raw.gpu_metrics ORDER BY source_line")
    assert [r["source_line"] for r in loaded] == [1, 5, 7]


def test_a_label_value_holding_quotes_cannot_read_as_another_series(ledger, tmp_path):
    path = tmp_path / "quotes.prom"
    path.write_text(
        'DCGM_FI_DEV_POWER_USAGE{cluster="k3",gpu="x\\",job=\\"y"} 700 1783296000000\n'  # one label: gpu = x",job="y
        'DCGM_FI_DEV_POWER_USAGE{cluster="k3",gpu="x",job="y"} 710 1783296000000\n'  # two labels: another series
    )
    res = _load(ledger, path)
    assert (res.rows_loaded, res.rows_quarantined) == (2, 0)
    labels = [r["labels"] for r in ledger.rows("SELECT labels FROM raw.gpu_metrics ORDER BY value")]
    assert labels == ['gpu="x\\",job=\\"y"', 'gpu="x",job="y"']


def test_a_query_range_series_naming_a_label_twice_or_a_list_as_a_value_is_quarantined(ledger, tmp_path):
    path = tmp_path / "range.json"
    series = [
        '{"metric": {"__name__": "DCGM_FI_DEV_POWER_USAGE", "cluster": "k3", "gpu": "0"}, '
        '"values": [[1783296000, "700"]]}',
        '{"metric": {"__name__": "DCGM_FI_DEV_POWER_USAGE", "cluster": "k3", "cluster": "other"}, '
        '"values": [[1783296000, "700"]]}',
        '{"metric": {"__name__": "DCGM_FI_DEV_POWER_USAGE", "cluster": "k3", "gpu": ["0", "1"]}, '
        '"values": [[1783296000, "700"]]}',
        '{"metric": {"__name__": "DCGM_FI_DEV_POWER_USAGE", "cluster": "k3", "gpu": "2"}, '
        '"values": [[1783296000, "700"]], "values": [[1783296060, "1"]]}',
    ]
    path.write_text('{"status": "success", "data": {"resultType": "matrix", "result": [' + ",".join(series) + "]}}")
    res = _load(ledger, path)
    assert (res.status, res.rows_in, res.rows_loaded, res.rows_quarantined) == ("loaded", 4, 1, 3)
    reasons = _reasons(ledger)
    assert (
        reasons[2]
        == "series 2 (DCGM_FI_DEV_POWER_USAGE): the label 'cluster' appears twice: an ambiguous series is not loaded"
    )
    assert reasons[3] == "series 3 (DCGM_FI_DEV_POWER_USAGE): label 'gpu' holds a list or an object, not a single value"
    assert reasons[4] == "series 4: the key 'values' appears twice: an ambiguous series is not loaded"
