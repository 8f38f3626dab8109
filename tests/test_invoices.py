"""Invoice semantics (DOMAIN.md, issue #11): an export is a snapshot of one invoice; other
invoices of the same provider and month add to it; a multi-month line is allocated."""

from decimal import Decimal

from tests.conftest import PRICE_MOONSHOT, request


def line(invoice_id, line_id, line_type, amount, start="2026-07-01", end="2026-08-01", provider="moonshot"):
    return {
        "provider": provider,
        "invoice_id": invoice_id,
        "line_id": line_id,
        "period_start": start,
        "period_end": end,
        "line_type": line_type,
        "amount": amount,
        "currency": "USD",
    }


def reconciliation(ledger):
    return {
        str(r["month"])[:7]: r
        for r in ledger.rows("SELECT * FROM marts.monthly_reconciliation WHERE provider = 'moonshot' ORDER BY month")
    }


def test_credit_note_as_its_own_invoice_adds_to_the_month(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    # 1,000,000 cache-miss tokens x $3.00 / 1e6 = $3.00 metered in July
    ledger.load("requests", [request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000)])
    ledger.load("invoices", [line("inv-7", "1", "input_cache_miss", "3.00"), line("inv-7", "2", "tax", "0.30")])
    # the credit note arrives later in its own file, as its own invoice of the same provider and month
    ledger.load("invoices", [line("cn-7", "1", "credit", "-1.00")])
    ledger.build()
    jul = reconciliation(ledger)["2026-07"]
    # before: the credit note replaced inv-7 -> invoiced usage 0, total -1.00 (money lost)
    # now: usage 3.00 (inv-7), credits -1.00 (cn-7), tax 0.30 -> total 3.00 - 1.00 + 0.30 = 2.30
    assert jul["invoiced_usd"] == Decimal("3.00") and jul["status"] == "ok"
    assert jul["credits_usd"] == Decimal("-1.00") and jul["tax_usd"] == Decimal("0.30")
    assert jul["invoiced_total_usd"] == Decimal("2.30")
    assert jul["invoices"] == 2 and jul["invoice_ids"] == "cn-7, inv-7"
    route = ledger.one("SELECT cost_usd FROM marts.monthly_route_cost WHERE route = 'api' AND month = '2026-07-01'")
    assert route["cost_usd"] == Decimal("2.30")


def test_re_export_of_the_same_invoice_replaces_only_that_invoice(ledger):
    ledger.load("invoices", [line("inv-7", "1", "output", "10.00")])
    ledger.load("invoices", [line("adj-7", "1", "other", "2.00")])
    ledger.load("invoices", [line("inv-7", "1", "output", "12.00")])  # re-export of inv-7: 10.00 -> 12.00
    ledger.build()
    jul = reconciliation(ledger)["2026-07"]
    # 12.00 (latest inv-7) + 2.00 (adj-7) = 14.00; the first inv-7 export no longer counts
    assert jul["invoiced_total_usd"] == Decimal("14.00") and jul["invoices"] == 2


def test_quarterly_line_is_allocated_by_metered_cost(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    # metered: Jul 1M miss = $3, Aug 2M = $6, Sep 3M = $9 -> weights 3 : 6 : 9 of 18
    ledger.load(
        "requests",
        [
            request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000),
            request("r2", "t2", "2026-08-10T10:00:00Z", cache_miss_input_tokens=2_000_000),
            request("r3", "t3", "2026-09-10T10:00:00Z", cache_miss_input_tokens=3_000_000),
        ],
    )
    ledger.load("invoices", [line("q3", "1", "input_cache_miss", "18.60", end="2026-10-01")])
    ledger.build()
    rec = reconciliation(ledger)
    # 18.60 x 3/18 = 3.10; x 6/18 = 6.20; x 9/18 = 9.30 (sum 18.60: nothing counted twice)
    assert [rec[m]["invoiced_usd"] for m in ("2026-07", "2026-08", "2026-09")] == [
        Decimal("3.10"),
        Decimal("6.20"),
        Decimal("9.30"),
    ]
    # each month is invoiced (none missing): 3.10 - 3.00, 6.20 - 6.00, 9.30 - 9.00
    assert [rec[m]["difference_usd"] for m in ("2026-07", "2026-08", "2026-09")] == [
        Decimal("0.10"),
        Decimal("0.20"),
        Decimal("0.30"),
    ]
    assert all(rec[m]["allocated_from_multi_month_usd"] == rec[m]["invoiced_usd"] for m in rec)
    spend = ledger.rows(
        "SELECT month, cost_usd, cost_basis FROM marts.monthly_route_cost WHERE route = 'api' ORDER BY month"
    )
    assert sum(r["cost_usd"] for r in spend) == Decimal("18.60")
    assert {r["cost_basis"] for r in spend} == {"invoice"}


def test_quarterly_line_with_nothing_metered_is_allocated_by_time(ledger):
    # Jul 31 days, Aug 31, Sep 30 -> 744 h, 744 h, 720 h of 2,208 h; $2,208 -> $744, $744, $720
    ledger.load("invoices", [line("q3", "1", "other", "2208", end="2026-10-01")])
    ledger.build()
    rows = ledger.rows(
        "SELECT month, amount_usd, allocation_basis, months_in_period "
        "FROM intermediate.int_invoice_lines_current ORDER BY month"
    )
    assert [r["amount_usd"] for r in rows] == [Decimal("744"), Decimal("744"), Decimal("720")]
    assert {r["allocation_basis"] for r in rows} == {"time"} and {r["months_in_period"] for r in rows} == {3}


def test_allocation_shares_always_add_up_to_the_line(ledger):
    # thirds that do not divide: $100.00 over three equal months by time (Jul 31 d, Aug 31 d ... use 3 x 30 days)
    # Jun 30 d + Sep? no: pick Sep-Nov 2026: 30 + 31 + 30 days = 91 days -> 30/91, 31/91, 30/91
    ledger.load("invoices", [line("q", "1", "other", "100.00", start="2026-09-01", end="2026-12-01")])
    ledger.build()
    rows = ledger.rows("SELECT amount_usd FROM intermediate.int_invoice_lines_current ORDER BY month")
    # 100 x 30/91 = 32.967033 (to the micro-dollar), Oct 100 x 31/91 = 34.065934, Nov = the remainder
    assert rows[0]["amount_usd"] == Decimal("32.967033") and rows[1]["amount_usd"] == Decimal("34.065934")
    assert sum(r["amount_usd"] for r in rows) == Decimal("100.00")
