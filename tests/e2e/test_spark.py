"""The Spark engine: `costledger build --engine spark` leaves the same marts and intermediates as a DuckDB build of the
same lake, value for value (DECIMAL money exactly; DOUBLE ratios to 12 significant digits, see scripts/marts_equal.py).

Spark starts once per test run: the tests that need it share one local session in one pytest worker (xdist group
"spark"); the builds over Spark Connect are in test_spark_connect.py. Without Java or pyspark they are skipped, unless
COSTLEDGER_REQUIRE_SPARK is set (CI sets it: .ci/run installs Java).
"""

from __future__ import annotations

import shutil
from decimal import ROUND_HALF_UP, Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.base.models import SQL_DIR
from tests.conftest import cli
from tests.e2e.spark_support import MARKS, assert_equal, spark_copy

pytestmark = MARKS


def test_a_million_requests_build_alike_on_spark_and_duckdb(tmp_path):
    landing = tmp_path / "landing"
    res = cli("sample", "--requests", "1000000", "--months", "1", "--out", landing, "--format", "parquet")
    assert res.exit_code == 0, res.output
    db = tmp_path / "m1" / "ledger.duckdb"
    db.parent.mkdir()
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code in (0, 4), res.output
    before, after = spark_copy(db, tmp_path / "copies")
    assert_equal(before, after)
    shutil.rmtree(tmp_path / "landing")


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    from dataclasses import replace

    from pipeline.base.settings import Settings
    from pipeline.transform.spark import session

    return session.start(replace(Settings(), engine_master="local[2]"), tmp_path_factory.mktemp("spark"))


def _on_spark(spark, sql: str, rows: list[tuple[str, ...]]) -> list[object]:
    """Evaluate the DuckDB expression ``sql`` (over the VALUES columns a, b) on Spark, row by row."""
    from pipeline.transform.spark.translate import spark_macros, to_spark

    values = ", ".join("(" + ", ".join(f"'{v}'" for v in row) + ")" for row in rows)
    query = f"SELECT {sql} AS x FROM (VALUES {values}) AS t (a, b)"
    return [r[0] for r in spark.sql(to_spark(query, spark_macros(SQL_DIR))).collect()]


def _half_away(q: Decimal) -> Decimal:
    return q.quantize(Decimal("1e-12"), rounding=ROUND_HALF_UP)  # ROUND_HALF_UP is half away from zero


_MONEY = st.decimals(min_value=Decimal("-1e21"), max_value=Decimal("1e21"), places=12, allow_nan=False)
#: what the ledger divides by (hours, seconds, tasks, tokens, dollars): the divisors DuckDB's own property test draws
#: (tests/unit/test_money_div.py); on Spark a divisor of 1e20 or more overflows DECIMAL(38, 0) in the remainder's step
_DIVISOR = st.decimals(min_value=Decimal("-1e14"), max_value=Decimal("1e14"), places=12, allow_nan=False)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    pairs=st.lists(st.tuples(_MONEY, _DIVISOR.filter(lambda d: abs(d) >= Decimal("0.001"))), min_size=1, max_size=40)
)
def test_money_div_on_spark_is_exact_division_rounded_half_away_from_zero(spark, pairs):
    # the oracle: Python's Decimal with 80 digits of precision, rounded once to 1e-12
    pairs = [(n, d) for n, d in pairs if abs(n / d) < Decimal("9e18")]  # Spark's DIV is a LONG: quotients below 9.2e18
    if not pairs:
        return
    got = _on_spark(
        spark,
        "money_div(CAST(a AS DECIMAL(38, 12)), CAST(b AS DECIMAL(38, 12)))",
        [(format(n, "f"), format(d, "f")) for n, d in pairs],
    )
    import decimal

    with decimal.localcontext() as ctx:
        ctx.prec = 80
        expected = [_half_away(n / d) for n, d in pairs]
    assert got == expected


def test_money_div_on_spark_hand_worked(spark):
    got = _on_spark(
        spark,
        "money_div(CAST(a AS DECIMAL(38, 12)), CAST(b AS DECIMAL(38, 12)))",
        [("1", "3"), ("2", "3"), ("-2", "3"), ("0.0000003", "7"), ("100000000000000000000", "3000"), ("5", "0")],
    )
    assert got == [
        Decimal("0.333333333333"),  # 1/3 = 0.333333333333|33...: down
        Decimal("0.666666666667"),  # 2/3 = 0.666666666666|66...: up
        Decimal("-0.666666666667"),  # half away from zero: the same digits, negative
        Decimal("0.000000042857"),  # 3e-7 / 7 = 4.2857142...e-8
        Decimal("33333333333333333.333333333333"),  # 1e20 / 3000: numerator 1e32 in units of 1e-12
        None,  # a zero denominator gives NULL, as on DuckDB
    ]


def test_money_div_on_spark_stops_at_a_quotient_its_long_cannot_hold(spark):
    # 1e21 / 3 = 3.3e20: Spark's DIV (a LONG, up to 9.2e18) would wrap around; the build must stop, not go on wrong
    with pytest.raises(Exception, match="quotient of 9e18 or more"):
        _on_spark(spark, "money_div(CAST(a AS DECIMAL(38, 12)), CAST(b AS DECIMAL(38, 12)))", [("1e21", "3")])


def test_a_materialized_with_query_runs_on_spark(spark):
    # DuckDB's MATERIALIZED is a planner hint Spark SQL does not know: the translation leaves it out, nested or not
    from pipeline.transform.spark.translate import spark_macros, to_spark

    sql = (
        "WITH q AS MATERIALIZED (SELECT 2 AS n) "
        "SELECT q.n * 21 AS x FROM q JOIN (WITH r AS MATERIALIZED (SELECT 2 AS n) SELECT n FROM r) AS r USING (n)"
    )
    assert [row[0] for row in spark.sql(to_spark(sql, spark_macros(SQL_DIR))).collect()] == [42]  # 2 x 21


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=30), min_size=1))
def test_hash_key_is_the_same_number_on_both_engines(spark, keys):
    import duckdb

    from pipeline.base.models import define_macros

    con = duckdb.connect()
    define_macros(con)
    on_duckdb = [con.execute("SELECT hash_key(?)", [k]).fetchone()[0] for k in keys]
    # the oracle for both: the first 15 hex digits of the MD5 of the text
    import hashlib

    assert on_duckdb == [int(hashlib.md5(k.encode()).hexdigest()[:15], 16) for k in keys]
    assert _on_spark(spark, "hash_key(a)", [(k, "") for k in keys]) == on_duckdb


#: DuckDB expressions over the text columns a and b whose plain translation gives another value on Spark, each
#: rewritten by a rule of pipeline/transform/spark/translate.py, and the rows to compare them on
_PROBES = [
    # Sunday 2026-11-01 to Saturday 2026-11-07: 0 to 6 on DuckDB
    ("dayofweek(CAST(a AS DATE))", [(f"2026-11-0{d}", "") for d in range(1, 8)]),
    # boundaries crossed, not whole units: 31 January to 1 February is a month, 23:00 to 01:00 a day
    ("date_diff('month', CAST(a AS DATE), CAST(b AS DATE))",
     [("2026-01-31", "2026-02-01"), ("2026-01-01", "2026-03-31"), ("2026-03-31", "2026-01-01")]),
    ("date_diff('day', CAST(a AS TIMESTAMP), CAST(b AS TIMESTAMP))",
     [("2026-01-01 23:00:00", "2026-01-02 01:00:00"), ("2026-01-02 01:00:00", "2026-01-01 23:00:00")]),
    ("date_diff('hour', CAST(a AS TIMESTAMP), CAST(b AS TIMESTAMP))", [("2026-01-01 10:59:00", "2026-01-01 11:01:00")]),
    ("date_diff('second', CAST(a AS TIMESTAMP), CAST(b AS TIMESTAMP))",
     [("2026-01-01 10:00:00.9", "2026-01-01 10:00:01.1"), ("2026-01-01 10:00:00", "2026-01-01 10:00:00.999")]),
    # one JSON key, however the path is written
    ("json_extract_string(a, '$.k')", [('{"k": "v", "kk": 1}', ""), ('{"k": 2}', ""), ('{"x": 1}', "")]),
    ("a ->> 'k'", [('{"k": "v"}', "")]),
    ("json_extract_string(a, '$.\"a key\"')", [('{"a key": "v"}', "")]),
    # a format() inside a format(): each one's {} becomes Spark's %s
    ("format('robust score {}', format('{} of {}', a, b))", [("1.50", "3")]),
    # a date or a time as DuckDB writes it (Spark's %s of a DATE is its days since 1970), and NULL for a NULL value
    ("format('on {}', CAST(a AS DATE))", [("2026-07-21", "")]),
    ("format('{} at {}', a, CAST(b AS TIMESTAMP))", [("x", "2026-07-21 10:00:00.5"), ("x", "2026-07-21 10:00:00")]),
    ("format('{} and {}', a, nullif(b, 'none'))", [("x", "none"), ("x", "y")]),
]  # fmt: skip


@pytest.mark.parametrize(("sql", "rows"), _PROBES)
def test_the_translation_probes_give_duckdbs_values(spark, sql, rows):
    import duckdb

    values = ", ".join("(" + ", ".join(f"'{v}'" for v in row) + ")" for row in rows)
    query = f"SELECT {sql} AS x FROM (VALUES {values}) AS t (a, b)"
    on_duckdb = [r[0] for r in duckdb.connect().execute(query).fetchall()]
    assert _on_spark(spark, sql, rows) == on_duckdb
