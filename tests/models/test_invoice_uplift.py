"""The invoice uplift U measures price, never unlogged volume, and each other provider's alternative is priced at its
own waste factor W and uplift U (docs/definitions.md).

Every expected figure is worked by hand in the comments. Prices: Moonshot (the reference) $0.30 hit / $3.00 miss /
$15.00 output per 1M; CometAPI $2.40 input / $12.00 output. A task is 300,000 cache-miss input and 30,000 output
tokens: $1.35 at Moonshot, $0.72 + $0.36 = $1.08 at CometAPI.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.conftest import PRICE_MOONSHOT, request
from tests.models.test_break_even import BIG, accepted, charge, month
from tests.models.test_cost_classes_and_saving import moonshot_line

# the models these tests read, each built with what it reads (a build of every model is the nightly's)
READS = ("+intermediate.int_api_uplift_monthly", "+marts.monthly_break_even")

PRICE_COMETAPI = {
    **PRICE_MOONSHOT,
    "provider": "cometapi",
    "cache_hit_input_per_million": "2.40",
    "cache_miss_input_per_million": "2.40",
    "output_per_million": "12.00",
}


def _line(line_id: str, line_type: str, amount: str, quantity: int | None = None, unit: str | None = None) -> dict:
    stated = {} if quantity is None else {"quantity": quantity, "unit_price_per_million": unit}
    return moonshot_line(line_id, amount, line_type=line_type, model="kimi-k3", **stated)


def _usage(token_type: str, quantity: int) -> dict:
    return {
        "provider": "moonshot",
        "bucket_start": "2026-07-01T00:00:00Z",
        "bucket_end": "2026-08-01T00:00:00Z",
        "line_id": token_type,
        "model": "kimi-k3",
        "token_type": token_type,
        "quantity": quantity,
    }


def _july(ledger) -> None:
    """July's work: 2 accepted Moonshot tasks on the API, 3 on the cluster (on-demand $6), at Moonshot's prices."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge("od", "on_demand", "6")])
    ledger.load(
        "requests",
        [request(f"a{i}", f"t{i}", "2026-07-01T10:00:00Z", **BIG) for i in (1, 2)]
        + [request(f"s{i}", f"sh{i}", "2026-07-02T10:00:00Z", route="self_hosted", **BIG) for i in (1, 2, 3)],
    )
    ledger.load("outcomes", accepted("t1", "t2", "sh1", "sh2", "sh3"))


def _billed_twice(ledger, quantities: bool, export: bool) -> dict:
    """July. API: 2 Moonshot tasks, one accepted attempt each ($1.35): $2.70 metered, 600,000 miss + 60,000 output
    tokens logged. Moonshot bills twice the logged tokens at its list prices: 1,200,000 x $3.00 / 1e6 = $3.60 of
    input and 120,000 x $15.00 / 1e6 = $1.80 of output, $5.40 (its lines state the quantities when ``quantities``; a
    usage export counting twice the logged tokens and requests when ``export``). Self-hosted: 3 accepted tasks
    ($1.35 each at the reference price); on-demand $6 (F). No review."""
    _july(ledger)
    if quantities:
        lines = [_line("1", "input_cache_miss", "3.60", 1_200_000, "3.00"), _line("2", "output", "1.80", 120_000, "15")]
    else:
        lines = [_line("1", "input_cache_miss", "3.60"), _line("2", "output", "1.80")]
    ledger.load("invoices", lines)
    if export:
        ledger.load("usage", [_usage("input_cache_miss", 1_200_000), _usage("output", 120_000), _usage("requests", 4)])
    ledger.build(*READS, min_tasks_for_factor=1)
    return month(ledger)


def _uplift(ledger) -> dict:
    return ledger.one(
        "SELECT uplift_basis, api_invoice_uplift, naive_uplift FROM intermediate.int_api_uplift_monthly "
        "WHERE provider = 'moonshot'"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("quantities", "export", "basis"), [(True, False, "invoice_quantities"), (False, True, "usage_export")]
)
def test_tokens_billed_but_not_logged_are_volume_not_price(ledger, quantities, export, basis):
    be = _billed_twice(ledger, quantities=quantities, export=export)
    # the bill's quantities at list: 1,200,000 x $3.00 / 1e6 + 120,000 x $15.00 / 1e6 = $5.40 = what it bills: U = 1
    # (the naive invoiced / metered ratio would be $5.40 / $2.70 = 2)
    assert _uplift(ledger) == {"uplift_basis": basis, "api_invoice_uplift": 1, "naive_uplift": 2}
    # C = $1.35 x W 1 x U 1 = $1.35; break-even $6 / $1.35 = 4.44 tasks > 3: the API is cheaper;
    # saving = $1.35 x 3 - $6 = -$1.95
    assert be["api_invoice_uplift"] == 1 and be["api_cost_per_accepted_task_usd"] == Decimal("1.35")
    assert (be["verdict"], be["saving_usd"]) == ("api_cheaper", Decimal("-1.95"))
    assert "invoice_volume_unknown" not in be["verdict_caveats"]
    assert "invoice_uplift" not in {s["assumption"] for s in be["verdict_sensitivity"]}


@pytest.mark.slow
def test_an_invoice_that_cannot_tell_price_from_volume_says_so_and_tests_both(ledger):
    be = _billed_twice(ledger, quantities=False, export=False)
    # no quantities, no export: U = $5.40 / $2.70 = 2, on the logged basis
    assert _uplift(ledger) == {"uplift_basis": "logged", "api_invoice_uplift": 2, "naive_uplift": 2}
    # C = $1.35 x 2 = $2.70; break-even $6 / $2.70 = 2.22 <= 3: self-hosting cheaper, saving $2.70 x 3 - $6 = $2.10
    assert (be["verdict"], be["saving_usd"]) == ("self_hosting_cheaper", Decimal("2.10"))
    # $5.40 against $2.70 metered does not reconcile; U is then a named assumption, at 1 and at 2
    assert {"invoice_unreconciled", "invoice_volume_unknown"} <= set(be["verdict_caveats"])
    u = next(s for s in be["verdict_sensitivity"] if s["assumption"] == "invoice_uplift")
    assert (u["value_low"], u["value_high"]) == (1, 2)
    # at U = 1: C = $1.35, saving $4.05 - $6 = -$1.95, the API cheaper: the verdict turns on it
    assert (u["saving_at_low_value_usd"], u["verdict_at_low_value"]) == (Decimal("-1.95"), "api_cheaper")
    assert (u["saving_at_high_value_usd"], u["verdict_at_high_value"]) == (Decimal("2.10"), "self_hosting_cheaper")
    assert be["verdict_flipped_by"] == ["invoice_uplift"] and be["verdict_confidence"] == "fragile"
    # the on-demand charge buys compute time: +/- 20 % moves F to $7.20 / $4.80. Together with U at 1, the saving is
    # $4.05 - $7.20 = -$3.15; at U = 2 with F at $4.80, $8.10 - $4.80 = $3.30: a range from a cost to a saving
    assert (be["saving_range_low_usd"], be["saving_range_high_usd"]) == (Decimal("-3.15"), Decimal("3.30"))
    text = ledger.report_text("2026-07")
    assert (
        "Too close to call in 2026-07: self-hosting saved $2 against the API, but under the named assumptions the "
        "figure runs from -$3 to +$3. What would settle it: the invoice's token quantities or the provider's usage "
        "export."
    ) in text


@pytest.mark.slow
def test_another_provider_is_priced_at_its_own_waste_factor(ledger):
    """July. Moonshot (the reference) takes one attempt a task: 2 tasks, W = 1. CometAPI takes three: 2 tasks, each
    2 failed attempts and the accepted one, all of the same tokens: W = 3 x $1.08 / $1.08 = 3. The cluster: 3
    accepted tasks, on-demand $6."""
    ledger.load("prices", [PRICE_MOONSHOT, PRICE_COMETAPI])
    ledger.load("cluster-charges", [charge("od", "on_demand", "6")])
    comet = [
        request(f"c{t}-{a}", f"ct{t}", "2026-07-01T10:00:00Z", provider="cometapi", attempt=a,
                status="ok" if a == 3 else "error", **BIG)
        for t in (1, 2)
        for a in (1, 2, 3)
    ]  # fmt: skip
    ledger.load(
        "requests",
        [request(f"a{i}", f"t{i}", "2026-07-01T10:00:00Z", **BIG) for i in (1, 2)]
        + comet
        + [request(f"s{i}", f"sh{i}", "2026-07-02T10:00:00Z", route="self_hosted", **BIG) for i in (1, 2, 3)],
    )
    ledger.load("outcomes", accepted("t1", "t2", "ct1", "ct2", "sh1", "sh2", "sh3"))
    ledger.build(min_tasks_for_factor=1)  # every model: the report reads them all
    be = month(ledger)
    # C = $1.35 x 1 x 1 = $1.35; saving $4.05 - $6 = -$1.95: the API cheaper
    assert (be["api_waste_factor"], be["verdict"], be["saving_usd"]) == (1, "api_cheaper", Decimal("-1.95"))
    alt = next(s for s in be["verdict_sensitivity"] if s["assumption"] == "reference_provider:cometapi")
    # the cluster's 900,000 miss + 90,000 output tokens: $2.16 + $1.08 = $3.24 at CometAPI, $2.70 + $1.35 = $4.05 at
    # Moonshot: 0.8 of the price, x CometAPI's W 3 / Moonshot's 1 = 2.4
    assert alt["value_low"] == alt["value_high"] == pytest.approx(2.4)
    # C = $1.35 x 2.4 = $3.24; saving $3.24 x 3 - $6 = $3.72: at its own retry rate the alternative turns the verdict
    # (at Moonshot's W it would be $1.08 a task and -$2.76: no turn)
    assert (alt["saving_at_low_value_usd"], alt["verdict_at_low_value"]) == (Decimal("3.72"), "self_hosting_cheaper")
    assert "reference_provider:cometapi" in be["verdict_flipped_by"]


@pytest.mark.slow
def test_an_invoice_of_one_untyped_total_never_makes_the_api_free(ledger):
    """July, as ``_billed_twice`` but the invoice is one line of type 'other', $5.40, the total typed in by hand: it
    states no usage, so it cannot tell fees from tokens. U was $0 usage / $2.70 metered = 0, an API at $0.0000 a task
    and "self-hosting never breaks even"; U is 1 (caveat invoice_untyped)."""
    _july(ledger)
    ledger.load("invoices", [_line("1", "other", "5.40")])
    ledger.build(*READS, "+marts.monthly_reconciliation", min_tasks_for_factor=1)
    be = month(ledger)
    assert _uplift(ledger) == {"uplift_basis": "untyped", "api_invoice_uplift": 1, "naive_uplift": None}
    # C = $1.35 x W 1 x U 1 = $1.35: break-even $6 / $1.35 = 4.44 tasks > 3 accepted: the API is cheaper, saving
    # $1.35 x 3 - $6 = -$1.95 (with U = 0: C = $0 and no volume ever broke even)
    assert be["api_cost_per_accepted_task_usd"] == Decimal("1.35")
    assert (be["verdict"], be["saving_usd"]) == ("api_cheaper", Decimal("-1.95"))
    assert "invoice_untyped" in be["verdict_caveats"] and "invoice_volume_unknown" not in be["verdict_caveats"]
    # the reconciliation compares the total as before: $5.40 invoiced against $2.70 metered
    recon = ledger.one("SELECT invoiced_usd, metered_usd FROM marts.monthly_reconciliation WHERE provider = 'moonshot'")
    assert (recon["invoiced_usd"], recon["metered_usd"]) == (Decimal("5.40"), Decimal("2.70"))
