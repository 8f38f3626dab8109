"""DuckDB DDL generated from the SQLModel classes in ``schemas.tables``.

The classes are the single source of truth. Loaded rows live in immutable Parquet
files (the lake, see ``pipeline.store``); each raw table is a view over its files
whose column list and types are generated here, so every file is read with the
class's types. ``tests/test_schemas_and_build.py`` checks the views against the
classes. No key constraint exists: the natural key is enforced by ingest
(duplicates and conflicts are quarantined) and recorded in the view's comment.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy import BigInteger, Boolean, Date, DateTime, Integer, Numeric, String
from sqlmodel.sql.sqltypes import AutoString
from sqlalchemy.sql.type_api import TypeEngine
from sqlmodel import SQLModel


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
    default: object = None
    """The value an optional column takes when a file leaves it out or empty (``Field(default=...)``), if any."""

    @property
    def default_sql(self) -> str | None:
        """The default as a SQL literal of the column's type (None: the column has none, it stays NULL)."""
        if self.default is None:
            return None
        if isinstance(self.default, str):
            return "'" + self.default.replace("'", "''") + "'"
        return f"CAST({self.default} AS {self.duckdb_type})"


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
                default=None if field.is_required() else field.default,
            )
        )
    canonical = [c for c in specs if c.name not in PROVENANCE_COLUMNS]
    provenance = [replace(c, required=True) for c in specs if c.name in PROVENANCE_COLUMNS]
    return canonical + provenance


def canonical_columns(model: type[SQLModel]) -> list[ColumnSpec]:
    """The columns an input file may carry (the ingest allow-list)."""
    return [c for c in columns(model) if c.name not in PROVENANCE_COLUMNS]


def natural_key(model: type[SQLModel]) -> list[str]:
    """The key ingest deduplicates on: the primary-key columns a file carries (none for FOCUS rows)."""
    return [c.name for c in columns(model) if c.primary_key and c.name not in PROVENANCE_COLUMNS]


def table_name(model: type[SQLModel]) -> str:
    return str(model.__tablename__)  # type: ignore[attr-defined]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def raw_view_sql(model: type[SQLModel], parquet_literals: list[str], file_columns: list[set[str]] | None = None) -> str:
    """The raw table as a view over its lake files (each a quoted SQL literal), typed as the class says.

    With no file yet, the view is an empty relation with the same columns and types. ``file_columns``
    (the columns each lake file has) lets a column added to the class after older lake files were
    written read as NULL in those files, instead of breaking the view.
    """
    name = f"{RAW_SCHEMA}.{table_name(model)}"
    if parquet_literals:
        cols = columns(model)
        everywhere = set.intersection(*file_columns) if file_columns else {c.name for c in cols}
        anywhere = set.union(*file_columns) if file_columns else everywhere
        options = "" if all(c.name in everywhere for c in cols) else ", union_by_name = true"
        source = f"read_parquet([{', '.join(parquet_literals)}]{options})"
        select = ", ".join(_column_sql(c, c.name in anywhere) for c in cols)
        return f"CREATE OR REPLACE VIEW {name} AS SELECT {select} FROM {source}"
    empty = ", ".join(f'CAST(NULL AS {c.duckdb_type}) AS "{c.name}"' for c in columns(model))
    return f"CREATE OR REPLACE VIEW {name} AS SELECT {empty} WHERE false"


def _column_sql(c: ColumnSpec, in_files: bool) -> str:
    """A raw view's column: typed; in files written before it existed, its default (else NULL)."""
    value = f'CAST("{c.name}" AS {c.duckdb_type})' if in_files else f"CAST(NULL AS {c.duckdb_type})"
    if c.default_sql is not None:
        value = f"coalesce({value}, {c.default_sql})"
    return f'{value} AS "{c.name}"'


def comment_sql(model: type[SQLModel]) -> list[str]:
    """COMMENT ON statements for a raw view: the class docstring, natural key and field descriptions."""
    name = f"{RAW_SCHEMA}.{table_name(model)}"
    doc = " ".join((model.__doc__ or "").split())
    stmts = [f"COMMENT ON VIEW {name} IS {_quote(doc + ' Natural key: (' + ', '.join(natural_key(model)) + ').')}"]
    stmts += [f"COMMENT ON COLUMN {name}.{c.name} IS {_quote(c.description)}" for c in columns(model)]
    return stmts
