"""`costledger pull prometheus` against a real Prometheus server (Debian's `prometheus` package), started here on
127.0.0.1 with its own TSDB in a temporary folder.

- A past day: the server holds what an exporter served, written into its TSDB with `promtool tsdb
  create-blocks-from openmetrics` so every sample's time and value is known: a vLLM engine's two token counters and a
  DCGM exporter's energy counter and engine-active gauge, hourly through 5 October 2026. After the pull and a
  nightly, the ledger holds those samples, to the sample, and the figures worked from them by hand.
- Live: the server scrapes an exporter process every second; the exporter serves known counts, then (once the
  server has scraped them) higher ones; the ledger's counter rises are the difference, whenever the scrapes fell."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from tests.conftest import cli, free_port, open_published, wait_listening

pytestmark = pytest.mark.slow

T0 = 1791158400  # 2026-10-05T00:00:00Z
HOURS = 25  # 00:00 on the 5th to 00:00 on the 6th, both included
ENGINE = 'cluster="k3",instance="node-1:8000",model_name="kimi-k3"'
GPU = 'Hostname="node-1",UUID="GPU-0",cluster="k3",gpu="0"'


def _served() -> dict[str, list[tuple[int, int]]]:
    """What the exporters served, per metric: (unix seconds, value) every hour. Prompt tokens rise 90,000 an hour,
    generation 10,000; the energy counter 3,600,000,000 mJ (1 kWh) an hour; the engine was active half the time."""
    hours = [T0 + 3600 * h for h in range(HOURS)]
    return {
        "vllm:prompt_tokens_total": [(t, 90_000 * h) for h, t in enumerate(hours)],
        "vllm:generation_tokens_total": [(t, 10_000 * h) for h, t in enumerate(hours)],
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": [(t, 3_600_000_000 * h) for h, t in enumerate(hours)],
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE": [(t, 0.5) for t in hours],
        # a metric the ledger does not read, which the pull does not ask for
        "DCGM_FI_DEV_GPU_TEMP": [(t, 61) for t in hours],
    }


def _openmetrics(path: Path) -> None:
    lines = []
    for metric, samples in _served().items():
        labels = ENGINE if metric.startswith("vllm:") else GPU
        lines += [f"{metric}{{{labels}}} {v} {t}" for t, v in samples]
    path.write_text("\n".join([*lines, "# EOF"]) + "\n")


def _need_prometheus() -> None:
    if not (shutil.which("prometheus") and shutil.which("promtool")):
        if os.environ.get("COSTLEDGER_REQUIRE_PROMETHEUS"):
            pytest.fail("prometheus and promtool are required here (Debian package prometheus; .ci/run installs it)")
        pytest.skip("Debian package prometheus not installed (.ci/run installs it)")


def _server(data: Path, config: Path, log: Path):
    """A Prometheus process on a free port of 127.0.0.1 over ``data``; yields its address, stops it after."""
    port = free_port()
    with open(log, "w") as fh:
        server = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={data}",
             "--storage.tsdb.retention.time=100y", f"--web.listen-address=127.0.0.1:{port}"],
            stdout=fh, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_listening(server, port, 120, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(30)


@pytest.fixture
def prometheus(tmp_path: Path):
    """A Prometheus server on 127.0.0.1 over a TSDB holding ``_served()``; yields its address."""
    _need_prometheus()
    data, source = tmp_path / "tsdb", tmp_path / "served.om"
    _openmetrics(source)
    made = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(source), str(data)],
                          capture_output=True, text=True)  # fmt: skip
    assert made.returncode == 0, made.stderr
    config = tmp_path / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1m\n")
    yield from _server(data, config, tmp_path / "prometheus.log")


def _pull(url: str, landing: Path):
    return cli("pull", "prometheus", "--url", url, "--since", "2026-10-05", "--until", "2026-10-06T01:00:00Z",
               "--step", "1h", "--points-per-query", "10", "--landing", landing)  # fmt: skip


def test_the_ledger_holds_what_the_exporters_served_to_the_sample(prometheus, tmp_path):
    landing = tmp_path / "landing"
    res = _pull(prometheus, landing)
    assert res.exit_code == 0, res.output
    # 25 hourly instants at 10 a query: 3 chunks a kind, none asking for more than Prometheus answers
    files = sorted(p.relative_to(landing).as_posix() for p in landing.rglob("*.json"))
    assert files == [
        f"{kind}/prometheus-{a}-{b}-3600s.json"
        for kind in ("engine-metrics", "gpu-metrics")
        for a, b in (("20261005T000000Z", "20261005T090000Z"), ("20261005T100000Z", "20261005T190000Z"),
                     ("20261005T200000Z", "20261006T000000Z"))
    ]  # fmt: skip
    db = tmp_path / "ledger.duckdb"
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 0, res.output
    served = _served()
    con = open_published(db)
    try:
        for table, metrics in (("engine_metrics", ("vllm:prompt_tokens_total", "vllm:generation_tokens_total")),
                               ("gpu_metrics", ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                                                "DCGM_FI_PROF_GR_ENGINE_ACTIVE"))):  # fmt: skip
            for metric in metrics:
                got = con.execute(
                    f"SELECT epoch(sampled_at)::BIGINT, value FROM raw.{table} WHERE metric = ? AND cluster_id = 'k3' "
                    "ORDER BY sampled_at",
                    [metric],
                ).fetchall()
                assert got == [(t, Decimal(str(v))) for t, v in served[metric]], metric
        assert con.execute("SELECT count(*) FROM raw.gpu_metrics WHERE metric = 'DCGM_FI_DEV_GPU_TEMP'").fetchone()[
            0] == 0  # fmt: skip
        # the token counters rose 24 x 90,000 = 2,160,000 prompt and 24 x 10,000 = 240,000 generation tokens
        recon = con.execute("SELECT engine_prompt_tokens, engine_generation_tokens FROM "
                            "marts.monthly_engine_reconciliation WHERE cluster_id = 'k3'").fetchone()  # fmt: skip
        assert recon == (Decimal("2160000"), Decimal("240000"))
        # 24 kWh from the energy counter; the engine active 0.5 x 24 hours = 12 GPU-hours
        tele = con.execute("SELECT energy_kwh, engine_active_gpu_hours FROM marts.monthly_cluster_telemetry "
                           "WHERE cluster_id = 'k3'").fetchone()  # fmt: skip
        assert tele == (Decimal("24"), Decimal("12"))
    finally:
        con.close()


def test_a_chunk_already_pulled_is_not_asked_again(prometheus, tmp_path):
    landing = tmp_path / "landing"
    assert _pull(prometheus, landing).exit_code == 0
    gone = landing / "gpu-metrics" / "prometheus-20261005T100000Z-20261005T190000Z-3600s.json"
    kept = landing / "engine-metrics" / "prometheus-20261005T000000Z-20261005T090000Z-3600s.json"
    gone_bytes, kept_mtime = gone.read_bytes(), kept.stat().st_mtime_ns
    gone.unlink()
    res = _pull(prometheus, landing)
    assert res.exit_code == 0, res.output
    # 10 instants x 2 GPU series asked again; of 25 instants x 2 kinds, the other 40 held by the chunks still there
    said = " ".join(res.output.split())
    assert "pulled 1 of 1 chunks (20 samples)" in said and "40 of the range's 50 instants" in said
    assert gone.read_bytes() == gone_bytes and kept.stat().st_mtime_ns == kept_mtime


def test_overlapping_pulls_ask_for_each_instant_once_and_the_nightly_quarantines_nothing(prometheus, tmp_path):
    landing, db = tmp_path / "landing", tmp_path / "ledger.duckdb"
    first = cli("pull", "prometheus", "--url", prometheus, "--since", "2026-10-05", "--until", "2026-10-05T13:00:00Z",
                "--step", "1h", "--points-per-query", "10", "--landing", landing)  # fmt: skip
    assert first.exit_code == 0, first.output
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 0, res.output
    # the second window, 06:00 on the 5th to 01:00 on the 6th, overlaps the first's 06:00 .. 12:00: only 13:00 ..
    # 00:00 (12 instants) are asked for, in chunks of 10 and 2
    second = cli("pull", "prometheus", "--url", prometheus, "--since", "2026-10-05T06:00:00Z", "--until",
                 "2026-10-06T01:00:00Z", "--step", "1h", "--points-per-query", "10", "--landing", landing)  # fmt: skip
    assert second.exit_code == 0, second.output
    said = " ".join(second.output.split())
    # 12 instants x 4 series (the engine's two token counters, the GPU's energy counter and engine-active gauge)
    assert "pulled 4 of 4 chunks (48 samples)" in said
    assert sorted(p.name for p in (landing / "engine-metrics").iterdir()) == [
        "prometheus-20261005T000000Z-20261005T090000Z-3600s.json",
        "prometheus-20261005T100000Z-20261005T120000Z-3600s.json",
        "prometheus-20261005T130000Z-20261005T220000Z-3600s.json",
        "prometheus-20261005T230000Z-20261006T000000Z-3600s.json",
    ]
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 0, res.output
    assert "no rows quarantined in this run" in res.output
    con = open_published(db)
    try:
        assert con.execute("SELECT count(*) FROM meta.quarantine").fetchone()[0] == 0
        # every served instant once: 25 hours of each of the four metrics read
        got = con.execute("SELECT metric, count(*), count(DISTINCT sampled_at) FROM (SELECT metric, sampled_at FROM "
                          "raw.engine_metrics UNION ALL SELECT metric, sampled_at FROM raw.gpu_metrics) "
                          "GROUP BY metric ORDER BY metric").fetchall()  # fmt: skip
        assert got == [(m, 25, 25) for m in sorted(("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                                                    "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "vllm:generation_tokens_total",
                                                    "vllm:prompt_tokens_total"))]  # fmt: skip
    finally:
        con.close()


def test_a_server_that_is_not_there_is_one_clear_error(tmp_path):
    res = cli("pull", "prometheus", "--url", f"http://127.0.0.1:{free_port()}", "--month", "2026-10",
              "--landing", tmp_path / "landing")  # fmt: skip
    assert res.exit_code == 1
    assert "could not be reached" in res.output and "gave up after 4 attempts" in res.output
    assert not (tmp_path / "landing").exists() or not any((tmp_path / "landing").rglob("*.json"))


#: a real exporter process: serves the exposition text in the file it is given at /metrics, as it is at each scrape
EXPORTER = """
import http.server, pathlib, sys
state = pathlib.Path(sys.argv[2])
class Metrics(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = state.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Metrics).serve_forever()
"""


def _serve(state: Path, prompt: int, generation: int, energy_mj: int) -> None:
    """What the exporter serves from now on (written whole, then renamed in place)."""
    text = (f'vllm:prompt_tokens_total{{model_name="kimi-k3"}} {prompt}\n'
            f'vllm:generation_tokens_total{{model_name="kimi-k3"}} {generation}\n'
            f'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{Hostname="node-1",gpu="0"}} {energy_mj}\n')  # fmt: skip
    part = state.with_suffix(".part")
    part.write_text(text)
    part.replace(state)


def _value_now(url: str, metric: str) -> str | None:
    query = urllib.parse.urlencode({"query": metric})
    with urllib.request.urlopen(f"{url}/api/v1/query?{query}", timeout=10) as response:
        result = json.loads(response.read())["data"]["result"]
    return result[0]["value"][1] if result else None


def _until_scraped(url: str, metric: str, value: str) -> None:
    """Wait until the server has scraped ``value`` of ``metric`` (a readiness wait: what is checked after does not
    depend on when the scrapes fell)."""
    bound = time.monotonic() + 120
    while _value_now(url, metric) != value:
        assert time.monotonic() < bound, f"Prometheus did not scrape {metric} = {value} within 120 s"
        time.sleep(0.5)


@pytest.fixture
def scraping(tmp_path: Path):
    """An exporter process and a Prometheus server scraping it every second (the scrape adds cluster="k3");
    yields (the server's address, the exporter's state file)."""
    _need_prometheus()
    state, port = tmp_path / "exposition.prom", free_port()
    _serve(state, 1000, 100, 3_600_000_000)
    exporter = subprocess.Popen([sys.executable, "-c", EXPORTER, str(port), str(state)])
    config = tmp_path / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: exporter\n    static_configs:\n"
                      f"      - targets: ['127.0.0.1:{port}']\n        labels: {{cluster: k3}}\n")  # fmt: skip
    try:
        wait_listening(exporter, port, 60, tmp_path / "exporter.log")
        yield from ((url, state) for url in _server(tmp_path / "tsdb", config, tmp_path / "prometheus.log"))
    finally:
        exporter.terminate()
        exporter.wait(30)


def test_a_live_scrape_pulled_gives_the_rise_the_exporter_served(scraping, tmp_path):
    url, state = scraping
    since = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(seconds=5)
    _until_scraped(url, "vllm:prompt_tokens_total", "1000")
    # the engine counts 4,000 prompt and 400 generation tokens more; the GPU draws 3,600,000 mJ = 0.001 kWh more
    # (3.6 kW over the one-second scrape at the least: a rise a GPU can make, 10 kW being the bound)
    _serve(state, 5000, 500, 3_603_600_000)
    _until_scraped(url, "vllm:prompt_tokens_total", "5000")
    _until_scraped(url, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "3603600000")
    # the range's last instant (whole seconds) must fall after the scrape that served the higher counts
    time.sleep(2)
    until = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=1)
    landing = tmp_path / "landing"
    res = cli("pull", "prometheus", "--url", url, "--since", since.isoformat(), "--until", until.isoformat(),
              "--step", "1s", "--landing", landing)  # fmt: skip
    assert res.exit_code == 0, res.output
    db = tmp_path / "ledger.duckdb"
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 0, res.output
    con = open_published(db)
    try:
        # to the sample: the engine's samples are the two values it served, in the order served
        values = [v for (v,) in con.execute("SELECT value FROM raw.engine_metrics WHERE metric = "
                                            "'vllm:prompt_tokens_total' ORDER BY sampled_at").fetchall()]  # fmt: skip
        assert set(values) == {1000, 5000} and values == sorted(values)
        # summed over months: a run across midnight at a month's end splits the rise between them
        recon = con.execute("SELECT sum(engine_prompt_tokens), sum(engine_generation_tokens) FROM "
                            "marts.monthly_engine_reconciliation WHERE cluster_id = 'k3'").fetchone()  # fmt: skip
        assert recon == (Decimal("4000"), Decimal("400"))
        energy = con.execute("SELECT sum(energy_kwh) FROM marts.monthly_cluster_telemetry WHERE cluster_id = 'k3'")
        assert energy.fetchone()[0] == Decimal("0.001")
    finally:
        con.close()
