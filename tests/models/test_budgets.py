"""Budgets ([[budgets]], marts.budget_status): the month's spend so far against a monthly budget, and a projection to
the month's end from the last 7 days' run-rate. Every figure is worked by hand below."""

import json
from decimal import Decimal

import pytest

from pipeline.base.fileformats import Budget
from tests.conftest import PRICE_MOONSHOT, cli, request, write_csv

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+marts.budget_status",)

D = Decimal


def _ten_days() -> list[dict]:
    # team alpha sends 1,000,000 cache-miss tokens a day, July 1 to 10: $3.00 a day at $3 per million
    return [request(f"r{d}", f"t{d}", f"2026-07-{d:02d}T10:00:00Z", team="alpha", cache_miss_input_tokens=1_000_000)
            for d in range(1, 11)]  # fmt: skip


@pytest.mark.slow
def test_a_budget_crossed_mid_month_is_at_risk_and_one_passed_is_over(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", _ten_days())
    budgets = (Budget("alpha", "api", D("80")), Budget("*", "both", D("25")), Budget("alpha", "self_hosted", D("10")))
    ledger.build(*READS, budgets=budgets)
    rows = {(r["team"], r["route"]): r for r in ledger.rows("SELECT * FROM marts.budget_status")}
    alpha = rows[("alpha", "api")]
    # July 10 is the last day with data: 10 of 31 days passed, $30.00 spent; the last 7 days (4th to 10th) used 7 of
    # the 10 days' usage: run-rate 30 x 7 / 10 / 7 = $3.00 a day; 21 days left: projected 30 + 21 x 3 = $93.00
    assert (str(alpha["as_of"]), alpha["days_passed"], alpha["spent_usd"]) == ("2026-07-10", 10, D("30"))
    assert (alpha["run_rate_usd_per_day"], alpha["projected_usd"]) == (D("3"), D("93"))
    assert alpha["status"] == "at_risk"  # $30 spent is under $80; $93 projected is over it
    assert rows[("*", "both")]["status"] == "over"  # $30 spent is over $25
    assert (rows[("alpha", "self_hosted")]["spent_usd"], rows[("alpha", "self_hosted")]["status"]) == (0, "ok")


@pytest.mark.slow
def test_a_nightly_names_the_budgets_at_risk(tmp_path):
    landing = tmp_path / "landing"
    write_csv(landing / "prices" / "prices.csv", [PRICE_MOONSHOT])
    write_csv(landing / "requests" / "requests.csv", _ten_days())
    settings = tmp_path / "s.toml"
    settings.write_text('[[budgets]]\nteam = "alpha"\nroute = "api"\nusd = 80\n')
    res = cli("nightly", landing, "--db", tmp_path / "l.duckdb", "--settings", settings)
    assert res.exit_code == 0, res.output
    assert "budget at risk: team alpha on the api route in 2026-07: spent $30.00, projected $93.00 of $80.00" in (
        " ".join(res.output.split())
    )
    res = cli("nightly", landing, "--db", tmp_path / "l.duckdb", "--settings", settings, "--json")
    summary = json.loads(res.stdout)
    assert [(b["team"], b["status"]) for b in summary["budgets_at_risk_or_over"]] == [("alpha", "at_risk")]
