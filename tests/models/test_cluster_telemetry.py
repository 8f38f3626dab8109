"""What the GPUs' and the engines' own meters add to a cluster's month (marts.monthly_cluster_telemetry): energy and
its cost line, the engine-active share, and requests queueing below capacity. Every figure is worked by hand below."""

from decimal import Decimal

import pytest

# the models these tests read, each built with what it reads (a build of every model is the nightly's)
READS = (
    "+intermediate.int_gpu_intervals",
    "+marts.monthly_break_even",
    "+marts.monthly_cluster_telemetry",
    "+marts.monthly_self_hosted_cost",
    "+marts.monthly_utilisation",
)

GPU0 = 'UUID="GPU-0",gpu="0"'
GPU1 = 'UUID="GPU-1",gpu="1"'


def _gpu(at: str, metric: str, labels: str, value: str, cluster: str = "c1") -> dict:
    return {"timestamp": f"2026-07-10T{at}:00Z", "cluster_id": cluster, "metric": metric, "labels": labels,
            "value": value}  # fmt: skip


ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
POWER = "DCGM_FI_DEV_POWER_USAGE"
ACTIVE = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
#: GPU 0's energy counter (mJ; 3,600,000,000 mJ = 1 kWh): 1.0e9 at 00:00 -> 19.0e9 at 10:00 (+18.0e9 = 5 kWh in 10
#: hours: 500 W) -> 7.2e9 at 14:00 (the driver reloaded: 7.2e9 since = 2 kWh) -> 18.0e9 at 20:00 (+10.8e9 = 3 kWh):
#: 10 kWh.
#: GPU 1 has only its power gauge: 720 W for 300 s = 216,000 J = 0.06 kWh, then 1,200 W for 300 s = 360,000 J =
#: 0.1 kWh, then 20 minutes unscraped (a gap: nothing): 0.16 kWh. The cluster: 10.16 kWh, energy source mixed.
GPUS = [
    *(_gpu(t, ENERGY, GPU0, v) for t, v in (("00:00", "1000000000"), ("10:00", "19000000000"),
                                            ("14:00", "7200000000"), ("20:00", "18000000000"))),
    *(_gpu(t, POWER, GPU1, v) for t, v in (("10:00", "720"), ("10:05", "1200"), ("10:10", "900"), ("10:30", "0"))),
    # engine active on GPU 0: 0.5 for 300 s + 1.0 for 300 s = 450 busy seconds of 600 metered; then a 30-minute gap
    *(_gpu(t, ACTIVE, GPU0, v) for t, v in (("10:00", "0.5"), ("10:05", "1"), ("10:10", "0.25"), ("10:40", "0"))),
]  # fmt: skip
#: c1 owns one node in service all July (744 node-hours) and rents 248 node-hours on demand in it: the owned share
#: of its node-hours is 744 / (744 + 248) = 0.75. c2 only rents.
HARDWARE = [{"asset_id": "server-1", "cluster_id": "c1", "purchase_price": "360000",
             "in_service_date": "2026-06-01", "life_months": 36, "salvage_value": "0", "currency": "USD"}]  # fmt: skip
CHARGES = [
    {"charge_id": f"od-{c}", "cluster_id": c, "charge_start": "2026-07-01T00:00:00Z",
     "charge_end": "2026-07-11T08:00:00Z", "kind": "on_demand", "quantity": "248", "unit": "node_hour",
     "unit_price": "10", "amount": "2480", "currency": "USD"}
    for c in ("c1", "c2")
]  # fmt: skip


def _telemetry(ledger) -> dict:
    return {r["cluster_id"]: r for r in ledger.rows("SELECT * FROM marts.monthly_cluster_telemetry")}


def _load(ledger, gpus=GPUS) -> None:
    for kind, rows in (("hardware", HARDWARE), ("cluster-charges", CHARGES), ("gpu-metrics", gpus)):
        res = ledger.load(kind, rows)
        assert (res.status, res.rows_quarantined) == ("loaded", 0), res.message


@pytest.mark.slow
def test_owned_hardware_s_energy_becomes_an_operating_cost_and_a_cloud_node_s_never_does(ledger):
    # c2's GPU 0 draws the same 10 kWh as c1's
    _load(ledger, GPUS + [{**r, "cluster_id": "c2"} for r in GPUS if r["metric"] == ENERGY])
    ledger.build(*READS, energy_usd_per_kwh=Decimal("0.12"), energy_pue=Decimal("1.25"))
    rows = _telemetry(ledger)
    c1, c2 = rows["c1"], rows["c2"]
    assert (c1["energy_kwh"], c1["energy_source"]) == (Decimal("10.16"), "mixed")
    # 10.16 kWh x 1.25 (PUE) = 12.7 kWh at the site; x $0.12 = $1.524; x 0.75 owned = $1.143
    assert (c1["energy_usd"], c1["energy_line"]) == (Decimal("1.143"), "added")
    assert (c2["energy_kwh"], c2["energy_source"], c2["energy_line"]) == (Decimal("10"), "counter", "no_owned_hardware")
    assert c2["energy_usd"] == 0  # 10 x 1.25 x 0.12 x 0 owned
    lines = ledger.rows("SELECT cluster_id, amount_usd, cost_class FROM marts.monthly_self_hosted_cost "
                        "WHERE category = 'energy'")  # fmt: skip
    assert [(r["cluster_id"], r["amount_usd"], r["cost_class"]) for r in lines] == [
        ("c1", Decimal("1.143"), "operating")
    ]


@pytest.mark.slow
def test_an_energy_opex_row_comes_first_and_no_price_adds_nothing(ledger):
    _load(ledger)
    ledger.load("opex", [{"month": "2026-07", "cluster_id": "c1", "category": "energy", "amount": "500",
                          "currency": "USD", "note": "site bill"}])  # fmt: skip
    ledger.build(*READS, energy_usd_per_kwh=Decimal("0.12"))
    assert _telemetry(ledger)["c1"]["energy_line"] == "opex_row"
    lines = ledger.rows("SELECT amount_usd FROM marts.monthly_self_hosted_cost WHERE category = 'energy'")
    assert [r["amount_usd"] for r in lines] == [Decimal("500")]  # the site's bill alone, never both


@pytest.mark.slow
def test_engine_active_share_is_busy_gpu_time_over_provisioned_gpu_time(ledger):
    _load(ledger)
    ledger.build(*READS)
    c1 = _telemetry(ledger)["c1"]
    # 450 busy seconds = 0.125 GPU-hours of 600 s = 0.166667 metered; provisioned (744 + 248) node-hours x 8 GPUs
    # = 7,936 GPU-hours; share 0.125 / 7,936
    assert (c1["gpus_metered"], c1["metered_gpu_hours"], c1["engine_active_gpu_hours"]) == (
        1, Decimal("0.166667"), Decimal("0.125"))  # fmt: skip
    assert c1["provisioned_gpu_hours"] == 7936
    assert c1["engine_active_share"] == pytest.approx(0.125 / 7936)
    assert c1["energy_line"] == "no_price"


def _engine(at: str, metric: str, value: int) -> dict:
    return {"timestamp": f"2026-07-10T{at}:00Z", "cluster_id": "c1", "metric": metric, "labels": 'engine="0"',
            "value": value}  # fmt: skip


@pytest.mark.slow
def test_requests_waiting_far_below_capacity_make_the_sweep_optimistic(ledger):
    _load(ledger)
    # one sweep: 1,000 tokens per second on one node; c1 has (744 + 248) node-hours over 744 hours: 2 nodes in service
    # (rounded up), so 2,000 tokens per second; half of it is 3,600,000 tokens in an hour
    ledger.load("load-tests", [{"sweep_id": "s1", "cluster_id": "c1", "concurrency": 8,
                                "measured_at": "2026-06-20T10:00:00Z", "tokens_per_second": "1000",
                                "p95_latency_ms": 9000, "p50_latency_ms": 5000, "nodes": 1}])  # fmt: skip
    # 10:00-11:00: requests wait at 10:02 while the engine counts 600 + 400 = 1,000 tokens in the hour;
    # 12:00-13:00: none wait
    ledger.load("engine-metrics", [
        _engine("10:00", "vllm:prompt_tokens_total", 0), _engine("10:30", "vllm:prompt_tokens_total", 600),
        _engine("10:00", "vllm:generation_tokens_total", 0), _engine("10:30", "vllm:generation_tokens_total", 400),
        _engine("10:02", "vllm:num_requests_waiting", 3), _engine("12:00", "vllm:num_requests_waiting", 0),
    ])  # fmt: skip
    ledger.build(*READS)
    c1 = _telemetry(ledger)["c1"]
    # 1 waiting hour, at 1,000 / 3,600 = 0.278 tokens per second against 2,000
    assert (c1["waiting_hours"], c1["least_waiting_hour_tokens_per_second"]) == (1, Decimal("0.278"))
    assert (c1["capacity_tokens_per_second"], c1["queue_pressure"]) == (2000, True)
    u = ledger.one("SELECT sweep_optimistic FROM marts.monthly_utilisation WHERE cluster_id = 'c1'")
    assert u["sweep_optimistic"] is True


@pytest.mark.slow
def test_the_verdict_says_the_engines_queued_below_capacity(ledger):
    from pipeline.serve.caveats import caveat_sentences
    from pipeline.serve.report import gather
    from tests.conftest import request

    _load(ledger)
    ledger.load("load-tests", [{"sweep_id": "s1", "cluster_id": "c1", "concurrency": 8,
                                "measured_at": "2026-06-20T10:00:00Z", "tokens_per_second": "1000",
                                "p95_latency_ms": 9000, "p50_latency_ms": 5000, "nodes": 1}])  # fmt: skip
    ledger.load("engine-metrics", [_engine("10:02", "vllm:num_requests_waiting", 3)])
    ledger.load("requests", [request("r1", "t1", "2026-07-10T10:05:00Z", route="self_hosted")])
    ledger.build()  # every model: the report reads them all
    assert "sweep_optimistic" in ledger.one("SELECT verdict_caveats FROM marts.monthly_break_even")["verdict_caveats"]
    said = " ".join(caveat_sentences(gather(ledger.con, "2026-07")))
    # no latency target is set, so the queue alone flags it: 2 nodes in service, as above
    assert (
        "cluster c1's serving engines queued requests in an hour in which it served under half the capacity its load "
        "test gives its 2 nodes" in said
    )
    assert "95th percentile" not in said


@pytest.mark.slow
def test_an_hourly_export_is_continuous_and_a_longer_silence_is_a_gap(ledger):
    hourly = [_gpu(t, POWER, GPU1, v) for t, v in (("10:00", "1000"), ("11:00", "500"), ("12:00", "800"),
                                                   ("16:00", "0"))]  # fmt: skip
    _load(ledger, hourly)
    ledger.build(*READS)
    # one sample an hour: 1,000 W x 3,600 s = 1 kWh, then 500 W x 3,600 s = 0.5 kWh; 12:00 -> 16:00 is over twice
    # the series' hour: a gap, nothing; 1.5 kWh from the power gauge
    c1 = _telemetry(ledger)["c1"]
    assert (c1["energy_kwh"], c1["energy_source"]) == (Decimal("1.5"), "power")
    gaps = ledger.rows("SELECT scrape_gap FROM intermediate.int_gpu_intervals ORDER BY interval_end")
    assert [r["scrape_gap"] for r in gaps] == [False, False, True]


@pytest.mark.slow
def test_an_interval_belongs_to_the_month_it_was_used_in(ledger):
    # the energy counter rises 1 kWh (3,600,000,000 mJ) an hour, sampled on the hour from 1 October 00:00 to
    # 1 November 00:00: 745 samples, 744 hourly intervals, every one of them used in October (the last ends at
    # midnight on the 1st): 744 kWh. c1 owns its one node and rents nothing: owned share 1;
    # 744 kWh x PUE 1 x $0.15 = $111.60.
    from datetime import datetime, timedelta, timezone

    start = datetime(2026, 10, 1, tzinfo=timezone.utc)
    hourly = [{"timestamp": (start + timedelta(hours=h)).strftime("%Y-%m-%dT%H:%M:%SZ"), "cluster_id": "c1",
               "metric": ENERGY, "labels": GPU0, "value": str(3_600_000_000 * h)} for h in range(745)]  # fmt: skip
    # GPU 1's counter across two boundaries: 30 Sep 12:00 -> 1 Nov 12:00 is 32 days (half a day in September, 31 in
    # October, half a day in November); it rose 32 kWh: 0.5 kWh in September, 31 in October, 0.5 in November
    risen = str(32 * 3_600_000_000)
    across = [{"timestamp": t, "cluster_id": "c1", "metric": ENERGY, "labels": GPU1, "value": v}
              for t, v in (("2026-09-30T12:00:00Z", "0"), ("2026-11-01T12:00:00Z", risen))]  # fmt: skip
    # the site's network bill in September and November makes them months of the ledger (no energy row: no opex_row)
    network = [{"month": m, "cluster_id": "c1", "category": "networking", "amount": "10", "currency": "USD",
                "note": ""} for m in ("2026-09", "2026-11")]  # fmt: skip
    for kind, rows in (("hardware", HARDWARE), ("opex", network), ("gpu-metrics", hourly + across)):
        res = ledger.load(kind, rows)
        assert (res.status, res.rows_quarantined) == ("loaded", 0), res.message
    ledger.build(*READS, energy_usd_per_kwh=Decimal("0.15"), energy_pue=Decimal("1"))
    by_month = {
        (r["month"].isoformat(), r["labels"]): r["kwh"]
        for r in ledger.rows(
            "SELECT month, labels, sum(energy_kwh) AS kwh FROM intermediate.int_gpu_intervals GROUP BY month, labels"
        )  # fmt: skip
    }
    assert by_month == {
        ("2026-10-01", GPU0): Decimal("744"),
        ("2026-09-01", GPU1): Decimal("0.5"),
        ("2026-10-01", GPU1): Decimal("31"),
        ("2026-11-01", GPU1): Decimal("0.5"),
    }
    months = {r["month"].isoformat(): r for r in ledger.rows("SELECT * FROM marts.monthly_cluster_telemetry")}
    assert months["2026-10-01"]["energy_kwh"] == Decimal("775")  # 744 + 31
    assert months["2026-10-01"]["energy_usd"] == Decimal("116.25")  # 775 x $0.15 (GPU 0 alone: 744 x 0.15 = $111.60)
    assert months["2026-11-01"]["energy_usd"] == Decimal("0.075")  # 0.5 kWh x $0.15
