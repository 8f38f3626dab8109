"""The report's typed records are their marts: a record's fields are its mart's columns in the published file, in
their order, and every value of every row of the demo ledger is of its field's type."""

from __future__ import annotations

import datetime as dt
import types
import typing
from dataclasses import fields
from decimal import Decimal

import pytest

from pipeline.serve.records import RECORDS, python_type
from tests.conftest import open_published


def _holds(annotation: typing.Any, value: typing.Any) -> bool:
    """Whether ``value`` is of the field type ``annotation`` (``X | None``, ``list[X]``, ``dict[str, Any]``)."""
    if isinstance(annotation, types.UnionType):
        return any(_holds(a, value) for a in typing.get_args(annotation))
    if annotation is type(None):
        return value is None
    origin = typing.get_origin(annotation)
    if origin is list:
        (item,) = typing.get_args(annotation)
        return isinstance(value, list) and all(_holds(item, v) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    if annotation is dt.date:  # a datetime is a date too: the column's type is the narrower one
        return isinstance(value, dt.date) and not isinstance(value, dt.datetime)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, annotation)


def test_every_record_is_its_mart_and_holds_every_row_of_it(demo_db):
    con = open_published(demo_db)
    try:
        for record in RECORDS:
            schema, table = record.MART.split(".")
            columns = [
                c
                for (c,) in con.execute(
                    "SELECT column_name FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? "
                    "ORDER BY column_index",
                    [schema, table],
                ).fetchall()
            ]
            assert [f.name for f in fields(record)] == columns, record.MART
            cursor = con.execute(f"SELECT * FROM {record.MART}")  # a record's own mart name, not input
            names = [d[0] for d in cursor.description]
            rows = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
            assert rows, f"the demo ledger has no row of {record.MART}: the check would hold nothing"
            for r in record.from_rows(rows):
                for f in fields(record):
                    value = getattr(r, f.name)
                    assert _holds(f.type, value), (record.__name__, f.name, f.type, value)
    finally:
        con.close()


def test_the_type_check_above_can_fail():
    assert not _holds(Decimal | None, 1.5)  # a DOUBLE under a money field
    assert not _holds(list[str] | None, "a")
    assert not _holds(int | None, True)
    assert not _holds(dt.date | None, dt.datetime(2026, 10, 1))
    assert _holds(list[dict[str, typing.Any]] | None, [{"a": 1}]) and _holds(Decimal | None, None)


def test_a_row_without_a_field_s_column_is_an_error_naming_it():
    (record,) = [r for r in RECORDS if r.__name__ == "BreakEvenMonth"]
    row = {f.name: None for f in fields(record)}
    assert record.from_row(row).month is None  # every column present: a record
    del row["saving_usd"]
    with pytest.raises(KeyError, match="marts.monthly_break_even has no column saving_usd"):
        record.from_row(row)


def test_a_declared_type_with_no_python_type_is_an_error_naming_it():
    assert python_type("DECIMAL(38,12)[]") == list[Decimal]
    with pytest.raises(TypeError, match="no Python type for the SQL type UUID"):
        python_type("UUID")
