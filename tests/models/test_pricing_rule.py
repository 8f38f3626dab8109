"""docs/definitions.md's pricing rule: service tiers, long-context tiers (min_input_tokens), cache writes at
their own rates (default: the cache-miss price), web searches per call, other currencies. Hand-worked cases,
then a property: the metered cost of generated requests equals a Python Decimal recomputation of the rule."""

from __future__ import annotations

import pytest
import itertools
from decimal import ROUND_HALF_UP, Decimal

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import PRICE_MOONSHOT, ROOT, request

#: the models these tests read, each with what it reads: the build runs only those
READS = (
    "+intermediate.int_requests_monthly",
    "+intermediate.int_requests_priced",
    "+marts.monthly_route_cost",
    "+staging.stg_ledger__prices",
)

# An Anthropic-like price list (USD per 1M tokens; per call for web search): writes at 1.25x (5 min) and 2x (1 h)
# the input price, batch at half price, a long-context level from 200,000 input tokens.
STANDARD = {
    **PRICE_MOONSHOT,
    "cache_write_5m_per_million": "3.75",
    "cache_write_1h_per_million": "6.00",
    "web_search_per_call": "0.01",
}
BATCH = {
    **PRICE_MOONSHOT,
    "service_tier": "batch",
    "cache_hit_input_per_million": "0.15",
    "cache_miss_input_per_million": "1.50",
    "output_per_million": "7.50",
}
LONG = {
    **PRICE_MOONSHOT,
    "min_input_tokens": "200000",
    "cache_hit_input_per_million": "0.60",
    "cache_miss_input_per_million": "6.00",
    "output_per_million": "22.50",
}


def costs(ledger) -> dict[str, Decimal | None]:
    return {
        r["request_id"]: r["metered_cost_usd"]
        for r in ledger.rows("SELECT request_id, metered_cost_usd FROM intermediate.int_requests_priced")
    }


@pytest.mark.slow
def test_cache_writes_and_web_searches_at_their_own_rates(ledger):
    ledger.load("prices", [STANDARD])
    ledger.load(
        "requests",
        [
            # 1,000 hit x 0.30 = 0.0003; 2,000 miss x 3.00 = 0.006; 4,000 5-min writes x 3.75 = 0.015;
            # 1,000 1-hour writes x 6.00 = 0.006; 500 output x 15.00 = 0.0075 (all / 1e6); 3 searches x 0.01 = 0.03
            # -> 0.0003 + 0.006 + 0.015 + 0.006 + 0.0075 + 0.03 = 0.0648
            request(
                "w",
                "t1",
                "2026-07-01T10:00:00Z",
                cache_hit_input_tokens=1000,
                cache_miss_input_tokens=2000,
                cache_write_5m_input_tokens=4000,
                cache_write_1h_input_tokens=1000,
                output_tokens=500,
                web_search_calls=3,
            ),
        ],
    )
    ledger.build(*READS)
    assert costs(ledger) == {"w": Decimal("0.0648")}


@pytest.mark.slow
def test_cache_writes_default_to_the_cache_miss_price_and_old_files_read_as_zero(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])  # no write prices, no web search price
    ledger.load(
        "requests",
        [
            # 4,000 5-min writes x 3.00 = 0.012 and 1,000 1-hour writes x 3.00 = 0.003 (the miss price);
            # 2 searches x 0 = 0 -> 0.015
            request(
                "w",
                "t1",
                "2026-07-01T10:00:00Z",
                cache_write_5m_input_tokens=4000,
                cache_write_1h_input_tokens=1000,
                web_search_calls=2,
            ),
            # a file without the new columns: they read as 0, the tier as standard: 1,000 miss x 3.00 / 1e6 = 0.003
        ],
    )
    ledger.load("requests", [request("old", "t2", "2026-07-01T11:00:00Z", cache_miss_input_tokens=1000)])
    ledger.build(*READS)
    assert costs(ledger) == {"w": Decimal("0.015"), "old": Decimal("0.003")}
    assert ledger.one("SELECT service_tier, web_search_calls FROM raw.requests WHERE request_id = 'old'") == {
        "service_tier": "standard",
        "web_search_calls": 0,
    }


@pytest.mark.slow
def test_service_tiers_are_priced_by_their_own_rows_and_a_tier_without_a_price_is_unpriced(ledger):
    ledger.load("prices", [PRICE_MOONSHOT, BATCH])
    tokens = {"cache_miss_input_tokens": 1_000_000, "output_tokens": 100_000}
    ledger.load(
        "requests",
        [
            # standard: 1,000,000 x 3.00 + 100,000 x 15.00, / 1e6 = 3.00 + 1.50 = 4.50
            request("std", "t1", "2026-07-01T10:00:00Z", **tokens),
            # batch: 1,000,000 x 1.50 + 100,000 x 7.50, / 1e6 = 1.50 + 0.75 = 2.25
            request("bat", "t2", "2026-07-01T10:00:00Z", service_tier="batch", **tokens),
            # flex has no price row: unpriced (NULL), never the standard price and never 0
            request("flx", "t3", "2026-07-01T10:00:00Z", service_tier="flex", **tokens),
        ],
    )
    ledger.build(*READS)
    assert costs(ledger) == {"std": Decimal("4.5"), "bat": Decimal("2.25"), "flx": None}
    assert ledger.one("SELECT unpriced_requests FROM marts.monthly_route_cost WHERE route = 'api'") == {
        "unpriced_requests": 1
    }


@pytest.mark.slow
def test_long_context_level_applies_from_its_min_input_tokens_counting_hits_misses_and_writes(ledger):
    ledger.load("prices", [PRICE_MOONSHOT, LONG])
    ledger.load(
        "requests",
        [
            # 199,999 input tokens: the base level, 199,999 x 3.00 / 1e6 = 0.599997
            request("below", "t1", "2026-07-01T10:00:00Z", cache_miss_input_tokens=199_999),
            # exactly 200,000: the long level, 200,000 x 6.00 / 1e6 = 1.20
            request("at", "t2", "2026-07-01T10:00:00Z", cache_miss_input_tokens=200_000),
            # 100,000 hit + 50,000 miss + 50,000 5-min writes = 200,000: long level, writes at its miss price:
            # 100,000 x 0.60 + 50,000 x 6.00 + 50,000 x 6.00, / 1e6 = 0.06 + 0.30 + 0.30 = 0.66
            request(
                "mixed",
                "t3",
                "2026-07-01T10:00:00Z",
                cache_hit_input_tokens=100_000,
                cache_miss_input_tokens=50_000,
                cache_write_5m_input_tokens=50_000,
            ),
        ],
    )
    ledger.build(*READS)
    assert costs(ledger) == {"below": Decimal("0.599997"), "at": Decimal("1.2"), "mixed": Decimal("0.66")}


@pytest.mark.slow
def test_levels_change_price_on_their_own_dates(ledger):
    # the base level's price drops on 1 August (miss 2.50); the long level keeps its July price
    ledger.load(
        "prices",
        [
            PRICE_MOONSHOT,
            LONG,
            {**PRICE_MOONSHOT, "effective_from": "2026-08-01T00:00:00Z", "cache_miss_input_per_million": "2.50"},
        ],
    )
    ledger.load(
        "requests",
        [
            # August, short: 100,000 x 2.50 / 1e6 = 0.25
            request("short", "t1", "2026-08-05T10:00:00Z", cache_miss_input_tokens=100_000),
            # August, long: still the long level's 6.00: 300,000 x 6.00 / 1e6 = 1.80 (not 2.50, not 3.00)
            request("long", "t2", "2026-08-05T10:00:00Z", cache_miss_input_tokens=300_000),
            # July, short: 100,000 x 3.00 / 1e6 = 0.30
            request("july", "t3", "2026-07-05T10:00:00Z", cache_miss_input_tokens=100_000),
        ],
    )
    ledger.build(*READS)
    assert costs(ledger) == {"short": Decimal("0.25"), "long": Decimal("1.8"), "july": Decimal("0.3")}


def test_overlapping_prices_of_the_same_level_are_quarantined_but_other_levels_and_tiers_may_share_dates(ledger):
    result = ledger.load(
        "prices",
        [
            PRICE_MOONSHOT,
            BATCH,  # same dates, another tier: fine
            {**LONG, "effective_to": "2026-06-01T00:00:00Z"},  # same dates, another level: fine
            # inside that row's range (January to June), same level: quarantined, naming both ranges
            {**LONG, "effective_from": "2026-03-01T00:00:00Z", "effective_to": "2026-04-01T00:00:00Z"},
        ],
    )
    assert (result.rows_loaded, result.rows_quarantined) == (3, 1)
    reason = ledger.one("SELECT reason FROM meta.quarantine")["reason"]
    assert reason.startswith("overlaps another price of moonshot/kimi-k3 (standard, from 200000 input tokens)")


@pytest.mark.slow
def test_a_self_hosted_row_needs_a_latency_an_api_row_does_not(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    result = ledger.load(
        "requests",
        [
            # an API response body carries no latency: loaded, priced, left out of the percentiles
            request("api-none", "t1", "2026-07-01T10:00:00Z", latency_ms=None, cache_miss_input_tokens=1000),
            request("api-2s", "t2", "2026-07-01T10:00:00Z", latency_ms=2000),
            # the cluster's busy time needs it
            request("sh-none", "t3", "2026-07-01T10:00:00Z", route="self_hosted", latency_ms=None),
        ],
    )
    assert (result.rows_loaded, result.rows_quarantined) == (2, 1)
    assert "a self_hosted request has no latency_ms" in ledger.one("SELECT reason FROM meta.quarantine")["reason"]
    ledger.build(*READS, slo_ms_api=1500)
    row = ledger.one(
        "SELECT requests, latency_unknown, p50_latency_ms, p95_latency_ms, latency_violations "
        "FROM marts.monthly_route_cost WHERE route = 'api'"
    )
    # percentiles over the one request with a latency; the unknown one is no SLO violation, just counted;
    # t2 (2 s > the 1.5 s SLO) is judged on its own latency... but nothing was accepted, so no violation either
    assert row == {"requests": 2, "latency_unknown": 1, "p50_latency_ms": 2000, "p95_latency_ms": 2000,
                   "latency_violations": 0}  # fmt: skip


# ------------------------------------------------------------------ property: a Decimal oracle

# a model priced in CNY (Moonshot's mainland platform), converted at the rate in force on the request's date
PRICE_CNY = {**STANDARD, "model": "kimi-k3-cn", "cache_miss_input_per_million": "21.00",
             "cache_write_5m_per_million": "26.25", "web_search_per_call": "0.07", "currency": "CNY"}  # fmt: skip
RATES = {"2026-01-01": Decimal("0.14"), "2026-07-05": Decimal("0.1375")}
# prices the SQL cannot hold as whole micro-dollars, so it prices their requests with DECIMAL arithmetic (the others
# in BIGINT picodollars): a currency whose rate has 12 decimals (converted prices carry up to 14), and a price of
# $1,000 or more per million
PRICE_EUR = {**STANDARD, "model": "kimi-k3-eu", "currency": "EUR"}
EUR_RATE = Decimal("1.083456789123")
PRICE_MAX = {**PRICE_MOONSHOT, "model": "kimi-k3-max", "output_per_million": "1500.00"}
PRICE_ROWS = [
    STANDARD,
    BATCH,
    LONG,
    {**BATCH, "min_input_tokens": "200000", "cache_miss_input_per_million": "3.00"},
    PRICE_CNY,
    PRICE_EUR,
    PRICE_MAX,
]


def price_row(req: dict) -> dict | None:
    """The price row of docs/definitions.md's pricing rule: of the request's model and tier, the one whose
    min_input_tokens is the largest not above its input tokens (hit + miss + writes); None when there is none."""
    inputs = sum(req[c] for c in ("cache_hit_input_tokens", "cache_miss_input_tokens",
                                  "cache_write_5m_input_tokens", "cache_write_1h_input_tokens"))  # fmt: skip
    levels = [
        p for p in PRICE_ROWS
        if p.get("service_tier", "standard") == req["service_tier"] and int(p.get("min_input_tokens", 0)) <= inputs
        and p["model"] == req["model"]
    ]  # fmt: skip
    return max(levels, key=lambda x: int(x.get("min_input_tokens", 0))) if levels else None


def oracle(req: dict) -> Decimal | None:
    """The pricing rule, from docs/definitions.md, in Python: the request's price row (``price_row``); writes default to
    the miss price."""
    p = price_row(req)
    if p is None:
        return None
    miss = Decimal(p["cache_miss_input_per_million"])
    per_million = (
        req["cache_hit_input_tokens"] * Decimal(p["cache_hit_input_per_million"])
        + req["cache_miss_input_tokens"] * miss
        + req["cache_write_5m_input_tokens"] * Decimal(p.get("cache_write_5m_per_million", miss))
        + req["cache_write_1h_input_tokens"] * Decimal(p.get("cache_write_1h_per_million", miss))
        + (req["output_tokens"] + req["reasoning_tokens"]) * Decimal(p["output_per_million"])
    )
    usd = per_million / Decimal(1_000_000) + req["web_search_calls"] * Decimal(p.get("web_search_per_call", "0"))
    if p["currency"] == "CNY":  # the latest rate on or before the request's date
        usd *= RATES[max(d for d in RATES if d <= req["started_at"][:10])]
    elif p["currency"] == "EUR":
        usd *= EUR_RATE
    # stored at 12 decimals (a converted price can carry more): rounded once, half away from zero
    return usd.quantize(Decimal("1e-12"), rounding=ROUND_HALF_UP)


# token counts up to 1e8 are priced in BIGINT picodollars, from 1e8 on (up to the 1e12 bound) with DECIMALs
counts = st.integers(min_value=0, max_value=400_000) | st.sampled_from([99_999_999, 100_000_000, 10**12])
requests_strategy = st.lists(
    st.fixed_dictionaries(
        {
            "cache_hit_input_tokens": counts,
            "cache_miss_input_tokens": counts,
            "cache_write_5m_input_tokens": st.sampled_from([0, 0, 1, 150_000]) | counts,
            "cache_write_1h_input_tokens": st.sampled_from([0, 0, 7]) | counts,
            "output_tokens": counts,
            "reasoning_tokens": counts,
            "web_search_calls": st.integers(min_value=0, max_value=50) | st.sampled_from([99_999, 100_000]),
            "service_tier": st.sampled_from(["standard", "batch", "flex"]),
            "model": st.sampled_from(["kimi-k3", "kimi-k3", "kimi-k3-cn", "kimi-k3-eu", "kimi-k3-max"]),
            "started_at": st.sampled_from(["2026-07-02T10:00:00Z", "2026-07-10T10:00:00Z"]),
        }
    ),
    min_size=1,
    max_size=25,
)
_ids = itertools.count()


@pytest.mark.slow
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(batch=requests_strategy)
def test_metered_cost_equals_a_decimal_oracle_across_tiers_levels_writes_searches_and_currencies(ledger, batch):
    if not ledger.rows("SELECT 1 FROM raw.prices LIMIT 1"):
        ledger.load(
            "fx",
            [{"currency": "CNY", "date": d, "usd_per_unit": str(r)} for d, r in RATES.items()]
            + [{"currency": "EUR", "date": "2026-01-01", "usd_per_unit": str(EUR_RATE)}],
        )
        assert ledger.load("prices", PRICE_ROWS).rows_loaded == len(PRICE_ROWS)
    rows = {f"p{next(_ids)}": req for req in batch}
    result = ledger.load("requests", [request(rid, rid, **req) for rid, req in rows.items()])
    assert result.rows_loaded == len(rows)
    ledger.build(*READS)
    got = ledger.rows(
        "SELECT request_id, metered_cost_usd FROM intermediate.int_requests_priced "
        "WHERE request_id IN (SELECT unnest(?))",
        [list(rows)],
    )
    assert {r["request_id"]: r["metered_cost_usd"] for r in got} == {rid: oracle(req) for rid, req in rows.items()}


def sensitivity_parts(req: dict) -> tuple[Decimal, Decimal, Decimal] | None:
    """docs/definitions.md's split of a priced request's cost for the cache-hit sensitivity, in Python, at its price
    row's USD prices (price x rate, exact): A = (hit + miss) x miss price, B = (hit + miss) x (miss - hit price),
    C = output and reasoning, cache writes (per million) and web searches; None when no row prices the request."""
    p = price_row(req)
    if p is None:
        return None
    rate = Decimal(1)
    if p["currency"] == "CNY":
        rate = RATES[max(d for d in RATES if d <= req["started_at"][:10])]
    elif p["currency"] == "EUR":
        rate = EUR_RATE
    miss = Decimal(p["cache_miss_input_per_million"]) * rate
    hit = Decimal(p["cache_hit_input_per_million"]) * rate
    read = req["cache_hit_input_tokens"] + req["cache_miss_input_tokens"]
    c = (
        (req["output_tokens"] + req["reasoning_tokens"]) * Decimal(p["output_per_million"]) * rate
        + req["cache_write_5m_input_tokens"]
        * Decimal(p.get("cache_write_5m_per_million", p["cache_miss_input_per_million"]))
        * rate
        + req["cache_write_1h_input_tokens"]
        * Decimal(p.get("cache_write_1h_per_million", p["cache_miss_input_per_million"]))
        * rate
    ) / Decimal(1_000_000) + req["web_search_calls"] * Decimal(p.get("web_search_per_call", "0")) * rate
    return read * miss / Decimal(1_000_000), read * (miss - hit) / Decimal(1_000_000), c


@pytest.mark.slow
def test_the_sensitivity_sums_of_many_price_bands_equal_a_decimal_oracle(ledger):
    """int_requests_daily prices the a/b/c sums per price band (the band's prices times its token sums); the
    month's sums must equal the sum of every request's own parts, whatever band, tier, level or currency prices it,
    rounded once to 12 decimals. Several requests share each band, and one day holds many bands."""
    ledger.load(
        "fx",
        [{"currency": "CNY", "date": d, "usd_per_unit": str(r)} for d, r in RATES.items()]
        + [{"currency": "EUR", "date": "2026-01-01", "usd_per_unit": str(EUR_RATE)}],
    )
    assert ledger.load("prices", PRICE_ROWS).rows_loaded == len(PRICE_ROWS)
    shapes = [
        # (model, tier, hit, miss, 5m writes, 1h writes, output, reasoning, web searches)
        ("kimi-k3", "standard", 1_000, 2_000, 0, 0, 300, 0, 0),
        (
            "kimi-k3",
            "standard",
            7,
            13,
            150_000,
            7,
            11,
            5,
            3,
        ),  # cache writes at their own rates (150,033 input tokens: the base level)
        ("kimi-k3", "standard", 120_000, 90_000, 0, 0, 1, 1, 1),  # 210,000 input tokens: the LONG level
        ("kimi-k3", "batch", 50_000, 50_001, 0, 0, 999, 1, 0),
        ("kimi-k3", "batch", 150_000, 60_000, 0, 0, 10, 0, 0),  # batch's long-context level
        ("kimi-k3-cn", "standard", 333, 777, 1, 0, 5, 5, 2),
        ("kimi-k3-eu", "standard", 123_457, 1, 0, 9, 77, 0, 1),
        ("kimi-k3-max", "standard", 0, 10, 0, 0, 1_000_003, 0, 0),
        ("kimi-k3", "flex", 500, 500, 0, 0, 500, 0, 0),  # no flex price: unpriced, in none of the sums
    ]
    rows, parts = [], []
    for n, (model, tier, hit, miss, w5, w1, out, reason, searches) in enumerate(shapes * 3):
        req = {
            "model": model, "service_tier": tier, "cache_hit_input_tokens": hit + n, "cache_miss_input_tokens": miss,
            "cache_write_5m_input_tokens": w5, "cache_write_1h_input_tokens": w1, "output_tokens": out,
            "reasoning_tokens": reason, "web_search_calls": searches,
            "started_at": ["2026-07-02T10:00:00Z", "2026-07-10T10:00:00Z"][n % 2],
        }  # fmt: skip
        rows.append(request(f"s{n}", f"s{n}", **req))
        parts.append(sensitivity_parts(req))
    assert ledger.load("requests", rows).rows_loaded == len(rows)
    ledger.build(*READS)
    priced = [x for x in parts if x is not None]
    assert len(priced) == len(parts) - 3  # the three flex requests
    want = {
        name: sum((x[i] for x in priced), Decimal(0)).quantize(Decimal("1e-12"), rounding=ROUND_HALF_UP)
        for i, name in enumerate(("a", "b", "c"))
    }
    got = ledger.one(
        "SELECT sum(a_all_miss_usd) AS a, sum(b_hit_saving_usd) AS b, sum(c_not_read_input_usd) AS c, "
        "sum(unpriced_requests) AS unpriced FROM intermediate.int_requests_monthly WHERE month = DATE '2026-07-01'"
    )
    assert got == {**want, "unpriced": 3}


# ------------------------------------------------------------------ LiteLLM's price list

LITELLM = ROOT / "tests" / "fixtures" / "prices" / "litellm_model_prices.json"


def test_a_litellm_price_list_becomes_per_million_rows_by_tier_and_level(ledger):
    from pipeline.ingest.files import IngestOptions, ingest_file
    from pipeline.base.fileformats import PriceListMapping

    # no dates in the file: rejected whole, naming the settings entry to add
    rejected = ingest_file(ledger.con, "prices", LITELLM, ledger.store)
    assert rejected.status == "rejected" and "add a [[price_lists]] entry" in rejected.message
    options = IngestOptions(price_list_mappings=(PriceListMapping(match="litellm_*", effective_from="2026-07-01"),))
    result = ingest_file(ledger.con, "prices", LITELLM, ledger.store, options=options)
    # gpt-5: standard and batch; claude-sonnet-4: base and 200k levels; the embedding model has no output price
    # (skipped); broken-model's input price is not a number (quarantined, named)
    assert (result.rows_loaded, result.rows_quarantined) == (4, 1)
    assert ledger.one("SELECT reason FROM meta.quarantine")["reason"] == (
        "litellm entry broken-model: broken-model.input_cost_per_token is not a number: 'free'"
    )
    ledger.build(*READS)
    got = {
        (r["provider"], r["model"], r["service_tier"], r["min_input_tokens"]): (
            r["cache_hit_input_per_million"], r["cache_miss_input_per_million"], r["cache_write_5m_per_million"],
            r["cache_write_1h_per_million"], r["output_per_million"])
        for r in ledger.rows("SELECT * FROM staging.stg_ledger__prices")
    }  # fmt: skip
    D = Decimal
    assert got == {
        # per token x 1e6: 1.25e-06 -> 1.25, 1.25e-07 -> 0.125, 1e-05 -> 10; writes default to the miss price
        ("openai", "gpt-5", "standard", 0): (D("0.125"), D("1.25"), D("1.25"), D("1.25"), D("10")),
        # batch: 6.25e-07 -> 0.625, 5e-06 -> 5; no batch cache-read price: the batch input price, not the standard one
        ("openai", "gpt-5", "batch", 0): (D("0.625"), D("0.625"), D("0.625"), D("0.625"), D("5")),
        # the "anthropic/" prefix dropped; writes 3.75e-06 -> 3.75 (5 minutes), 6e-06 -> 6 (1 hour)
        ("anthropic", "claude-sonnet-4", "standard", 0): (D("0.3"), D("3"), D("3.75"), D("6"), D("15")),
        # from 200,000 input tokens: 6e-06 -> 6, 6e-07 -> 0.6, 2.25e-05 -> 22.5; no long-context write price given:
        # the level's own miss price
        ("anthropic", "claude-sonnet-4", "standard", 200_000): (D("0.6"), D("6"), D("6"), D("6"), D("22.5")),
    }


def test_a_litellm_price_written_as_a_doubles_artefact_is_read_as_its_nearest_15_digit_decimal(ledger, tmp_path):
    from pipeline.base.fileformats import PriceListMapping
    from pipeline.ingest.files import IngestOptions, ingest_file

    path = tmp_path / "litellm_prices.json"
    # as LiteLLM's file has Kimi K2.5 on Novita: 4e-07 per token printed as the double it is, in full (17 digits);
    # the same text as a JSON string is what someone typed, and is taken as written
    path.write_text(
        '{"novita/kimi-k2.5": {"litellm_provider": "novita", "input_cost_per_token": 4.0000000000000003e-07, '
        '"output_cost_per_token": 2.0000000000000002e-06},'
        ' "typed/model": {"litellm_provider": "typed", "input_cost_per_token": "4.0000000000000003e-07", '
        '"output_cost_per_token": 0.000002}}'
    )
    options = IngestOptions(price_list_mappings=(PriceListMapping(match="litellm_*", effective_from="2026-07-01"),))
    result = ingest_file(ledger.con, "prices", path, ledger.store, options=options)
    assert (result.rows_loaded, result.rows_quarantined) == (1, 1), ledger.rows("SELECT reason FROM meta.quarantine")
    # the typed text has 17 significant digits: 4.0000000000000003e-07 x 1e6 = 0.40000000000000003 per million, more
    # places than the ledger keeps (12): quarantined, never rounded silently
    assert "more decimal places" in ledger.one("SELECT reason FROM meta.quarantine")["reason"]
    # the doubles: 4e-07 x 1e6 = 0.4 and 2e-06 x 1e6 = 2 per million
    row = ledger.one("SELECT cache_miss_input_per_million AS miss, output_per_million AS out FROM raw.prices")
    assert row == {"miss": Decimal("0.4"), "out": Decimal("2")}
    # the normalisation is said with the file's result and kept in the manifest
    assert "2 price(s) written as floating-point numbers" in result.message
    assert "novita/kimi-k2.5.input_cost_per_token: 4.0000000000000003e-07 read as 4e-07" in result.message
    (notes,) = ledger.one("SELECT notes FROM meta.loaded_files").values()
    assert notes == result.message
