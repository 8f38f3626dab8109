"""Invoice vs metered, per provider and month, with every status."""

import pytest
from decimal import Decimal

from tests.conftest import PRICE_MOONSHOT, request

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+marts.monthly_reconciliation", "+marts.monthly_route_cost")

PRICE_COMET = {
    **PRICE_MOONSHOT,
    "provider": "cometapi",
    "cache_hit_input_per_million": "2.40",
    "cache_miss_input_per_million": "2.40",
    "output_per_million": "12.00",
}
PRICE_OTHER = {**PRICE_MOONSHOT, "provider": "other"}


def line(provider, line_id, line_type, amount, month="2026-07"):
    return {
        "provider": provider,
        "invoice_id": f"{provider}-{month}",
        "line_id": line_id,
        "period_start": f"{month}-01",
        "period_end": "2026-08-01",
        "line_type": line_type,
        "amount": amount,
        "currency": "USD",
    }


@pytest.mark.slow
def test_each_reconciliation_status(ledger):
    ledger.load("prices", [PRICE_MOONSHOT, PRICE_COMET, PRICE_OTHER])
    ledger.load(
        "requests",
        [
            # moonshot: 300,000 miss x $3 / 1e6 + 30,000 out x $15 / 1e6 = $1.35
            request("m", "t1", "2026-07-01T10:00:00Z", cache_miss_input_tokens=300_000, output_tokens=30_000),
            # cometapi: 100,000 x $2.40 / 1e6 = $0.24 + 10,000 x $12 / 1e6 = $0.12 -> $0.36
            request(
                "c",
                "t2",
                "2026-07-01T10:00:00Z",
                provider="cometapi",
                cache_hit_input_tokens=100_000,
                output_tokens=10_000,
            ),
            # other: $3.00, never invoiced
            request("o", "t3", "2026-07-01T10:00:00Z", provider="other", cache_miss_input_tokens=1_000_000),
        ],
    )
    ledger.load(
        "invoices",
        [
            line("moonshot", "1", "input_cache_miss", "0.90"),
            line("moonshot", "2", "output", "0.45"),
            line("moonshot", "3", "credit", "-1.00"),
            line("moonshot", "4", "tax", "0.10"),
            line("cometapi", "1", "output", "0.50"),
            line("ghost", "1", "output", "7.00"),
        ],
    )
    ledger.build(*READS, reconciliation_tolerance_usd=Decimal("0.01"), reconciliation_tolerance_pct=Decimal("1"))
    rec = {r["provider"]: r for r in ledger.rows("SELECT * FROM marts.monthly_reconciliation")}
    # moonshot: usage lines 0.90 + 0.45 = 1.35 = metered; credit and tax shown apart
    assert rec["moonshot"]["status"] == "ok" and rec["moonshot"]["difference_usd"] == 0
    assert rec["moonshot"]["credits_usd"] == Decimal("-1.00") and rec["moonshot"]["tax_usd"] == Decimal("0.10")
    # total billed 1.35 - 1.00 + 0.10 = 0.45
    assert rec["moonshot"]["invoiced_total_usd"] == Decimal("0.45")
    # cometapi: 0.50 - 0.36 = 0.14 > tolerance max($0.01, 1% x 0.36 = $0.0036) -> mismatch
    assert rec["cometapi"]["status"] == "mismatch"
    assert rec["cometapi"]["difference_usd"] == Decimal("0.14") and rec["cometapi"]["tolerance_usd"] == Decimal("0.01")
    assert rec["other"]["status"] == "missing_invoice" and rec["other"]["invoiced_usd"] is None
    assert rec["ghost"]["status"] == "missing_requests" and rec["ghost"]["metered_usd"] == 0
    api = ledger.one("SELECT cost_usd, cost_basis FROM marts.monthly_route_cost WHERE route = 'api'")
    # invoiced totals where invoiced (moonshot 0.45, cometapi 0.50, ghost 7.00) + metered for other (3.00) = 10.95
    assert api == {"cost_usd": Decimal("10.95"), "cost_basis": "mixed"}


@pytest.mark.slow
def test_percent_tolerance_and_all_invoiced_basis(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    # 10,000,000,000 miss x $3 / 1e6 = $30,000 metered
    ledger.load("requests", [request("m", "t1", "2026-07-01T10:00:00Z", cache_miss_input_tokens=10_000_000_000)])
    # invoiced $30,250: difference $250 is within 1% of $30,000 = $300 -> ok
    ledger.load("invoices", [line("moonshot", "1", "input_cache_miss", "30250")])
    ledger.build(*READS, reconciliation_tolerance_usd=Decimal("1"), reconciliation_tolerance_pct=Decimal("1"))
    rec = ledger.one("SELECT status, tolerance_usd FROM marts.monthly_reconciliation")
    assert rec == {"status": "ok", "tolerance_usd": Decimal("300")}
    api = ledger.one("SELECT cost_usd, cost_basis FROM marts.monthly_route_cost WHERE route = 'api'")
    assert api == {"cost_usd": Decimal("30250"), "cost_basis": "invoice"}
