"""The money_div macro (exact money division, rounded half away from zero to 1e-12) against Python's Decimal."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.base.models import define_macros


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    define_macros(c)
    yield c
    c.close()


def div(con, num: object, den: object) -> Decimal | None:
    """money_div of two values cast to DECIMAL(38, 12) (strings, Decimals or None)."""
    return con.execute(
        "SELECT money_div(CAST(? AS DECIMAL(38, 12)), CAST(? AS DECIMAL(38, 12)))",
        [None if num is None else str(num), None if den is None else str(den)],
    ).fetchone()[0]


def oracle(num: Decimal, den: Decimal) -> Decimal | None:
    if den == 0:
        return None
    with localcontext() as ctx:
        ctx.prec = 80
        return (num / den).quantize(Decimal("1e-12"), rounding=ROUND_HALF_UP)


# money at scale 12 in the macro's stated range (|num| below 8e13, |den| below 1e14), zero and ties included
def money(limit: int) -> st.SearchStrategy[Decimal]:
    edges = [Decimal(0), Decimal("0.000000000001"), Decimal("-0.000000000001"), Decimal(60)]
    return st.decimals(min_value=-limit + 1, max_value=limit - 1, places=12) | st.sampled_from(edges)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(num=money(8 * 10**13), den=money(10**14))
def test_money_div_equals_the_decimal_quotient_rounded_half_away_from_zero(con, num, den):
    assert div(con, num, den) == oracle(num, den)


def test_zero_null_and_ties(con):
    # 0 / 60 = 0, of the same type as any other quotient (DECIMAL(38,12))
    assert div(con, "0", "60") == Decimal(0)
    assert con.execute("SELECT typeof(money_div(CAST(0 AS DECIMAL(38, 12)), 60))").fetchone()[0] == "DECIMAL(38,12)"
    # nothing divided by zero, NULL in either place: NULL, never 0
    assert [div(con, "0", "0"), div(con, "5", "0"), div(con, None, "3"), div(con, "0", None)] == [None] * 4
    # 0.000000000001 / 2 = 0.0000000000005: a tie, away from zero -> +-0.000000000001
    assert div(con, "0.000000000001", "2") == Decimal("0.000000000001")
    assert div(con, "-0.000000000001", "2") == Decimal("-0.000000000001")
    # 1 / 3 = 0.333333333333 (rounded down), 2 / 3 = 0.666666666667 (rounded up)
    assert div(con, "1", "3") == Decimal("0.333333333333") and div(con, "2", "3") == Decimal("0.666666666667")


# Past the short form: any DECIMAL(38,12) numerator whose quotient is a DECIMAL(38,12) too (below 1e26)
@settings(max_examples=300, deadline=None)
@given(
    num=st.decimals(min_value=-(10**25), max_value=10**25, places=12),
    den=st.decimals(min_value=Decimal("0.000001"), max_value=10**14, places=12),
    negative=st.booleans(),
)
def test_money_div_of_large_numerators_equals_the_decimal_quotient(con, num, den, negative):
    den = -den if negative else den
    if abs(num / den) >= 10**25:
        return
    assert div(con, num, den) == oracle(num, den)


# A charge at the plausibility bound (1e12) times the seconds of any period within the accepted dates (2000 to
# 2100: at most 3,155,760,000 s) over those seconds: the split of any realistic (or absurd) charge
@settings(max_examples=300, deadline=None)
@given(
    amount=st.decimals(min_value=-(10**12), max_value=10**12, places=12),
    total=st.integers(min_value=1, max_value=3_155_760_000),
    data=st.data(),
)
def test_a_charge_split_by_seconds_at_the_bounds_is_exact(con, amount, total, data):
    part = data.draw(st.integers(min_value=0, max_value=total))
    assert div(con, amount * part, total) == oracle(amount * part, Decimal(total))


def test_the_bounds_themselves(con):
    # $1e12 over a century of seconds, at a part of one second: 1e12 x 1 / 3,155,760,000 = 316.8808781402895023...,
    # rounded half up at 12 places: 316.880878140290
    assert div(con, Decimal(10**12), Decimal(3_155_760_000)) == Decimal("316.880878140290")
    # all of it: 1e12 x 3,155,760,000 / 3,155,760,000 = 1e12 exactly
    assert div(con, Decimal(10**12) * 3_155_760_000, 3_155_760_000) == Decimal(10**12)


def share(con, amount: Decimal, part: Decimal, whole: Decimal) -> Decimal | None:
    return con.execute(
        "SELECT money_share(CAST(? AS DECIMAL(38, 12)), CAST(? AS DECIMAL(38, 12)), CAST(? AS DECIMAL(38, 12)))",
        [str(amount), str(part), str(whole)],
    ).fetchone()[0]


@settings(max_examples=300, deadline=None)
@given(
    amount=st.decimals(min_value=-(10**12), max_value=10**12, places=12),
    part=st.decimals(min_value=0, max_value=10**12, places=12),
    extra=st.decimals(min_value=0, max_value=10**12, places=12),
)
def test_money_share_is_amount_times_part_over_whole_and_never_overflows(con, amount, part, extra):
    whole = part + extra
    got = share(con, amount, part, whole)
    if whole == 0:
        assert got is None
        return
    with localcontext() as ctx:
        ctx.prec = 80
        exact = amount * part / whole
    # under 9e6 each: the product is exact and rounded twice at 1e-12 at most (the product, the quotient: within
    # 5e-13 / whole + 5e-13); beyond, the proportion is rounded to 1e-12 first: within |amount| x 5e-13 + 5e-13
    if abs(amount) < 9_000_000 and part < 9_000_000:
        assert abs(got - exact) <= Decimal("5e-13") / whole + Decimal("5e-13")
    else:
        assert abs(got - exact) <= abs(amount) * Decimal("5e-13") + Decimal("5e-13")


def mul(con, a: Decimal, b: Decimal) -> Decimal | None:
    return con.execute(
        "SELECT money_mul(CAST(? AS DECIMAL(38, 12)), CAST(? AS DECIMAL(38, 12)))", [str(a), str(b)]
    ).fetchone()[0]


# two figures whose product DECIMAL(38, 12) holds (below 1e26), each with up to 12 places: the product of two
# DECIMAL(38, 12) in DuckDB's own `*` holds less than 1e14
@settings(max_examples=300, deadline=None)
@given(
    a=st.decimals(min_value=-(10**13), max_value=10**13, places=12),
    b=st.decimals(min_value=-(10**12), max_value=10**12, places=12),
)
def test_money_mul_is_the_exact_product_rounded_once_for_any_product_below_1e26(con, a, b):
    with localcontext() as ctx:
        ctx.prec = 80
        exact = (a * b).quantize(Decimal("1e-12"), rounding=ROUND_HALF_UP)
    assert mul(con, a, b) == exact


def test_money_mul_by_hand():
    c = duckdb.connect()
    define_macros(c)
    # $10,000,001 x $10,000,001 = 100,000,020,000,001 (past DuckDB's 1e14 for a DECIMAL(38, 24) product)
    assert mul(c, Decimal("10000001"), Decimal("10000001")) == Decimal("100000020000001")
    # -1,000,000,000,000.5 x 99,999,999,999.999999999999 = -100,000,000,000,049,999,999,998.9999999999995, a tie at
    # the 13th place: away from zero
    assert mul(c, Decimal("-1000000000000.5"), Decimal("99999999999.999999999999")) == Decimal(
        "-100000000000049999999999.000000000000"
    )
