"""The break-even curve (docs/decisions.md): what an accepted task would cost on the cluster at each token utilisation,
beside the API's cost, with today's utilisation, the break-even one and the busiest hour's ceiling. Every expected
figure is worked by hand in the comments."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tests.models.test_capacity_and_idle import _one_hour_month

# the model these tests read, built with what it reads
READS = ("+marts.monthly_break_even_curve",)


@pytest.mark.slow
def test_the_curve_at_fifty_percent_and_its_marks(ledger):
    # one node all July ($744 reserved) at 2,000 tokens/s: capacity 744 h x 2,000 x 3,600 = 5,356,800,000 tokens;
    # operating costs $2,976: F = $3,720. Ten accepted tasks of 360,000 tokens each, all in one hour, $1.80 each at
    # the reference API: C = $1.80, V = 0
    ledger.load("opex", [{"month": "2026-07", "category": "platform_engineering", "amount": "2976", "currency": "USD"}])
    _one_hour_month(ledger, "2000", reads=READS)
    rows = ledger.rows("SELECT * FROM marts.monthly_break_even_curve ORDER BY token_utilisation")
    assert [r["token_utilisation"] for r in rows] == [Decimal(i) / 20 for i in range(1, 21)]
    at = {r["token_utilisation"]: r for r in rows}
    half = at[Decimal("0.5")]
    # at 50 %: 0.5 x 5,356,800,000 / 360,000 = 7,440 tasks; $3,720 / 7,440 + $0 = $0.50 a task, below the API's $1.80
    assert half["accepted_tasks"] == 7440
    assert half["self_hosted_cost_per_accepted_task_usd"] == Decimal("0.5")
    assert half["api_cost_per_accepted_task_usd"] == Decimal("1.8") and half["self_hosting_cheaper"] is True
    # at 5 %: 744 tasks, $5.00; at 10 %: 1,488 tasks, $2.50, both above $1.80; at 15 %: 2,232 tasks, $1.666666666667
    assert at[Decimal("0.05")]["self_hosted_cost_per_accepted_task_usd"] == 5
    assert at[Decimal("0.1")]["self_hosted_cost_per_accepted_task_usd"] == Decimal("2.5")
    assert at[Decimal("0.15")]["self_hosted_cost_per_accepted_task_usd"] == Decimal("1.666666666667")
    assert [at[Decimal(u)]["self_hosting_cheaper"] for u in ("0.05", "0.1", "0.15")] == [False, False, True]
    # today: 3,600,000 / 5,356,800,000 = 1 / 1,488; break-even $3,720 / $1.80 = 2,066.67 tasks x 360,000 /
    # 5,356,800,000 = 5 / 36 = 13.9 %; the ceiling: 3,600,000 served / (1,000 tokens/s x 3,600 x 744 h) = 1 / 744
    assert half["today_token_utilisation"] == pytest.approx(1 / 1488, rel=1e-12)
    assert half["break_even_token_utilisation"] == pytest.approx(5 / 36, rel=1e-9)
    assert half["ceiling_token_utilisation"] == pytest.approx(1 / 744, rel=1e-12)
    # the report says it in words: today a task costs $3,720 / 10 = $372.00
    text = ledger.report_text("2026-07")
    assert (
        "At today's 0.1% of its token capacity, an accepted task costs $372.00 on the cluster against $1.80 on the "
        "API; the cluster breaks even at 13.9%, and a cluster sized for its busiest hour can use at most 0.1% of its "
        "capacity: break-even lies beyond what this traffic's profile allows." in text
    )


@pytest.mark.slow
def test_no_curve_without_a_capacity(ledger):
    # the same month with a sweep of no point within a 1 ms SLO: no capacity, no curve (and no traceback)
    _one_hour_month(ledger, "1000", slo_ms=1, reads=READS)
    assert ledger.rows("SELECT * FROM marts.monthly_break_even_curve") == []
