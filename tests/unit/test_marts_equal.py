"""scripts/marts_equal.py, the check that two builds (two versions, or two engines) left the same marts: values, and
the columns and their types. Each case is two small DuckDB files made here."""

from __future__ import annotations

import duckdb
import pytest

from scripts.marts_equal import compare


def _ledger(path, ddl: str) -> str:
    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA marts")
    con.execute(ddl)
    con.close()
    return str(path)


@pytest.mark.parametrize(
    ("before", "after", "equal"),
    [
        # whole numbers are the same value in any integer type and in DECIMAL(p, 0) (Spark's form of HUGEINT)
        ("n BIGINT", "n HUGEINT", True),
        ("n BIGINT", "n DECIMAL(38, 0)", True),
        # a DECIMAL's precision bounds it; its scale is what it means
        ("x DECIMAL(18, 2)", "x DECIMAL(38, 2)", True),
        ("x DECIMAL(38, 2)", "x DECIMAL(38, 3)", False),
        # the same digits, another instant
        ("t TIMESTAMP", "t TIMESTAMPTZ", False),
        ("d DATE", "d TIMESTAMP", False),
        ("s VARCHAR", "s INTEGER", False),
    ],
)
def test_columns_compare_by_type_family(tmp_path, before, after, equal):
    name, _ = before.split(" ", 1)
    value = {"n": "7", "x": "1.5", "t": "TIMESTAMP '2026-01-01 00:00:00'", "d": "DATE '2026-01-01'", "s": "'7'"}[name]
    a = _ledger(
        tmp_path / "a.duckdb", f"CREATE TABLE marts.m AS SELECT CAST({value} AS {before.split(' ', 1)[1]}) AS {name}"
    )
    b = _ledger(
        tmp_path / "b.duckdb", f"CREATE TABLE marts.m AS SELECT CAST({value} AS {after.split(' ', 1)[1]}) AS {name}"
    )
    ((table, same, detail),) = compare(a, b, ["marts"])
    assert (table, same) == ("marts.m", equal), detail
    if not equal:
        assert "types that differ" in detail


def test_a_column_on_one_side_only_is_a_difference(tmp_path):
    a = _ledger(tmp_path / "a.duckdb", "CREATE TABLE marts.m AS SELECT 1 AS k")
    b = _ledger(tmp_path / "b.duckdb", "CREATE TABLE marts.m AS SELECT 1 AS k, 2 AS extra")
    ((_, same, detail),) = compare(a, b, ["marts"])
    assert not same and "columns on one side only: extra" in detail


def test_equal_tables_with_doubles_to_twelve_digits_are_equal(tmp_path):
    # 0.1 + 0.2 in binary floating point is 0.30000000000000004
    summed = "CAST(0.1 AS DOUBLE) + CAST(0.2 AS DOUBLE)"
    a = _ledger(tmp_path / "a.duckdb", f"CREATE TABLE marts.m AS SELECT {summed} AS r, 1 AS k")
    b = _ledger(tmp_path / "b.duckdb", "CREATE TABLE marts.m AS SELECT CAST(0.3 AS DOUBLE) AS r, 1 AS k")
    ((_, same, detail),) = compare(a, b, ["marts"])
    assert same, detail
