"""marts.monthly_forecast: the self-hosted volume's trend (least squares on its log over the last 4 to 6 months), the
month it reaches break-even, and the 95 % prediction interval's earliest and latest months. Every expected figure is
worked by hand in the comments, or recomputed here in plain Python with Student's t from scipy (an oracle that shares
nothing with the SQL)."""

import datetime as dt
import math

import pytest
from scipy import stats

from tests.conftest import PRICE_MOONSHOT, request
from tests.models.test_break_even import BIG, accepted, charge

# the models these tests read, each built with what it reads (a build of every model is the nightly's)
READS = ("+marts.monthly_forecast",)


def _next(month: str) -> str:
    y, m = int(month[:4]), int(month[5:])
    return f"{y + m // 12}-{m % 12 + 1:02d}"


def _volumes(ledger, per_month: dict[str, int]) -> dict[str, dict]:
    """Self-hosted tasks accepted in each month, each $1.35 at the reference price (no API traffic: C = $1.35, V = 0).
    Each month's on-demand charge is $4,050, so its break-even is $4,050 / $1.35 = 3,000 accepted tasks."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("cluster-charges", [charge(m, "on_demand", "4050", f"{m}-01", f"{_next(m)}-01") for m in per_month])
    rows, tasks = [], []
    for month, n in per_month.items():
        for i in range(n):
            rows.append(request(f"{month}-{i}", f"t{month}-{i}", f"{month}-05T10:00:00Z", route="self_hosted", **BIG))
            tasks.append(f"t{month}-{i}")
    ledger.load("requests", rows)
    ledger.load("outcomes", accepted(*tasks, at="2026-11-20T00:00:00Z"))
    ledger.build(*READS)
    return {str(r["month"]): r for r in ledger.rows("SELECT * FROM marts.monthly_forecast")}


def _month(start: dt.date, ahead: int) -> dt.date:
    m = start.month - 1 + ahead
    return dt.date(start.year + m // 12, m % 12 + 1, 1)


def oracle(volumes: list[int], break_even: float, last: dt.date) -> dict:
    """The fit, its growth interval and the first months (0 .. 12 ahead) whose fitted log volume, and whose
    prediction interval's upper and lower bounds, reach log break-even: textbook formulas in plain Python."""
    n = len(volumes)
    xs, ys = list(range(1, n + 1)), [math.log(v) for v in volumes]
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    intercept = my - slope * mx
    s = math.sqrt(sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys)) / (n - 2))
    t = stats.t.ppf(0.975, n - 2)
    target = math.log(break_even)

    def first(bound: int) -> dt.date | None:
        for h in range(13):
            x0 = n + h
            half = t * s * math.sqrt(1 + 1 / n + (x0 - mx) ** 2 / sxx)
            if intercept + slope * x0 + bound * half >= target:
                return _month(last, h)
        return None

    se = s / math.sqrt(sxx)
    return {
        "growth": (math.exp(slope) - 1, math.exp(slope - t * se) - 1, math.exp(slope + t * se) - 1),
        "projected": first(0),
        "earliest": first(1),
        "latest": first(-1),
    }


@pytest.mark.slow
def test_five_noisy_months_against_the_oracle(ledger):
    counts = {"2026-06": 400, "2026-07": 700, "2026-08": 650, "2026-09": 1300, "2026-10": 1500}
    f = _volumes(ledger, counts)["2026-10-01"]
    want = oracle(list(counts.values()), 3000, dt.date(2026, 10, 1))
    assert f["months_fitted"] == 5
    got = (f["trend_monthly_growth"], f["trend_monthly_growth_low"], f["trend_monthly_growth_high"])
    assert got == pytest.approx(want["growth"], rel=1e-9)
    assert f["forecast_status"] == "projected"
    assert (f["projected_month"], f["earliest_month"], f["latest_month"]) == (
        want["projected"],
        want["earliest"],
        want["latest"],
    )
    # a noisy trend has a range: the soonest month comes before the projected one, the latest after it (or never
    # within 12 months)
    assert want["earliest"] < want["projected"] and (want["latest"] is None or want["latest"] > want["projected"])


@pytest.mark.slow
def test_a_perfect_trend_reaches_break_even_with_no_range(ledger):
    f = _volumes(ledger, {"2026-06": 50, "2026-07": 100, "2026-08": 200, "2026-09": 400})["2026-09-01"]
    # ln volume rises by ln 2 a month exactly: growth +100 %, no residual, so the interval has no width
    assert f["months_fitted"] == 4 and f["trend_monthly_growth"] == pytest.approx(1.0)
    assert f["trend_monthly_growth_low"] == pytest.approx(1.0) and f["trend_monthly_growth_high"] == pytest.approx(1.0)
    # from 400 to 3,000: ln(3,000 / 400) / ln 2 = ln 7.5 / ln 2 = 2.91 -> 3 months after September: December
    assert math.ceil(math.log(7.5) / math.log(2)) == 3
    assert f["forecast_status"] == "projected"
    assert (f["projected_month"], f["earliest_month"], f["latest_month"]) == (dt.date(2026, 12, 1),) * 3


@pytest.mark.slow
def test_three_months_are_too_few(ledger):
    got = _volumes(ledger, {"2026-07": 100, "2026-08": 200, "2026-09": 400})
    # three points leave one degree of freedom: no honest range, no forecast
    for month in ("2026-08-01", "2026-09-01"):
        assert (got[month]["forecast_status"], got[month]["trend_monthly_growth"]) == ("too_few_months", None)
        assert got[month]["projected_month"] is None and got[month]["earliest_month"] is None


@pytest.mark.slow
def test_a_flat_or_falling_trend_never_crosses(ledger_factory):
    for counts in (
        {"2026-06": 100, "2026-07": 100, "2026-08": 100, "2026-09": 100},
        {"2026-06": 800, "2026-07": 400, "2026-08": 200, "2026-09": 100},
    ):
        f = _volumes(ledger_factory(), counts)["2026-09-01"]
        assert (f["forecast_status"], f["projected_month"], f["latest_month"]) == ("not_growing", None, None), counts


@pytest.mark.slow
def test_a_slow_trend_is_beyond_twelve_months(ledger):
    f = _volumes(ledger, {"2026-06": 100, "2026-07": 110, "2026-08": 121, "2026-09": 133})["2026-09-01"]
    # about +10 % a month from 133 to 3,000: ln(3,000 / 133) / ln 1.1 = 32.7 months, past the 12 it looks ahead
    assert f["trend_monthly_growth"] == pytest.approx(0.1, abs=0.002)
    assert (f["forecast_status"], f["projected_month"]) == ("beyond_12_months", None)


@pytest.mark.slow
def test_the_report_says_if_the_trend_continues(ledger):
    _volumes(ledger, {"2026-06": 50, "2026-07": 100, "2026-08": 200, "2026-09": 400})
    text = ledger.report_text("2026-09")
    # the perfect case above: +100 % a month, December, an interval of no width
    want = (
        "If the trend continues (+100% a month over the last 4 months; 95 % interval +100% to +100%), the cluster's "
        "volume reaches break-even in 2026-12."
    )
    assert want in text
