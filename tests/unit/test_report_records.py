"""The report's typed records hold to their marts: every field is a column of the mart it names, of a type whose
values the field's annotation admits. A renamed or retyped column fails here, not on the page."""

from __future__ import annotations

from dataclasses import fields
from decimal import Decimal


from tests.conftest import open_published

from pipeline.serve.records import RECORDS

#: the Python type DuckDB gives each column type family the records use
PYTHON_OF = {
    "DECIMAL": Decimal,
    "DOUBLE": float,
    "BIGINT": int,
    "INTEGER": int,
    "BOOLEAN": bool,
    "VARCHAR": str,
    "DATE": "date",
}


def _admits(annotation: str, column_type: str) -> bool:
    """Whether a field annotated ``annotation`` (as written in the source) holds the values of ``column_type``."""
    if column_type.endswith("[]"):
        return annotation.startswith("list[")
    family = column_type.split("(", 1)[0]
    want = PYTHON_OF.get(family)
    if want is None:
        return False
    name = want if isinstance(want, str) else want.__name__
    return annotation.split(" | ", 1)[0].split(".")[-1] == name


def test_every_field_is_a_column_of_its_mart_with_a_type_it_admits(demo_db):
    con = open_published(demo_db)
    try:
        for record in RECORDS:
            schema, table = record.MART.split(".")
            columns = dict(
                con.execute(
                    "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ?",
                    [schema, table],
                ).fetchall()
            )
            assert columns, record.MART
            for f in fields(record):
                assert f.name in columns, f"{record.__name__}.{f.name} is not a column of {record.MART}"
                column_type = columns[f.name]
                if column_type.startswith("STRUCT"):
                    assert str(f.type).startswith("list["), (f.name, f.type)
                    continue
                assert _admits(str(f.type), column_type), (record.__name__, f.name, f.type, column_type)
    finally:
        con.close()


def test_a_row_without_a_field_s_column_is_an_error_naming_it():
    (record,) = [r for r in RECORDS if r.__name__ == "BreakEvenMonth"]
    row = {f.name: None for f in fields(record)}
    assert record.from_row(row).month is None  # every column present: a record
    del row["saving_usd"]
    try:
        record.from_row(row)
    except KeyError as exc:
        assert "saving_usd" in str(exc) and "marts.monthly_break_even" in str(exc)
    else:
        raise AssertionError("a row without saving_usd made a record")


def test_the_check_above_can_fail():
    # a DOUBLE column under a Decimal field, a missing list, an unknown type: each would fail the test above
    assert not _admits("Decimal | None", "DOUBLE")
    assert not _admits("str | None", "VARCHAR[]")
    assert not _admits("int | None", "HUGEINT")
    assert _admits("Decimal | None", "DECIMAL(38,12)") and _admits("dt.date", "DATE")
