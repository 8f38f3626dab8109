"""Anomalies (marts.daily_anomalies): a day's API spend or cache-hit rate of a provider and team scored against its
trailing 28 days with the modified z-score, (value - median) / (1.4826 x median absolute deviation), and invoice lines
priced at a price the catalogue lacks. The expected scores are recomputed here with Python's statistics.median on
Decimals, independently of the SQL."""

from decimal import ROUND_HALF_UP, Decimal
from statistics import median

import pytest

from tests.conftest import PRICE_MOONSHOT, request

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+marts.daily_anomalies",)

D = Decimal


def _days(tokens_of_day: dict[int, int], team: str) -> list[dict]:
    """One request a day in July (a dict day -> its cache-miss tokens) of the team."""
    return [
        request(f"r{d}-{team}", f"t{d}-{team}", f"2026-07-{d:02d}T10:00:00Z", team=team, cache_miss_input_tokens=tokens)
        for d, tokens in tokens_of_day.items()
    ]


def _robust_score(value: Decimal, history: list[Decimal]) -> Decimal:
    m = median(history)
    mad = median([abs(h - m) for h in history])
    return ((value - m) / (D("1.4826") * mad)).quantize(D("0.01"), ROUND_HALF_UP)


def _alternating(last_day: int) -> dict[int, int]:
    # $3.00 (1,000,000 cache-miss tokens at $3 per million) on odd days, $6.00 (2,000,000) on even days
    return {d: 1_000_000 if d % 2 else 2_000_000 for d in range(1, last_day + 1)}


@pytest.mark.slow
def test_a_planted_spike_is_flagged_with_its_score_and_a_steady_month_is_not(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    spiked = _alternating(28) | {29: 30_000_000}  # July 29: $90.00
    ledger.load("requests", _days(spiked, team="alpha") + _days(_alternating(31), team="steady"))
    ledger.build(*READS)
    rows = ledger.rows("SELECT * FROM marts.daily_anomalies ORDER BY day")
    # steady: every day is $3 or $6; each scored day's history is half of each (or one more of one kind): median
    # 4.5 or 3 or 6, and no day lies 3.5 robust deviations away by $25 or more -> no row
    assert [(str(r["day"]), r["kind"], r["team"]) for r in rows] == [("2026-07-29", "spend_spike", "alpha")]
    spike = rows[0]
    history = [D(3) if d % 2 else D(6) for d in range(1, 29)]
    # 14 x $3 and 14 x $6: median (3 + 6) / 2 = 4.5; every deviation is 1.5: MAD 1.5
    # score (90 - 4.5) / (1.4826 x 1.5) = 85.5 / 2.2239 = 38.4460...
    assert (spike["baseline_median"], spike["baseline_mad"], spike["baseline_days"]) == (D("4.5"), D("1.5"), 28)
    assert spike["score"] == _robust_score(D(90), history) == D("38.45")
    assert (spike["observed"], spike["spend_effect_usd"]) == (D(90), D("85.5"))
    assert spike["cause"] == (
        "moonshot spend of team alpha was 90.00 USD on 2026-07-29, above the median of 4.50 USD over the 28 days "
        "before (robust score 38.45)"
    )


@pytest.mark.slow
def test_days_that_never_varied_flag_any_move_of_the_least_spend_and_a_young_series_is_not_scored(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    flat = {d: 1_000_000 for d in range(1, 21)} | {21: 10_000_000}  # $3.00 a day, then $30.00 on the 21st
    young = {d: 1_000_000 for d in range(1, 10)} | {10: 100_000_000}  # a spike of $300 on its 10th day
    ledger.load("requests", _days(flat, team="flat") + _days(young, team="young"))
    ledger.build(*READS)
    rows = ledger.rows("SELECT team, kind, score, baseline_mad, spend_effect_usd, cause FROM marts.daily_anomalies")
    # flat: MAD 0, so no score; $30 - $3 = $27 >= $25. young: 9 days of history, under the 14 needed -> not scored
    assert [(r["team"], r["kind"], r["score"], r["baseline_mad"], r["spend_effect_usd"]) for r in rows] == [
        ("flat", "spend_spike", None, 0, D(27))
    ]
    assert rows[0]["cause"].endswith("over the 20 days before (those days never varied)")


@pytest.mark.slow
def test_a_cache_hit_drop_that_moved_spend_names_what_it_cost(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    rows = []
    for d in range(1, 30):
        # 10,000,000 input tokens a day: 80 % (odd days) or 90 % (even days) read from the cache; none on July 29
        hit = 0 if d == 29 else (8_000_000 if d % 2 else 9_000_000)
        rows.append(request(f"r{d}", f"t{d}", f"2026-07-{d:02d}T10:00:00Z", team="alpha",
                            cache_hit_input_tokens=hit, cache_miss_input_tokens=10_000_000 - hit))  # fmt: skip
    ledger.load("requests", rows)
    ledger.build(*READS, anomalies_min_usd=D("10"))
    found = {r["kind"]: r for r in ledger.rows("SELECT * FROM marts.daily_anomalies")}
    assert set(found) == {"cache_hit_drop", "spend_spike"}
    drop = found["cache_hit_drop"]
    # rate median (0.8 + 0.9) / 2 = 0.85, MAD 0.05; July 29's rate 0 scores (0 - 0.85) / (1.4826 x 0.05) = -11.47
    # the drop moved 0.85 x 10,000,000 x ($3.00 - $0.30) / 1e6 = 0.85 x 27 = $22.95 of spend
    assert (drop["observed"], drop["baseline_median"], drop["baseline_mad"]) == (0, D("0.85"), D("0.05"))
    assert drop["score"] == _robust_score(D(0), [D("0.8"), D("0.9")] * 14) == D("-11.47")
    assert drop["spend_effect_usd"] == D("22.95")
    assert drop["cause"] == (
        "moonshot cache-hit rate of team alpha fell to 0.0 % on 2026-07-29 from a median of 85.0 % over the 28 days "
        "before; the input read uncached cost 22.95 USD more"
    )
    # the day's spend: 10M x $3 / 1e6 = $30.00 against a median of (8.40 + 5.70) / 2 = 7.05 (80 %: 8M x 0.30 + 2M x 3
    # = $8.40; 90 %: 9M x 0.30 + 1M x 3 = $5.70): $22.95 above it, over the $10 set here
    assert found["spend_spike"]["spend_effect_usd"] == D("22.95")


def _invoice_line(line_id, line_type, price, amount, model="kimi-k3", start="2026-07-01", end="2026-08-01"):
    return {
        "provider": "moonshot", "invoice_id": "inv-7", "line_id": line_id, "period_start": start, "period_end": end,
        "line_type": line_type, "model": model, "quantity": "1000000", "unit_price_per_million": price,
        "amount": amount, "currency": "USD",
    }  # fmt: skip


@pytest.mark.slow
def test_an_invoice_price_the_catalogue_lacks_is_flagged(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])  # kimi-k3: hit 0.30, miss 3.00, output 15.00 per million
    ledger.load("requests", [request("r1", "t1", "2026-07-02T10:00:00Z", cache_miss_input_tokens=1_000_000)])
    ledger.load("invoices", [
        _invoice_line("1", "input_cache_miss", "3.00", "3.00"),  # the catalogue's price: no row
        _invoice_line("2", "output", "16.00", "16.00"),  # 16.00, not 15.00
        _invoice_line("3", "output", "1.00", "1.00", model="kimi-k9"),  # a model the catalogue has no price for
    ])  # fmt: skip
    ledger.build(*READS)
    rows = ledger.rows("SELECT * FROM marts.daily_anomalies ORDER BY subject")
    assert [(r["kind"], r["subject"], r["team"], r["observed"], r["spend_effect_usd"]) for r in rows] == [
        ("price_not_in_catalog", "invoice inv-7 line 2", "(all)", D(16), D(16)),
        ("price_not_in_catalog", "invoice inv-7 line 3", "(all)", D(1), D(1)),
    ]
    assert rows[0]["cause"] == (
        "moonshot invoice inv-7 line 2 bills output of kimi-k3 at 16.000000 USD per million tokens, a price the "
        "catalogue does not have for it in that period"
    )
    assert "the price catalogue has no price for kimi-k9 at moonshot" in rows[1]["cause"]
