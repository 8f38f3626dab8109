"""Scrapes saved as ``curl`` writes them (no timestamps), placed in time by their file's name or a ``# scraped_at``
line, and DCGM's default utilisation field; fixtures and their provenance: tests/fixtures/metrics/README.md."""

import re
from dataclasses import replace
from decimal import Decimal

import pytest

from pipeline.base.fileformats import MetricsCluster, MetricsFileMapping
from pipeline.ingest.files import IngestOptions, ingest_file
from pipeline.ingest.formats.scrapetime import from_comment, from_name
from tests.conftest import ROOT

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+intermediate.int_engine_token_increases", "+marts.monthly_cluster_telemetry")

SCRAPES = ROOT / "tests" / "fixtures" / "metrics" / "scrapes"
MAPPED = IngestOptions(
    metrics_clusters=(
        MetricsCluster(label="Hostname", value="b200-node-01", cluster_id="k3"),
        MetricsCluster(label="model_name", value="kimi-k3", cluster_id="k3"),
    )
)
#: 2026-10-05 10:00:00 UTC in Unix seconds: 1,783,296,000 is 2026-07-06 00:00 (tests/fixtures/metrics/README.md);
#: 6 July -> 5 October is 25 + 31 + 30 + 5 = 91 days = 7,862,400 s; + 10 h = 36,000 s
TEN_O_CLOCK = 1_783_296_000 + 91 * 86_400 + 36_000


@pytest.mark.parametrize(
    "name",
    [
        "vllm-2026-10-05T10-00-00Z.prom",
        "vllm-2026-10-05T10:00:00Z.prom",
        "dcgm_2026-10-05_10-00-00.prom.gz",
        "node1-20261005T100000Z.prom",
        "scrape-20261005-100000.txt",
        f"dcgm.{TEN_O_CLOCK}.prom",
    ],
)
def test_a_scrape_s_time_is_read_from_the_common_shapes_of_a_file_name(name):
    assert from_name(name) == TEN_O_CLOCK


@pytest.mark.parametrize(
    "name", ["vllm.prom", "dcgm-2026-13-45T10-00-00Z.prom", "run-12345.prom", "v-99999999999.prom"]
)
def test_a_name_without_a_time_gives_none(name):
    assert from_name(name) is None


def test_a_scraped_at_line_takes_iso_8601_with_its_zone_or_unix_seconds():
    assert from_comment("# scraped_at 2026-10-05T10:00:00Z") == TEN_O_CLOCK
    assert from_comment("# scraped_at: 2026-10-05T12:00:00+02:00") == TEN_O_CLOCK  # 12:00 at +02:00 is 10:00 UTC
    assert from_comment(f"# scraped_at {TEN_O_CLOCK}") == TEN_O_CLOCK
    with pytest.raises(ValueError, match="no time zone"):
        from_comment("# scraped_at 2026-10-05T10:00:00")


def _load(ledger, name: str, kind: str):
    return ingest_file(ledger.con, kind, SCRAPES / name, ledger.store, options=MAPPED)


@pytest.mark.slow
def test_periodic_scrapes_become_series_at_their_times_counters_differenced_across_files(ledger):
    # vLLM, the time in each file's name: prompt 1,200,000 -> 1,500,000 (+300,000), generation 300,000 -> 360,000
    # (+60,000) over 10:00 -> 10:01. SGLang, the time in a '# scraped_at' line: 10:00Z, then 12:01 at +02:00 (10:01
    # UTC): prompt 5,000 -> 8,000 (+3,000), generation 700 -> 900 (+200). The histogram and the _created gauge are not
    # read; each scrape holds 4 (vLLM) or 3 (SGLang) samples the ledger reads.
    for name, rows in (("vllm-20261005T100000Z.prom", 4), ("vllm-20261005T100100Z.prom", 4),
                       ("sglang-node-2-first.prom", 3), ("sglang-node-2-second.prom", 3)):  # fmt: skip
        res = _load(ledger, name, "engine-metrics")
        assert (res.status, res.rows_loaded, res.rows_quarantined) == ("loaded", rows, 0), res.message
    ledger.build(*READS)
    got = ledger.rows(
        "SELECT measure, interval_start, interval_end, increase FROM intermediate.int_engine_token_increases "
        "ORDER BY measure, increase"
    )
    assert [(r["measure"], str(r["interval_start"]), str(r["interval_end"]), r["increase"]) for r in got] == [
        ("generation_tokens", "2026-10-05 10:00:00", "2026-10-05 10:01:00", Decimal("200")),
        ("generation_tokens", "2026-10-05 10:00:00", "2026-10-05 10:01:00", Decimal("60000")),
        ("prompt_tokens", "2026-10-05 10:00:00", "2026-10-05 10:01:00", Decimal("3000")),
        ("prompt_tokens", "2026-10-05 10:00:00", "2026-10-05 10:01:00", Decimal("300000")),
    ]
    waiting = ledger.rows(
        "SELECT sampled_at, value FROM raw.engine_metrics WHERE metric = 'sglang:num_queue_reqs' ORDER BY sampled_at"
    )
    assert [(str(r["sampled_at"]), r["value"]) for r in waiting] == [
        ("2026-10-05 10:00:00", 0),
        ("2026-10-05 10:01:00", 4),
    ]


def test_a_scrape_of_no_metric_the_ledger_reads_is_loaded_as_nothing_saying_why(ledger):
    # dcgm-exporter's quickstart output: the SM clock, the memory clock and the memory temperature
    res = _load(ledger, "dcgm-quickstart-2026-10-05T10-00-00Z.prom", "gpu-metrics")
    assert (res.status, res.rows_in, res.rows_loaded) == ("loaded", 0, 0)
    said = res.message
    assert "3 samples, none of a metric the ledger reads: DCGM_FI_DEV_MEMORY_TEMP, DCGM_FI_DEV_MEM_CLOCK, " in said
    assert "holds no rows" not in said
    # loaded: offered again, it is known and skipped, not rejected
    again = _load(ledger, "dcgm-quickstart-2026-10-05T10-00-00Z.prom", "gpu-metrics")
    assert again.status == "skipped"


@pytest.mark.slow
def test_dcgm_s_default_utilisation_field_tells_busy_time_where_the_profiling_field_is_not_collected(ledger):
    # two scrapes 5 minutes apart (300 s); the utilisation gauge at the earlier one holds over the interval:
    # GPU 0 at 40 % -> 0.40 x 300 = 120 busy seconds; GPU 1 at 100 % -> 300 s; 420 s = 0.116666666667 GPU-hours of
    # 600 s = 0.166666666667 GPU-hours metered. Energy: GPU 0 3.6e9 -> 5.4e9 mJ = 1.8e9 mJ = 0.5 kWh; GPU 1 flat: 0.
    for name in ("dcgm-default-2026-10-05T10-00-00Z.prom", "dcgm-default-2026-10-05T10-05-00Z.prom"):
        res = _load(ledger, name, "gpu-metrics")
        # 2 GPUs x (energy, utilisation) read; the clock and the temperature passed over
        assert (res.status, res.rows_loaded, res.rows_quarantined) == ("loaded", 4, 0), res.message
    ledger.build(*READS)
    row = ledger.one("SELECT * FROM marts.monthly_cluster_telemetry")
    assert (row["cluster_id"], row["gpus_metered"], row["busy_source"]) == ("k3", 2, "gpu_util")
    assert row["engine_active_gpu_hours"] == Decimal("0.116667")  # 420 / 3,600, shown to 6 places
    assert row["metered_gpu_hours"] == Decimal("0.166667")  # 600 / 3,600
    assert row["energy_kwh"] == Decimal("0.5")


def test_a_gpu_utilisation_above_100_percent_is_quarantined(ledger, tmp_path):
    path = tmp_path / "dcgm-2026-10-05T10-00-00Z.prom"
    path.write_text('DCGM_FI_DEV_GPU_UTIL{gpu="0", Hostname="b200-node-01"} 130\n')
    res = ingest_file(ledger.con, "gpu-metrics", path, ledger.store, options=MAPPED)
    assert (res.status, res.rows_loaded, res.rows_quarantined) == ("loaded", 0, 1)
    assert "above 100" in ledger.one("SELECT reason FROM meta.quarantine")["reason"]


def test_a_malformed_scraped_at_line_is_named_and_its_samples_have_no_time(ledger, tmp_path):
    path = tmp_path / "vllm.prom"
    path.write_text('# scraped_at yesterday\nvllm:prompt_tokens_total{model_name="kimi-k3"} 10\n')
    res = ingest_file(ledger.con, "engine-metrics", path, ledger.store, options=MAPPED)
    assert (res.status, res.rows_loaded, res.rows_quarantined) == ("loaded", 0, 2)
    reasons = {r["line"]: r["reason"] for r in ledger.rows("SELECT line, reason FROM meta.quarantine")}
    assert "not an ISO 8601 time" in reasons[1]
    assert "# scraped_at" in reasons[2] and "vllm-2026-10-05T10-00-00Z.prom" in reasons[2]


@pytest.mark.slow
def test_nvidia_smi_s_csv_loads_as_the_dcgm_fields_of_the_same_meaning(ledger):
    options = IngestOptions(metrics_clusters=(MetricsCluster(label="modelName", value="NVIDIA B200", cluster_id="k3"),))
    res = ingest_file(ledger.con, "gpu-metrics", SCRAPES.parent / "nvidia-smi-query-gpu.csv", ledger.store,
                      options=options)  # fmt: skip
    # 4 lines x (utilization.gpu, power.draw); the temperature, memory and clocks are not read
    assert (res.status, res.rows_loaded, res.rows_quarantined) == ("loaded", 8, 0), res.message
    ledger.build(*READS)
    row = ledger.one("SELECT * FROM marts.monthly_cluster_telemetry")
    # 10:00 -> 10:01 (60 s) per GPU: busy 50 % x 60 = 30 s and 100 % x 60 = 60 s: 90 s = 0.025 GPU-hours of 120 s
    # = 0.033333 metered; energy from the power gauge: 300 W x 60 s = 18,000 J = 0.005 kWh, 600 W x 60 s = 0.01 kWh
    assert (row["gpus_metered"], row["busy_source"], row["energy_source"]) == (2, "gpu_util", "power")
    assert (row["engine_active_gpu_hours"], row["metered_gpu_hours"]) == (Decimal("0.025"), Decimal("0.033333"))
    assert row["energy_kwh"] == Decimal("0.015")


def test_nvidia_smi_s_unreadable_values_and_missing_fields_are_named(ledger, tmp_path):
    mapped = IngestOptions(metrics_clusters=(MetricsCluster(label="gpu", value="0", cluster_id="k3"),))
    unread = tmp_path / "smi.csv"
    unread.write_text("timestamp, index, temperature.gpu, power.draw [W]\n2026/10/05 10:00:00.000, 0, 41, [N/A]\n")
    res = ingest_file(ledger.con, "gpu-metrics", unread, ledger.store, options=mapped)
    assert (res.status, res.rows_loaded, res.rows_quarantined) == ("loaded", 0, 1)
    assert "power.draw [W] is [N/A]" in ledger.one("SELECT reason FROM meta.quarantine")["reason"]
    no_id = tmp_path / "smi2.csv"
    no_id.write_text("timestamp, name, utilization.gpu [%]\n2026/10/05 10:00:00.000, NVIDIA B200, 40 %\n")
    res = ingest_file(ledger.con, "gpu-metrics", no_id, ledger.store, options=mapped)
    assert res.status == "rejected" and "uuid, index or pci.bus_id" in res.message


SMI_B200 = IngestOptions(metrics_clusters=(MetricsCluster(label="modelName", value="NVIDIA B200", cluster_id="k3"),))
SMI_HEADER = "timestamp, uuid, index, name, pci.bus_id, utilization.gpu [%], power.draw [W]\n"


def _smi(ledger, tmp_path, body: str, header: str = SMI_HEADER):
    path = tmp_path / "smi.csv"
    path.write_text(header + body)
    return ingest_file(ledger.con, "gpu-metrics", path, ledger.store, options=SMI_B200)


def test_a_gpu_sampled_twice_at_one_instant_loads_the_first_line_and_quarantines_the_second_once(ledger, tmp_path):
    # line 2 and line 3 name GPU-a at 10:00 with other readings; line 4 is a minute on. Each line gives two samples
    # (utilisation, power), numbered 1-2, 3-4, 5-6: samples 3 and 4 conflict with 1 and 2; 6 rows in, 4 loaded
    gpu = "GPU-a, 0, NVIDIA B200, 00000000:18:00.0"
    res = _smi(ledger, tmp_path, f"2026/10/05 10:00:00.000, {gpu}, 40 %, 700.50 W\n"
                                 f"2026/10/05 10:00:00.000, {gpu}, 41 %, 701.50 W\n"
                                 f"2026/10/05 10:01:00.000, {gpu}, 42 %, 702.50 W\n")  # fmt: skip
    assert (res.rows_in, res.rows_loaded, res.rows_quarantined) == (6, 4, 2)
    quarantined = ledger.rows("SELECT line, reason FROM meta.quarantine ORDER BY line")
    assert [q["line"] for q in quarantined] == [3, 4]
    assert all(q["reason"].startswith("conflict: same key") for q in quarantined)
    loaded = ledger.rows("SELECT value FROM raw.gpu_metrics WHERE sampled_at = '2026-10-05 10:00:00' ORDER BY value")
    assert [r["value"] for r in loaded] == [Decimal("40"), Decimal("700.5")]  # the first line's


def test_nvidia_smi_s_fields_in_another_order_are_told_by_the_nightly(tmp_path):
    from tests.conftest import cli

    folder = tmp_path / "landing" / "gpu-metrics"
    folder.mkdir(parents=True)
    # the query order people use: --query-gpu=index,timestamp,power.draw,utilization.gpu
    (folder / "smi.csv").write_text("index, timestamp, power.draw [W], utilization.gpu [%]\n"
                                    "0, 2026/10/05 10:00:00.000, 700.50 W, 40 %\n")  # fmt: skip
    (tmp_path / "costledger.toml").write_text('[[metrics_clusters]]\ncluster_id = "k3"\nlabel = "gpu"\nvalue = "0"\n')
    res = cli(
        "nightly", tmp_path / "landing", "--db", tmp_path / "l.duckdb", "--settings", tmp_path / "costledger.toml"
    )
    assert res.exit_code == 0, res.output
    assert "2 rows in, 2 loaded" in " ".join(res.output.split())


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("2026/10/05 10:00:00.000, , , NVIDIA B200, , 40 %, 700 W", "uuid, index and pci.bus_id are all blank"),
        ("2026/10/05 10:00:00.000, GPU-a, 0, NVIDIA B200, x, 40 %, 1_000 W", "power.draw [W] is '1_000 W'"),
        ("2026/10/05 10:00:00.000, GPU-a, 0, NVIDIA B200, x, 700 W, 40 %", "utilization.gpu [%] is '700 W'"),
    ],
)
def test_a_line_with_no_gpu_a_digit_separator_or_a_unit_under_the_wrong_field_is_quarantined(ledger, tmp_path, line,
                                                                                             why):  # fmt: skip
    res = _smi(ledger, tmp_path, line + "\n")
    assert res.rows_quarantined >= 1
    reasons = " ".join(r["reason"] for r in ledger.rows("SELECT reason FROM meta.quarantine"))
    assert f"line 2: {why}" in reasons
    assert not any(r["labels"].startswith("modelName") for r in ledger.rows("SELECT labels FROM raw.gpu_metrics"))


def test_a_metrics_files_entry_gives_the_time_where_neither_the_name_nor_the_text_does(ledger, tmp_path):
    # the file's name and text say no time; its [[metrics_files]] entry says 12:00 at +02:00 = 10:00 UTC
    path = tmp_path / "vllm-node1.prom"
    path.write_text('vllm:prompt_tokens_total{model_name="kimi-k3"} 10\n')
    entry = MetricsFileMapping(match="vllm-node*.prom", scraped_at="2026-10-05T10:00:00")  # as the settings keep it
    options = replace(MAPPED, metrics_file_mappings=(entry,))
    res = ingest_file(ledger.con, "engine-metrics", path, ledger.store, options=options)
    assert (res.status, res.rows_loaded, res.rows_quarantined) == ("loaded", 1, 0), res.message
    got = ledger.one("SELECT epoch(sampled_at)::BIGINT AS t, value FROM raw.engine_metrics")
    assert (got["t"], got["value"]) == (TEN_O_CLOCK, 10)


def test_a_time_in_the_name_comes_before_the_metrics_files_entry(ledger, tmp_path):
    path = tmp_path / "vllm-2026-10-05T10-00-00Z.prom"
    path.write_text('vllm:prompt_tokens_total{model_name="kimi-k3"} 10\n')
    entry = MetricsFileMapping(match="vllm-*.prom", scraped_at="2026-01-01T00:00:00")
    res = ingest_file(ledger.con, "engine-metrics", path, ledger.store,
                      options=replace(MAPPED, metrics_file_mappings=(entry,)))  # fmt: skip
    assert res.rows_loaded == 1, res.message
    assert ledger.one("SELECT epoch(sampled_at)::BIGINT AS t FROM raw.engine_metrics")["t"] == TEN_O_CLOCK


def test_the_settings_read_metrics_files_entries_and_name_a_bad_one(tmp_path):
    from pipeline.base.settings import load_settings
    from pipeline.base.settings_checks import SettingsError

    good = tmp_path / "good.toml"
    good.write_text('[[metrics_files]]\nmatch = "vllm-node*.prom"\nscraped_at = "2026-10-05T12:00:00+02:00"\n')
    (entry,) = load_settings(good).metrics_file_mappings
    assert (entry.match, entry.scraped_at) == ("vllm-node*.prom", "2026-10-05T10:00:00")  # kept in UTC
    head = '[[metrics_files]]\nmatch = "x.prom"\n'
    for text, said in ((head, "scraped_at is required"),
                       (head + 'scraped_at = "soon"\n', "is not an ISO-8601"),
                       (head + 'scraped_at = "2026-10-05"\nwhen = "now"\n', "unknown key(s) when")):  # fmt: skip
        bad = tmp_path / "bad.toml"
        bad.write_text(text)
        with pytest.raises(SettingsError, match=re.escape(said)):
            load_settings(bad)
