"""marts.monthly_forecast: the self-hosted volume's trend (least squares on its log over the last 3 to 6 months) and
the month it reaches break-even. Every expected figure is worked by hand in the comments."""

import datetime as dt
import math

import pytest

from tests.conftest import PRICE_MOONSHOT, request
from tests.test_break_even import BIG, accepted, charge


def _volumes(ledger, per_month: dict[str, int]) -> dict[str, dict]:
    """Self-hosted tasks accepted in each month, each $1.35 at the reference price (no API traffic: C = $1.35, V = 0).
    Each month's on-demand charge is $4,050, so its break-even is $4,050 / $1.35 = 3,000 accepted tasks."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "cluster-charges",
        [charge(m, "on_demand", "4050", f"{m}-01", f"{m[:5]}{int(m[5:]) + 1:02d}-01") for m in per_month],
    )
    rows, tasks = [], []
    for month, n in per_month.items():
        for i in range(n):
            rows.append(request(f"{month}-{i}", f"t{month}-{i}", f"{month}-05T10:00:00Z", route="self_hosted", **BIG))
            tasks.append(f"t{month}-{i}")
    ledger.load("requests", rows)
    ledger.load("outcomes", accepted(*tasks, at="2026-10-20T00:00:00Z"))
    ledger.build()
    return {str(r["month"]): r for r in ledger.rows("SELECT * FROM marts.monthly_forecast")}


def test_a_growing_trend_reaches_break_even(ledger):
    f = _volumes(ledger, {"2026-07": 100, "2026-08": 200, "2026-09": 400})["2026-09-01"]
    # ln volume rises by ln 2 a month exactly: growth +100 %, no residual, so no range
    assert f["months_fitted"] == 3 and f["trend_monthly_growth"] == pytest.approx(1.0)
    # from 400 to 3,000: ln(3,000 / 400) / ln 2 = ln 7.5 / ln 2 = 2.91 -> 3 months after September: December
    assert math.ceil(math.log(7.5) / math.log(2)) == 3
    assert f["forecast_status"] == "projected"
    assert (f["projected_month"], f["projected_month_low"], f["projected_month_high"]) == (dt.date(2026, 12, 1),) * 3


def test_a_flat_or_falling_trend_never_crosses(ledger_factory):
    for counts in ({"2026-07": 100, "2026-08": 100, "2026-09": 100}, {"2026-07": 400, "2026-08": 200, "2026-09": 100}):
        f = _volumes(ledger_factory(), counts)["2026-09-01"]
        assert (f["forecast_status"], f["projected_month"]) == ("not_growing", None), counts


def test_fewer_than_three_months_and_a_slow_trend(ledger):
    got = _volumes(ledger, {"2026-07": 100, "2026-08": 110, "2026-09": 121})
    # August has two months behind it: no forecast
    assert (got["2026-08-01"]["forecast_status"], got["2026-08-01"]["trend_monthly_growth"]) == ("too_few_months", None)
    # +10 % a month from 121 to 3,000: ln(3,000 / 121) / ln 1.1 = 33.7 months: past the 12 months it looks ahead
    assert got["2026-09-01"]["trend_monthly_growth"] == pytest.approx(0.1, abs=1e-9)
    assert (got["2026-09-01"]["forecast_status"], got["2026-09-01"]["projected_month"]) == ("beyond_12_months", None)


def test_a_noisy_trend_has_a_range(ledger):
    """100, 300, 400: ln volumes 4.605, 5.704, 5.991; slope = (5.991 - 4.605) / 2 = 0.693 (= ln 2, the three points'
    least squares over x = 1, 2, 3); the middle point lies 0.405 above the line, so the slope has an error."""
    f = _volumes(ledger, {"2026-07": 100, "2026-08": 300, "2026-09": 400})["2026-09-01"]
    xs, ys = [1, 2, 3], [math.log(100), math.log(300), math.log(400)]
    slope = (ys[2] - ys[0]) / 2
    intercept = sum(ys) / 3 - slope * 2
    residuals = [y - (intercept + slope * x) for x, y in zip(xs, ys)]
    se = math.sqrt(sum(r * r for r in residuals) / 1 / 2)  # n - 2 = 1; sxx = 2
    gap = math.log(3000) - (intercept + slope * 3)
    assert f["trend_monthly_growth"] == pytest.approx(math.exp(slope) - 1)
    months = [math.ceil(gap / s) for s in (slope, slope + se, slope - se)]
    want = [dt.date(2026, 9 + m, 1) if 9 + m <= 12 else dt.date(2027, 9 + m - 12, 1) for m in months]
    assert (f["projected_month"], f["projected_month_low"], f["projected_month_high"]) == tuple(want)
    assert want[1] <= want[0] <= want[2] and want[1] < want[2]


def test_the_report_says_when_the_trend_reaches_break_even(ledger):
    from pipeline.serve.report import plain_report

    _volumes(ledger, {"2026-07": 100, "2026-08": 200, "2026-09": 400})
    text = " ".join(plain_report(ledger.con, "2026-09").split())
    # the growing case above: +100 % a month, December, no range (a perfect fit)
    want = "If the cluster's volume keeps its trend of the last 3 months (+100% a month), it reaches break-even in "
    assert want + "2026-12." in text
