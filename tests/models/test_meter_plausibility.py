"""A counter sample no GPU or engine could produce is set aside, named and not counted
(intermediate.int_meter_rises_implausible): an energy counter rising faster than 10 kW, a token counter faster than
10 million tokens a second. A spike (one sample up, the next back down) is left out and the interval measured around
it; a step that stays up leaves its own interval uncounted. Every figure worked by hand below."""

import json
from decimal import Decimal

from tests.conftest import cli

READS = (
    "+intermediate.int_meter_rises_implausible",
    "+marts.monthly_cluster_telemetry",
    "+marts.monthly_engine_reconciliation",
)
ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
GPU0 = 'UUID="GPU-0",gpu="0"'
ENGINE = 'instance="node-1:8000"'
KWH = 3_600_000_000  # mJ


def _sample(at: str, metric: str, labels: str, value: int) -> dict:
    return {"timestamp": f"2026-10-05T{at}Z", "cluster_id": "k3", "metric": metric, "labels": labels, "value": value}


def test_an_energy_spike_at_the_bound_is_left_out_and_the_interval_measured_around_it(ledger):
    # 1 kWh an hour (1 kW) through 03:00, but the 01:00 sample reads 1e15 mJ, the column's bound: rising
    # 1e15 - 1 kWh in an hour is about 278 MW. Left out, 00:00 -> 02:00 is measured from its neighbours:
    # 1 -> 3 kWh = 2 kWh, then 3 -> 4 kWh = 1 kWh: 3 kWh in all (the attack billed 277,778 kWh)
    rows = [_sample("00:00:00", ENERGY, GPU0, 1 * KWH), _sample("01:00:00", ENERGY, GPU0, 10**15),
            _sample("02:00:00", ENERGY, GPU0, 3 * KWH), _sample("03:00:00", ENERGY, GPU0, 4 * KWH)]  # fmt: skip
    assert ledger.load("gpu-metrics", rows).rows_loaded == 4
    ledger.build(*READS)
    assert ledger.one("SELECT energy_kwh FROM marts.monthly_cluster_telemetry")["energy_kwh"] == Decimal("3")
    aside = ledger.one("SELECT * FROM intermediate.int_meter_rises_implausible")
    # 1e15 - 3.6e9 = 999,996,400,000,000 mJ in 3,600 s
    assert (str(aside["sampled_at"]), aside["spike"], aside["rise"]) == (
        "2026-10-05 01:00:00",
        True,
        Decimal("999996400000000"),
    )
    assert aside["reason"].startswith(f"{ENERGY} rose by 999996400000000 mJ in 3600.000 s, faster than 10 kW")


def test_an_energy_step_that_stays_up_leaves_only_its_own_interval_uncounted(ledger):
    # 00:00 1 kWh -> 00:01 2 kWh: 1 kWh in 60 s is 60 kW (above 10 kW): not counted; then 2 -> 2.01 kWh in an
    # hour (10 W) counts: 0.01 kWh. A rise of 9.9 kW stays counted: 01:01 -> 01:02 rises 9,900 mJ a ms x 60,000 ms
    # = 594,000,000 mJ = 0.165 kWh. Total 0.01 + 0.165 = 0.175 kWh
    two = 2 * KWH
    rows = [_sample("00:00:00", ENERGY, GPU0, KWH), _sample("00:01:00", ENERGY, GPU0, two),
            _sample("01:01:00", ENERGY, GPU0, two + 36_000_000),
            _sample("01:02:00", ENERGY, GPU0, two + 36_000_000 + 594_000_000)]  # fmt: skip
    ledger.load("gpu-metrics", rows)
    ledger.build(*READS)
    assert ledger.one("SELECT energy_kwh FROM marts.monthly_cluster_telemetry")["energy_kwh"] == Decimal("0.175")
    aside = ledger.one("SELECT sampled_at, spike FROM intermediate.int_meter_rises_implausible")
    assert (str(aside["sampled_at"]), aside["spike"]) == ("2026-10-05 00:01:00", False)
    flags = ledger.rows("SELECT interval_end, implausible_rise, energy_kwh FROM intermediate.int_gpu_intervals "
                        "ORDER BY interval_end")  # fmt: skip
    assert [(f["implausible_rise"], f["energy_kwh"]) for f in flags] == [
        (True, None),
        (False, Decimal("0.01")),
        (False, Decimal("0.165")),
    ]


def test_a_token_counter_spike_is_left_out(ledger):
    # prompt tokens 1,000 -> (spike 9e14) -> 61,000 -> 121,000 a minute apart: 60,000 + 60,000 = 120,000 counted
    # (1,000 tokens a second); the spike rose 9e14 - 1,000 in 60 s, far above 10 million a second
    metric = "vllm:prompt_tokens_total"
    rows = [_sample("10:00:00", metric, ENGINE, 1000), _sample("10:00:30", metric, ENGINE, 900_000_000_000_000),
            _sample("10:01:00", metric, ENGINE, 61_000), _sample("10:02:00", metric, ENGINE, 121_000)]  # fmt: skip
    ledger.load("engine-metrics", rows)
    ledger.build(*READS)
    assert ledger.one("SELECT engine_prompt_tokens FROM marts.monthly_engine_reconciliation")[
        "engine_prompt_tokens"] == 120000  # fmt: skip
    assert ledger.one("SELECT count(*) AS n FROM intermediate.int_meter_rises_implausible WHERE spike")["n"] == 1


def test_the_nightly_and_status_name_the_sample_set_aside_with_its_file_and_line(tmp_path):
    landing = tmp_path / "landing" / "gpu-metrics"
    landing.mkdir(parents=True)
    (landing / "dcgm.prom").write_text(
        f'{ENERGY}{{cluster="k3",gpu="0"}} {KWH} 1791158400000\n'  # line 1: 2026-10-05 00:00
        f'{ENERGY}{{cluster="k3",gpu="0"}} 999999999999999 1791158460000\n'  # line 2: a minute on, 1e15 - 1
        f'{ENERGY}{{cluster="k3",gpu="0"}} {KWH + 60_000_000} 1791158520000\n'  # line 3: 1 kW on from line 1
    )
    db = tmp_path / "ledger.duckdb"
    res = cli("nightly", tmp_path / "landing", "--db", db)
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())
    assert "meter sample set aside:" in said and "line 2 (k3): DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION rose" in said
    res = cli("status", "--db", db, "--json")
    aside = json.loads(res.output)["meter_samples_set_aside"]
    assert [(a["path"], a["line"]) for a in aside] == [(str(landing / "dcgm.prom"), 2)]
