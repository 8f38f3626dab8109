"""The Spark translation without a JVM: every model translates, and a function whose Spark translation is not known to
give DuckDB's value is refused before Spark runs, naming it (tests/e2e/test_spark.py checks on Spark that what is
translated gives the same values)."""

from __future__ import annotations

import sqlglot
import pytest
from sqlglot import exp

from pipeline.base.models import SQL_DIR, discover
from pipeline.transform.spark.guard import ALLOWED
from pipeline.transform.spark.translate import TranslationFailed, spark_macros, to_spark, to_spark_steps


@pytest.fixture(scope="module")
def macros():
    return spark_macros(SQL_DIR)


@pytest.mark.slow  # about 40 s: SQLGlot parses and writes every model
def test_every_model_translates_to_spark_sql(macros):
    models = [m for m in discover() if m.layer in ("staging", "intermediate", "marts")]
    assert len(models) > 70
    for m in models:
        steps, final = to_spark_steps(m.body, macros, prefix=f"{m.layer}__{m.name}__")
        # the result parses as Spark SQL, and reads no DuckDB session variable (Spark has none: a build's are unset),
        # not even inside a macro's body
        for sql in [s.sql for s in steps] + [final]:
            sqlglot.parse_one(sql, read="spark")
            assert "getvariable" not in sql.lower(), m.qualified


def test_every_function_allowed_is_one_a_model_uses_or_a_rule_rewrites(macros):
    """So that the Spark equality test of the models (or a probe of tests/e2e/test_spark.py) checks each one's meaning:
    the allow-list holds no function nothing tests."""
    used = set()
    for m in discover():
        if m.layer in ("staging", "intermediate", "marts"):
            used |= {type(n).__name__ for n in sqlglot.parse_one(m.body, read="duckdb").find_all(exp.Func)}
    probed_on_spark = {"DayOfWeek"}  # tests/e2e/test_spark.py::test_the_translation_probes_give_duckdbs_values
    assert ALLOWED - used - probed_on_spark == set()


@pytest.mark.parametrize(
    ("expression", "named"),
    [
        ("hash(a)", "hash()"),  # Spark's hash is another hash (Murmur3, 32 bits)
        (
            "epoch_ms(t)",
            "epoch_ms()",
        ),  # SQLGlot reads it as milliseconds to a timestamp, DuckDB's of a timestamp is a number
        ("list_reverse(l)", "list_reverse()"),  # no such function on Spark: it would fail only when a build reached it
        ("date_diff('week', a, b)", "not WEEK"),  # ISO weeks against Spark's: not translated
        ("json_extract_string(j, '$.a.b')", "one key only"),  # a deeper JSON path
        ("j ->> ('$.' || k)", "one key only"),  # a path built otherwise than '$."' || k || '"'
    ],
)
def test_a_function_without_a_known_translation_is_refused_naming_it(macros, expression, named):
    with pytest.raises(TranslationFailed, match=named.replace("(", r"\(").replace(")", r"\)")):
        to_spark(f"SELECT {expression} AS x FROM t", macros)


@pytest.mark.parametrize(
    ("expression", "spark"),
    [
        # DuckDB counts the boundaries a date_diff crosses; Spark whole units: both ends truncated to the unit first
        ("date_diff('month', a, b)", "TIMESTAMPDIFF(MONTH, DATE_TRUNC('MONTH', a), DATE_TRUNC('MONTH', b))"),
        ("date_diff('day', a, b)", "TIMESTAMPDIFF(DAY, DATE_TRUNC('DAY', a), DATE_TRUNC('DAY', b))"),
        # Sunday: 0 on DuckDB, 1 on Spark
        ("dayofweek(t)", "(DAYOFWEEK(t) - 1)"),
        # one JSON key, however written, as Spark's bracketed path
        ("json_extract_string(j, '$.k')", "GET_JSON_OBJECT(j, CONCAT('$[\\'', 'k', '\\']'))"),
        ("j ->> 'k'", "GET_JSON_OBJECT(j, CONCAT('$[\\'', 'k', '\\']'))"),
        # format(): each value as text, and NULL when a value is NULL, as on DuckDB
        ("format('a {}', x)", "CASE WHEN x IS NULL THEN NULL ELSE FORMAT_STRING('a %s', CAST(x AS STRING)) END"),
        # a rule's arguments keep their own rules: a format() inside a format(), a date_trunc inside a date_diff
        (
            "format('a {}', format('b {}', x))",
            "CASE WHEN CASE WHEN x IS NULL THEN NULL ELSE FORMAT_STRING('b %s', CAST(x AS STRING)) END IS NULL "
            "THEN NULL ELSE FORMAT_STRING('a %s', CAST(CASE WHEN x IS NULL THEN NULL "
            "ELSE FORMAT_STRING('b %s', CAST(x AS STRING)) END AS STRING)) END",
        ),
        (
            "date_diff('day', date_trunc('hour', a), b)",
            "TIMESTAMPDIFF(DAY, DATE_TRUNC('DAY', CAST(DATE_TRUNC('HOUR', a) AS TIMESTAMP_NTZ)), DATE_TRUNC('DAY', b))",
        ),
    ],
)
def test_the_probes_that_differ_on_spark_are_rewritten(macros, expression, spark):
    assert to_spark(f"SELECT {expression} AS x FROM t", macros) == f"SELECT {spark} AS x FROM t"
