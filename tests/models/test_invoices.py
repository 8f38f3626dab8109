"""Invoice semantics (docs/definitions.md): an invoice is the sum of its lines, keyed by line_id (a re-export restates a
line, a new line_id adds); other invoices of the same provider and month add to it; a multi-month line is allocated;
the same invoice delivered again under another id or format is rejected."""

import pytest
from decimal import Decimal

from tests.conftest import PRICE_MOONSHOT, request

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+intermediate.int_invoice_lines_current", "+marts.monthly_reconciliation", "+marts.monthly_route_cost")


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


@pytest.mark.slow
def test_credit_note_as_its_own_invoice_adds_to_the_month(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    # 1,000,000 cache-miss tokens x $3.00 / 1e6 = $3.00 metered in July
    ledger.load("requests", [request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000)])
    ledger.load("invoices", [line("inv-7", "1", "input_cache_miss", "3.00"), line("inv-7", "2", "tax", "0.30")])
    # the credit note arrives later in its own file, as its own invoice of the same provider and month
    ledger.load("invoices", [line("cn-7", "1", "credit", "-1.00")])
    ledger.build(*READS)
    jul = reconciliation(ledger)["2026-07"]
    # the defect guarded: the credit note replaced inv-7 -> invoiced usage 0, total -1.00 (money lost)
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
    ledger.build(*READS)
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
    ledger.build(*READS)
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
    ledger.build(*READS)
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
    ledger.build(*READS)
    rows = ledger.rows("SELECT amount_usd FROM intermediate.int_invoice_lines_current ORDER BY month")
    # 100 x 30/91 = 32.967033 (to the micro-dollar), Oct 100 x 31/91 = 34.065934, Nov = the remainder
    assert rows[0]["amount_usd"] == Decimal("32.967033") and rows[1]["amount_usd"] == Decimal("34.065934")
    assert sum(r["amount_usd"] for r in rows) == Decimal("100.00")


def test_an_invoice_split_over_two_files_adds_up(ledger):
    # page 1: lines 1 and 2; page 2: lines 3 and 4 of the same invoice
    first = ledger.load(
        "invoices", [line("inv-7", "1", "input_cache_miss", "3.00"), line("inv-7", "2", "output", "4.00")]
    )
    second = ledger.load("invoices", [line("inv-7", "3", "output", "5.00"), line("inv-7", "4", "tax", "1.20")])
    assert first.status == second.status == "loaded"
    ledger.build(*READS)
    jul = reconciliation(ledger)["2026-07"]
    # usage 3.00 + 4.00 + 5.00 = 12.00; tax 1.20; total 13.20 (the defect guarded: page 2 replaced page 1, total 6.20)
    assert jul["invoiced_usd"] == Decimal("12.00") and jul["tax_usd"] == Decimal("1.20")
    assert jul["invoiced_total_usd"] == Decimal("13.20") and jul["invoices"] == 1


def test_a_re_export_restates_its_lines_and_keeps_the_others(ledger):
    ledger.load("invoices", [line("inv-7", "1", "output", "10.00"), line("inv-7", "2", "output", "3.00")])
    ledger.load("invoices", [line("inv-7", "1", "output", "12.00")])  # line 1 restated: 10.00 -> 12.00
    ledger.build(*READS)
    # 12.00 (line 1, restated) + 3.00 (line 2, not in the re-export, still part of the invoice) = 15.00
    assert reconciliation(ledger)["2026-07"]["invoiced_total_usd"] == Decimal("15.00")


def test_the_same_invoice_in_another_format_or_id_is_rejected_naming_the_first_file(ledger):
    lines = [line("moonshot-202607", str(i), "output", a) for i, a in enumerate(["5.0400375", "0.3911705"])]
    first = ledger.load("invoices", lines)
    # the same two lines (periods, amounts, currency in another case) under the id a billing export gives them
    again = [
        line("moonshot-costs-2026-07", f"2026-07-01T00:00/{i}", "output", a) | {"currency": "usd"}
        for i, a in enumerate(["5.0400375", "0.3911705"])
    ]
    res = ledger.load("invoices", again)
    assert res.status == "rejected", res
    assert "moonshot-costs-2026-07" in res.message and "moonshot-202607" in res.message
    assert first.path in res.message and "duplicates_wanted" in res.message
    ledger.build(*READS)
    # counted once: 5.0400375 + 0.3911705 = 5.431208
    assert reconciliation(ledger)["2026-07"]["invoiced_total_usd"] == Decimal("5.431208")


def test_the_same_lines_under_the_same_id_with_new_line_ids_are_a_copy_too(ledger):
    ledger.load("invoices", [line("inv-7", "1", "output", "7.00")])
    res = ledger.load("invoices", [line("inv-7", "a", "output", "7.00")])
    assert res.status == "rejected" and "same invoice" in res.message


def test_a_duplicate_listed_as_wanted_loads(ledger):
    from dataclasses import replace

    from pipeline.ingest.files import IngestOptions, ingest_file

    ledger.load("invoices", [line("cn-1", "1", "credit", "-100.00")])
    path = ledger.write("invoices", [line("cn-2", "1", "credit", "-100.00")])
    options = replace(IngestOptions(), invoice_duplicates_wanted=("cn-2",))
    assert ingest_file(ledger.con, "invoices", path, ledger.store, options=options).status == "loaded"
    ledger.build(*READS)
    # two real credit notes of $100 each: -200.00
    assert reconciliation(ledger)["2026-07"]["credits_usd"] == Decimal("-200.00")
