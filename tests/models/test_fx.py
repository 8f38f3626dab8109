"""Other currencies: amounts convert to USD through the fx kind at the latest rate on or before their
date; a row with no such rate is quarantined with the reason named, never converted at 1."""

from __future__ import annotations

import pytest
import json
from decimal import Decimal

from tests.conftest import PRICE_MOONSHOT, cli, request, write_csv

#: the models these tests read, each with what it reads: the build runs only those
READS = (
    "+intermediate.int_requests_priced",
    "+marts.monthly_reconciliation",
    "+marts.monthly_self_hosted_cost",
    "+staging.stg_ledger__cluster_charges",
    "+staging.stg_ledger__hardware",
    "+staging.stg_ledger__invoices",
    "+staging.stg_ledger__opex",
)

# Moonshot's mainland platform bills in CNY: 21.00 CNY per 1M cache-miss input tokens
PRICE_CNY = {**PRICE_MOONSHOT, "effective_from": "2026-07-01T00:00:00Z", "cache_miss_input_per_million": "21.00",
             "cache_hit_input_per_million": "2.10", "output_per_million": "84.00", "currency": "CNY"}  # fmt: skip
RATES = [
    {"currency": "CNY", "date": "2026-07-01", "usd_per_unit": "0.14"},
    {"currency": "CNY", "date": "2026-07-15", "usd_per_unit": "0.15"},
]


@pytest.mark.slow
def test_a_price_in_cny_converts_at_the_rate_in_force_on_the_request_date(ledger):
    ledger.load("fx", RATES)
    assert ledger.load("prices", [PRICE_CNY]).rows_loaded == 1
    ledger.load(
        "requests",
        [
            # 10 July: rate of 1 July, 1,000,000 x 21.00 / 1e6 = 21 CNY x 0.14 = $2.94
            request("jul10", "t1", "2026-07-10T12:00:00Z", cache_miss_input_tokens=1_000_000),
            # 15 July 00:00, the new rate's first instant: 21 CNY x 0.15 = $3.15
            request("jul15", "t2", "2026-07-15T00:00:00Z", cache_miss_input_tokens=1_000_000),
            # 14 July 23:59:59: still 0.14; 10,000 output x 84.00 / 1e6 = 0.84 CNY x 0.14 = $0.1176
            request("jul14", "t3", "2026-07-14T23:59:59Z", output_tokens=10_000),
        ],
    )
    ledger.build(*READS)
    costs = dict(
        ledger.con.execute("SELECT request_id, metered_cost_usd FROM intermediate.int_requests_priced").fetchall()
    )
    assert costs == {"jul10": Decimal("2.94"), "jul15": Decimal("3.15"), "jul14": Decimal("0.1176")}


@pytest.mark.slow
def test_a_price_before_its_currencys_first_rate_prices_only_the_requests_with_a_rate(ledger):
    """The CNY rate starts on 15 July, after the price's 1 July: the price row loads (it was quarantined whole), the
    requests from the 15th on are priced at that rate, the ones before are unpriced and counted as such; a price in
    a currency with no rate at all prices nothing. Never converted at 1."""
    ledger.load("fx", [{"currency": "CNY", "date": "2026-07-15", "usd_per_unit": "0.15"}])
    result = ledger.load("prices", [PRICE_CNY, {**PRICE_MOONSHOT, "model": "kimi-k3-eu", "currency": "EUR"}])
    assert (result.rows_loaded, result.rows_quarantined) == (2, 0)
    ledger.load(
        "requests",
        [
            # 10 July: no CNY rate yet -> unpriced
            request("jul10", "t1", "2026-07-10T12:00:00Z", cache_miss_input_tokens=1_000_000),
            # 20 July: 1,000,000 x 21.00 / 1e6 = 21 CNY x 0.15 = $3.15
            request("jul20", "t2", "2026-07-20T12:00:00Z", cache_miss_input_tokens=1_000_000),
            # an EUR-priced model: no EUR rate at all -> unpriced
            request("eu", "t3", "2026-07-20T12:00:00Z", model="kimi-k3-eu", cache_miss_input_tokens=1_000_000),
        ],
    )
    ledger.build(*READS)
    costs = dict(
        ledger.con.execute("SELECT request_id, metered_cost_usd FROM intermediate.int_requests_priced").fetchall()
    )
    assert costs == {"jul10": None, "jul20": Decimal("3.15"), "eu": None}
    rec = ledger.one("SELECT metered_usd, unpriced_requests FROM marts.monthly_reconciliation")
    assert rec == {"metered_usd": Decimal("3.15"), "unpriced_requests": 2}


@pytest.mark.slow
def test_invoices_charges_hardware_and_opex_convert_at_their_own_dates(ledger):
    ledger.load("fx", RATES + [{"currency": "EUR", "date": "2026-06-01", "usd_per_unit": "1.10"}])
    ledger.load(
        "invoices",
        [
            # period start 1 July: 100 CNY x 0.14 = $14
            {"provider": "moonshot", "invoice_id": "i1", "line_id": "1", "period_start": "2026-07-01T00:00:00Z",
             "period_end": "2026-08-01T00:00:00Z", "line_type": "input_cache_miss", "amount": "100", "currency": "CNY"},
        ],
    )  # fmt: skip
    ledger.load(
        "cluster-charges",
        [
            # charge start 20 July: 1,000 CNY x 0.15 = $150
            {"charge_id": "c", "cluster_id": "c1", "charge_start": "2026-07-20T00:00:00Z",
             "charge_end": "2026-07-21T00:00:00Z", "kind": "on_demand", "amount": "1000", "currency": "CNY"},
        ],
    )  # fmt: skip
    ledger.load(
        "hardware",
        [
            # in service 1 July: 10,000 EUR x 1.10 = $11,000
            {"asset_id": "a", "cluster_id": "c1", "purchase_price": "10000", "in_service_date": "2026-07-01",
             "life_months": "10", "currency": "EUR"},
        ],
    )  # fmt: skip
    # July: 50 EUR x 1.10 = $55
    ledger.load(
        "opex", [{"month": "2026-07", "cluster_id": "c1", "category": "storage", "amount": "50", "currency": "EUR"}]
    )
    ledger.build(*READS)
    assert ledger.one("SELECT amount_usd FROM staging.stg_ledger__invoices") == {"amount_usd": Decimal("14")}
    assert ledger.one("SELECT amount_usd FROM staging.stg_ledger__cluster_charges") == {"amount_usd": Decimal("150")}
    assert ledger.one("SELECT purchase_price_usd FROM staging.stg_ledger__hardware") == {
        "purchase_price_usd": Decimal("11000")
    }
    assert ledger.one("SELECT amount_usd FROM staging.stg_ledger__opex") == {"amount_usd": Decimal("55")}
    # and on to the month's self-hosted cost: $150 charge + $11,000 / 10 months = $1,100 amortisation + $55 opex
    assert ledger.one(
        "SELECT sum(amount_usd) AS total FROM marts.monthly_self_hosted_cost WHERE month = DATE '2026-07-01'"
    ) == {"total": Decimal("1305")}


@pytest.mark.slow
def test_a_nightly_loads_the_rates_before_the_amounts_they_convert(tmp_path):
    landing, db = tmp_path / "landing", tmp_path / "ledger.duckdb"
    write_csv(landing / "prices" / "prices.csv", [PRICE_CNY])
    write_csv(landing / "fx" / "cny.csv", RATES)
    res = cli("nightly", landing, "--db", db, "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert (summary["rows_loaded"], summary["rows_quarantined"]) == (3, 0)
