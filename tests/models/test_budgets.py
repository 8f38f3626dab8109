"""Budgets ([[budgets]], marts.budget_status): the month's spend so far against a monthly budget, and a projection to
the month's end from the last 7 days' run-rate, from the settings file to the nightly's words. Every figure is worked
by hand below; the mart's arithmetic on its own is in its given/expect cases
(tests/models/cases/marts.budget_status.yml)."""

import json

import pytest

from tests.conftest import PRICE_MOONSHOT, cli, request, write_csv


def _ten_days() -> list[dict]:
    # team alpha sends 1,000,000 cache-miss tokens a day, July 1 to 10: $3.00 a day at $3 per million
    return [request(f"r{d}", f"t{d}", f"2026-07-{d:02d}T10:00:00Z", team="alpha", cache_miss_input_tokens=1_000_000)
            for d in range(1, 11)]  # fmt: skip


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
