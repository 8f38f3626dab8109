"""DuckDB DDL generated from the SQLModel classes in ``schemas.tables``.

The classes are the single source of truth; ``tests/test_schemas.py`` checks the
tables in a database against them. No ``PRIMARY KEY`` constraint is emitted:
at 100M rows DuckDB's ART index costs gigabytes of memory, so the natural key is
enforced by ingest (duplicates and conflicts are quarantined) and audited by
``costledger build``. The key is recorded in the table comment.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import BigInteger, Boolean, Date, DateTime, Integer, Numeric, String
from sqlmodel.sql.sqltypes import AutoString
from sqlalchemy.sql.type_api import TypeEngine
from sqlmodel import SQLModel

from schemas.tables import KINDS

RAW_SCHEMA = "raw"
PROVENANCE_COLUMNS = ("source_file_hash", "source_line")


@dataclass(frozen=True)
class ColumnSpec:
    """One column of a canonical table, as DuckDB sees it."""

    name: str
    duckdb_type: str
    required: bool
    primary_key: bool
    description: str


def duckdb_type(sa_type: TypeEngine) -> str:
    """Map a SQLAlchemy column type onto the DuckDB type the ledger stores."""
    if isinstance(sa_type, Numeric):
        return f"DECIMAL({sa_type.precision},{sa_type.scale})"
    if isinstance(sa_type, BigInteger):
        return "BIGINT"
    if isinstance(sa_type, Integer):
        return "INTEGER"
    if isinstance(sa_type, Boolean):
        return "BOOLEAN"
    if isinstance(sa_type, DateTime):
        return "TIMESTAMP"
    if isinstance(sa_type, Date):
        return "DATE"
    if isinstance(sa_type, (String, AutoString)):
        return "VARCHAR"
    raise TypeError(f"no DuckDB type for {sa_type!r}")


def columns(model: type[SQLModel]) -> list[ColumnSpec]:
    """The columns of a table class, in declaration order (provenance last)."""
    specs = []
    for name, field in model.model_fields.items():
        col = model.__table__.columns[name]  # type: ignore[attr-defined]
        specs.append(
            ColumnSpec(
                name=name,
                duckdb_type=duckdb_type(col.type),
                required=field.is_required(),
                primary_key=bool(col.primary_key),
                description=field.description or "",
            )
        )
    canonical = [c for c in specs if c.name not in PROVENANCE_COLUMNS]
    provenance = [c for c in specs if c.name in PROVENANCE_COLUMNS]
    return canonical + provenance


def canonical_columns(model: type[SQLModel]) -> list[ColumnSpec]:
    """The columns an input file may carry (the ingest allow-list)."""
    return [c for c in columns(model) if c.name not in PROVENANCE_COLUMNS]


def natural_key(model: type[SQLModel]) -> list[str]:
    return [c.name for c in columns(model) if c.primary_key]


def table_name(model: type[SQLModel]) -> str:
    return str(model.__tablename__)  # type: ignore[attr-defined]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def create_table_sql(model: type[SQLModel]) -> list[str]:
    """CREATE TABLE plus COMMENT ON statements for one raw table."""
    name = f"{RAW_SCHEMA}.{table_name(model)}"
    cols = ",\n    ".join(
        f"{c.name} {c.duckdb_type}{' NOT NULL' if c.required else ''}" for c in columns(model)
    )
    doc = " ".join((model.__doc__ or "").split())
    stmts = [
        f"CREATE TABLE IF NOT EXISTS {name} (\n    {cols}\n)",
        f"COMMENT ON TABLE {name} IS {_quote(doc + ' Natural key: (' + ', '.join(natural_key(model)) + ').')}",
    ]
    stmts += [f"COMMENT ON COLUMN {name}.{c.name} IS {_quote(c.description)}" for c in columns(model)]
    return stmts


def all_raw_ddl() -> list[str]:
    stmts = [f"CREATE SCHEMA IF NOT EXISTS {RAW_SCHEMA}"]
    for model in KINDS.values():
        stmts += create_table_sql(model)
    return stmts
