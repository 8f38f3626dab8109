"""Metered request cost: docs/definitions.md's formula, at the price in force, exact to the last digit."""

import pytest
from decimal import Decimal

from tests.conftest import PRICE_MOONSHOT, request

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+intermediate.int_requests_priced", "+marts.monthly_route_cost")


def test_seeds_example_cache_miss_and_cache_hit(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [
            # 300,000 x $3.00 / 1e6 = $0.90 input + 30,000 x $15.00 / 1e6 = $0.45 output -> $1.35
            request("miss", "t1", "2026-07-01T10:00:00Z", cache_miss_input_tokens=300_000, output_tokens=30_000),
            # 300,000 x $0.30 / 1e6 = $0.09 input + $0.45 output -> $0.54
            request("hit", "t2", "2026-07-01T11:00:00Z", cache_hit_input_tokens=300_000, output_tokens=30_000),
        ],
    )
    ledger.build(*READS)
    costs = {
        r["request_id"]: r["metered_cost_usd"]
        for r in ledger.rows("SELECT request_id, metered_cost_usd FROM intermediate.int_requests_priced")
    }
    assert costs == {"miss": Decimal("1.35"), "hit": Decimal("0.54")}


@pytest.mark.slow
def test_reasoning_tokens_billed_at_output_rate_and_one_token_is_exact(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [
            # (1,000 output + 2,000 reasoning) x $15 / 1e6 = $0.045
            request("r", "t1", "2026-07-01T10:00:00Z", output_tokens=1000, reasoning_tokens=2000),
            # one cache-hit token: $0.30 / 1e6 = $0.0000003, seven decimal places, not rounded away
            request("one", "t2", "2026-07-01T10:00:00Z", cache_hit_input_tokens=1),
        ],
    )
    ledger.build(*READS)
    costs = {
        r["request_id"]: r["metered_cost_usd"]
        for r in ledger.rows("SELECT request_id, metered_cost_usd FROM intermediate.int_requests_priced")
    }
    assert costs["r"] == Decimal("0.045")
    assert costs["one"] == Decimal("0.0000003")


@pytest.mark.slow
def test_price_in_force_at_request_time(ledger):
    ledger.load(
        "prices",
        [
            PRICE_MOONSHOT,
            {**PRICE_MOONSHOT, "effective_from": "2026-08-16T00:00:00Z", "cache_miss_input_per_million": "2.50"},
        ],
    )
    ledger.load(
        "requests",
        [
            # before the change: 1,000,000 x $3.00 / 1e6 = $3.00
            request("before", "t1", "2026-08-15T23:59:59Z", cache_miss_input_tokens=1_000_000),
            # from the change on: 1,000,000 x $2.50 / 1e6 = $2.50
            request("after", "t2", "2026-08-16T00:00:00Z", cache_miss_input_tokens=1_000_000),
        ],
    )
    ledger.build(*READS)
    costs = {
        r["request_id"]: r["metered_cost_usd"]
        for r in ledger.rows("SELECT request_id, metered_cost_usd FROM intermediate.int_requests_priced")
    }
    assert costs == {"before": Decimal("3.00"), "after": Decimal("2.50")}


@pytest.mark.slow
def test_request_without_price_is_unpriced_not_free(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [
            request("priced", "t1", "2026-07-01T10:00:00Z", cache_miss_input_tokens=1_000_000),  # $3.00
            request("unknown", "t2", "2026-07-01T10:00:00Z", provider="nobody", cache_miss_input_tokens=1_000_000),
            # before the first moonshot price (2026-01-01): no price either
            request("too-early", "t3", "2025-12-31T23:00:00Z", cache_miss_input_tokens=1_000_000),
        ],
    )
    ledger.build(*READS)
    rows = {
        r["request_id"]: r
        for r in ledger.rows("SELECT request_id, is_priced, metered_cost_usd FROM intermediate.int_requests_priced")
    }
    assert rows["unknown"]["is_priced"] is False and rows["unknown"]["metered_cost_usd"] is None
    assert rows["too-early"]["is_priced"] is False and rows["too-early"]["metered_cost_usd"] is None
    july = ledger.one(
        "SELECT unpriced_requests, cost_usd FROM marts.monthly_route_cost "
        "WHERE route = 'api' AND month = DATE '2026-07-01'"
    )
    # metered total holds only the priced request; the unpriced one is counted, not priced at 0
    assert july == {"unpriced_requests": 1, "cost_usd": Decimal("3.00")}


def test_costs_either_side_of_the_integer_paths_bounds_are_exact(ledger):
    """int_requests_priced sums a request's cost in BIGINT picodollars when its token counts are below 1e8 and its
    prices are whole micro-dollars below $1,000 per million, else in DECIMALs: both give the exact cost."""
    dear = {**PRICE_MOONSHOT, "model": "kimi-k3-max", "output_per_million": "999.999999"}
    xl = {**PRICE_MOONSHOT, "model": "kimi-k3-xl", "output_per_million": "1000.00"}
    ledger.load("prices", [PRICE_MOONSHOT, dear, xl])
    ledger.load(
        "requests",
        [
            # 99,999,999 x $3.00 / 1e6 = $299.999997 (BIGINT path)
            request("below", "t1", "2026-07-01T10:00:00Z", cache_miss_input_tokens=99_999_999),
            # 100,000,000 x $3.00 / 1e6 = $300 (DECIMAL path)
            request("at", "t2", "2026-07-01T10:00:00Z", cache_miss_input_tokens=100_000_000),
            # 1e12 (the bound) x $0.30 / 1e6 = $300,000, + 1 output token x $15 / 1e6 = $0.000015
            request("huge", "t3", "2026-07-01T10:00:00Z", cache_hit_input_tokens=10**12, output_tokens=1),
            # 99,999,999 x 2 (output + reasoning) x $999.999999 / 1e6 = 199,999,998 x 0.000999999999
            # = 199,999.997800000002 (BIGINT: the largest term it allows)
            request(
                "dear",
                "t4",
                "2026-07-01T10:00:00Z",
                model="kimi-k3-max",
                output_tokens=99_999_999,
                reasoning_tokens=99_999_999,
            ),  # fmt: skip
            # (7 output + 3 reasoning) x $1,000 / 1e6 = $0.01 (DECIMAL path: the price is not below $1,000)
            request("xl", "t5", "2026-07-01T10:00:00Z", model="kimi-k3-xl", output_tokens=7, reasoning_tokens=3),
        ],
    )
    ledger.build(*READS)
    costs = {
        r["request_id"]: r["metered_cost_usd"]
        for r in ledger.rows("SELECT request_id, metered_cost_usd FROM intermediate.int_requests_priced")
    }
    assert costs == {
        "below": Decimal("299.999997"),
        "at": Decimal("300"),
        "huge": Decimal("300000.000015"),
        "dear": Decimal("199999.997800000002"),
        "xl": Decimal("0.01"),
    }


def test_a_price_with_twelve_places_per_million_is_kept_and_priced_exactly(ledger):
    # prices per million keep 12 decimal places: 0.1234567 and 0.000000000001 are kept as written, never rounded
    price = {**PRICE_MOONSHOT, "cache_hit_input_per_million": "0.1234567", "output_per_million": "0.000000000001"}
    ledger.load("prices", [price])
    ledger.load(
        "requests",
        [
            # 1,000,000 cache-hit tokens x $0.1234567 / 1e6 = $0.1234567
            request("hit", "t1", "2026-07-01T10:00:00Z", cache_hit_input_tokens=1_000_000),
            # 10,000,000 output tokens x $0.000000000001 / 1e6 = $0.00000000001 (1e-11)
            request("out", "t2", "2026-07-01T10:00:00Z", output_tokens=10_000_000),
        ],
    )
    kept = ledger.one("SELECT cache_hit_input_per_million AS hit, output_per_million AS out FROM raw.prices")
    assert kept == {"hit": Decimal("0.1234567"), "out": Decimal("0.000000000001")}
    ledger.build(*READS)
    costs = {
        r["request_id"]: r["metered_cost_usd"]
        for r in ledger.rows("SELECT request_id, metered_cost_usd FROM intermediate.int_requests_priced")
    }
    assert costs == {"hit": Decimal("0.1234567"), "out": Decimal("0.00000000001")}
