"""How sure a verdict is: each named assumption alone, and all of them together (the joint range), with the saving at
each end. docs/definitions.md has the definitions; every figure is worked by hand in the comments.

The month: an owned server bought for $360 with a 36-month life ($10 a month of amortisation), operating costs of $11,
20 self-hosted tasks accepted, each $1.35 at the reference price. No API traffic: W is assumed 1 and U is 1, so
C = $1.35 and V = $0. F = $21; break-even = $21 / $1.35 = 15.56 < 20: self-hosting is cheaper, saving
$1.35 x 20 - $21 = $6.
"""

from __future__ import annotations

import pytest
from decimal import ROUND_HALF_UP, Decimal

from tests.conftest import PRICE_MOONSHOT, request
from tests.models.test_break_even import BIG, accepted, month
from tests.models.test_cost_classes_and_saving import SERVER

# the models these tests read, each built with what it reads (a build of every model is the nightly's)
READS = ("+marts.monthly_verdict_sensitivity",)


def q12(x: Decimal) -> Decimal:
    return x.quantize(Decimal("1e-12"), rounding=ROUND_HALF_UP)


def _month(ledger, review_minutes: int | None = None, **settings) -> dict:
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("hardware", [SERVER])
    ledger.load("opex", [{"month": "2026-07", "category": "platform_engineering", "amount": "11", "currency": "USD"}])
    ledger.load(
        "requests",
        [request(f"s{i}", f"t{i}", "2026-07-02T10:00:00Z", route="self_hosted", **BIG) for i in range(20)],
    )
    extra = {} if review_minutes is None else {"review_minutes": review_minutes}
    ledger.load("outcomes", accepted(*[f"t{i}" for i in range(20)], **extra))
    ledger.build(*READS, **settings)
    return month(ledger)


@pytest.mark.slow
def test_the_joint_range_turns_a_verdict_no_single_assumption_turns(ledger):
    be = _month(ledger)
    assert be["verdict"] == "self_hosting_cheaper" and be["saving_usd"] == 6
    rows = {r["assumption"]: r for r in ledger.rows("SELECT * FROM marts.monthly_verdict_sensitivity")}
    assert set(rows) == {"hardware_life", "operating_cost", "joint"}
    # hardware life x 2/3: amortisation x 3/2 = +$5 -> F $26 -> 19.26 < 20, still cheaper; saving $27 - $26 = $1
    life = rows["hardware_life"]
    assert life["break_even_at_low_value"] == q12(Decimal(26) / Decimal("1.35"))
    assert (life["saving_at_low_value_usd"], life["flips"]) == (1, False)
    # operating cost +20 %: +$2.20 -> F $23.20 -> 17.19, still cheaper; -20 %: F $18.80 -> 13.93
    ops = rows["operating_cost"]
    assert (ops["value_low"], ops["value_high"]) == (0.8, 1.2)
    assert ops["break_even_at_high_value"] == q12(Decimal("23.2") / Decimal("1.35"))
    assert ops["break_even_at_low_value"] == q12(Decimal("18.8") / Decimal("1.35"))
    assert ops["flips"] is False
    # together, the ends that raise break-even: F = $21 + $5 + $2.20 = $28.20 -> 20.89 > 20: the API is cheaper;
    # the ends that lower it: life x 4/3 (amortisation x 3/4 = -$2.50) and opex -20 % (-$2.20): F $16.30 -> 12.07
    assert be["break_even_range_high"] == q12(Decimal("28.2") / Decimal("1.35"))
    assert be["break_even_range_low"] == q12(Decimal("16.3") / Decimal("1.35"))
    # the saving's range: $27 - $28.20 = -$1.20 and $27 - $16.30 = $10.70
    assert (be["saving_range_low_usd"], be["saving_range_high_usd"]) == (Decimal("-1.2"), Decimal("10.7"))
    assert (be["verdict_confidence"], be["verdict_flipped_by"]) == ("marginal", [])
    # the range runs from a cost to a saving, but no single assumption turns it: stated as the verdict it is
    assert be["verdict_stated"] == "self_hosting_cheaper"
    joint = rows["joint"]
    assert (joint["verdict_at_low_value"], joint["verdict_at_high_value"], joint["flips"]) == (
        "self_hosting_cheaper",
        "api_cheaper",
        True,
    )


@pytest.mark.slow
def test_a_marginal_verdict_never_shows_a_bare_saving(ledger):
    _month(ledger)
    text = ledger.report_text("2026-07")
    # $6 saved, between -$1.20 and +$10.70 -> whole dollars: -$1 and +$11
    assert "Self-hosting saved $6 this month (between -$1 and +$11 under the named assumptions taken together)" in text
    assert "a marginal verdict" in text


@pytest.mark.slow
def test_a_single_assumption_that_turns_the_verdict_makes_it_fragile(ledger):
    # operating costs moved by 60 %: +$6.60 -> F $27.60 -> 20.44 > 20: that assumption alone turns it
    be = _month(ledger, robustness_operating_cost_share=Decimal("0.6"))
    assert (be["verdict_confidence"], be["verdict_flipped_by"]) == ("fragile", ["operating_cost"])
    # the joint range: F $21 + $5 (life x 2/3) + $6.60 = $32.60, saving $27 - $32.60 = -$5.60; F $21 - $2.50 - $6.60
    # = $11.90, saving $15.10: from a cost to a saving, and one assumption alone turns it: too close to call
    assert (be["saving_range_low_usd"], be["saving_range_high_usd"]) == (Decimal("-5.6"), Decimal("15.1"))
    assert be["verdict_stated"] == "too_close_to_call"
    text = ledger.report_text("2026-07")
    assert "a fragile verdict. It turns with operating costs 60 % lower or higher." in text


@pytest.mark.slow
def test_review_that_both_routes_pay_alike_cancels(ledger):
    # $60 an hour, one minute per task: $1 of review per accepted task. The API accepted nothing, so C's review part
    # is the cluster's own: C = $1.35 + $1, V = $1; at -20 % / +20 % both move by $0.20: C - V stays $1.35
    be = _month(ledger, review_minutes=1, review_rate_per_hour_usd=Decimal("60"))
    row = ledger.one("SELECT * FROM marts.monthly_verdict_sensitivity WHERE assumption = 'review_rate'")
    assert row["break_even_at_low_value"] == row["break_even_at_high_value"] == be["break_even_accepted_tasks"]
    assert row["break_even_at_low_value"] == q12(Decimal(21) / Decimal("1.35"))
