"""The API's run-rate (docs/definitions.md): invoiced usage, plus the credits that recur every month and the tax the
team does not recover; one-off credits and recovered tax are left out, and the bridge from the cash view steps over
them. Every expected figure is worked by hand in the comments.

Moonshot bills July (invoice m-07) and August (m-08): each $100 of output, a $10 credit and $5 of tax. One API task
each month, accepted at its one attempt, logged at $1.35 (BIG: 300,000 cache-miss input + 30,000 output tokens).
"""

from __future__ import annotations

import pytest

from pipeline.serve.report import query
from tests.conftest import PRICE_MOONSHOT, request
from tests.models.test_break_even import BIG, accepted
from tests.models.test_cost_classes_and_saving import moonshot_line

# the models these tests read, each built with what it reads (a build of every model is the nightly's)
READS = ("+marts.monthly_break_even",)


def _month(m: str) -> list[dict]:
    start, end = f"2026-{m}-01", ("2026-08-01" if m == "07" else "2026-09-01")
    period = {"invoice_id": f"m-{m}", "period_start": start, "period_end": end}
    return [
        moonshot_line(f"{m}-out", "100", **period),
        moonshot_line(f"{m}-credit", "-10", line_type="credit", **period),
        moonshot_line(f"{m}-tax", "5", line_type="tax", **period),
    ]


def _load(ledger) -> None:
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("invoices", _month("07") + _month("08"))
    ledger.load(
        "requests",
        [request("a7", "t7", "2026-07-02T10:00:00Z", **BIG), request("a8", "t8", "2026-08-02T10:00:00Z", **BIG)],
    )
    ledger.load("outcomes", accepted("t7") + accepted("t8", at="2026-08-20T00:00:00Z"))


def _months(ledger) -> dict[str, dict]:
    return {
        str(r["month"]): r
        for r in ledger.rows(
            "SELECT month, api_run_rate_usd, api_credits_usd, api_tax_usd FROM marts.monthly_break_even"
        )
    }


@pytest.mark.slow
def test_credits_that_recur_are_part_of_the_run_rate_and_recovered_tax_is_not(ledger):
    _load(ledger)
    ledger.build(min_tasks_for_factor=1)  # every model: the report reads them all
    got = _months(ledger)
    # July: the first credit is one-off (no credit the month before): run-rate $100, $10 and $5 left out
    july, august = got["2026-07-01"], got["2026-08-01"]
    assert (july["api_run_rate_usd"], july["api_credits_usd"], july["api_tax_usd"]) == (100, -10, 5)
    # August: Moonshot credited July too, so the credit recurs: $100 - $10 = $90; the tax is recovered (the default)
    assert (august["api_run_rate_usd"], august["api_credits_usd"], august["api_tax_usd"]) == (90, 0, 5)
    # the bridge: the cash view ($100 - $10 + $5 = $95) less what the run-rate leaves out ($5 of tax) is the month
    # as run ($90: no cluster, no review)
    steps = {r["step"]: r for r in query(ledger.con, "cost_bridge", {"month": "2026-08-01"})}
    assert (steps["cash"]["total_usd"], steps["tax_and_credits"]["total_usd"]) == (95, 90)


@pytest.mark.slow
def test_tax_the_team_does_not_recover_is_part_of_the_run_rate(ledger):
    _load(ledger)
    ledger.build(*READS, min_tasks_for_factor=1, api_tax_recoverable=False)
    got = _months(ledger)
    # July: $100 + $5 of tax borne = $105, the one-off credit left out; August: $100 - $10 + $5 = $95, nothing left out
    assert [(r["api_run_rate_usd"], r["api_credits_usd"], r["api_tax_usd"]) for r in got.values()] == [
        (105, -10, 0),
        (95, 0, 0),
    ]
