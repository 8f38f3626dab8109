"""DuckDB DDL generated from the SQLModel classes in ``schemas.tables``.

The classes are the single source of truth. Loaded rows live in immutable Parquet
files (the lake, see ``pipeline.storage.store``); each raw table is a view over its files
whose column list and types are generated here, so every file is read with the
class's types. ``tests/models/test_schemas_and_build.py`` checks the views against the
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


@dataclass(kw_only=True, frozen=True)
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
            return sql_string(self.default)
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


def sql_string(text: str) -> str:
    """A SQL string literal of ``text`` (its quotes doubled): for the statements that cannot bind a value (COMMENT,
    COPY, a view's definition)."""
    return "'" + text.replace("'", "''") + "'"


def raw_view_sql(
    model: type[SQLModel],
    parquet_literals: list[str],
    file_columns: list[set[str]] | None = None,
    superseded_kind: str | None = None,
) -> str:
    """The raw table as a view over its lake files (each a quoted SQL literal), typed as the class says.

    With no file yet, the view is an empty relation with the same columns and types. ``file_columns``
    (the columns each lake file has) lets a column added to the class after older lake files were
    written read as NULL in those files, instead of breaking the view.

    A lake file either carries its provenance (``source_file_hash``, ``source_line``: written by the ledger) or is
    a verbatim copy of a canonical landing file (``pipeline.ingest.files``), named by that file's SHA-256: its
    provenance is read from its name and row number. The two sets are read by one ``read_parquet`` each, under UNION
    ALL; a filter on ``source_file_hash`` prunes files in both (by Parquet statistics, by file name).

    ``superseded_kind``: the kind has rows a correction restated (``meta.superseded_rows``); the view leaves them out.
    """
    name = f"{RAW_SCHEMA}.{table_name(model)}"
    if not parquet_literals:
        empty = ", ".join(f'CAST(NULL AS {c.duckdb_type}) AS "{c.name}"' for c in columns(model))
        return f"CREATE OR REPLACE VIEW {name} AS SELECT {empty} WHERE false"
    cols = columns(model)
    per_file = file_columns or [{c.name for c in cols}] * len(parquet_literals)
    stored = [(lit, fc) for lit, fc in zip(parquet_literals, per_file) if "source_line" in fc]
    verbatim = [(lit, fc) for lit, fc in zip(parquet_literals, per_file) if "source_line" not in fc]
    data = [c for c in cols if c.name not in PROVENANCE_COLUMNS]
    parts = []
    for files, provenance in ((stored, False), (verbatim, True)):
        if not files:
            continue
        literals = [lit for lit, _ in files]
        everywhere = set.intersection(*(fc for _, fc in files))
        anywhere = set.union(*(fc for _, fc in files))
        options = "" if all(c.name in everywhere for c in data) else ", union_by_name = true"
        if provenance:  # a verbatim file's provenance comes from its name and row numbers
            options += ", filename = true, file_row_number = true"
        select = ", ".join(
            _provenance_sql(c.name)
            if provenance and c.name in PROVENANCE_COLUMNS
            else _column_sql(c, c.name in anywhere)
            for c in cols
        )
        parts.append(f"SELECT {select} FROM read_parquet([{', '.join(literals)}]{options})")
    body = " UNION ALL ".join(parts)
    if superseded_kind is not None:
        body = (
            f"SELECT * FROM ({body}) AS r WHERE NOT EXISTS (SELECT 1 FROM meta.superseded_rows AS s WHERE s.kind = "
            f"{sql_string(superseded_kind)} AND s.file_hash = r.source_file_hash AND s.line = r.source_line)"
        )
    return f"CREATE OR REPLACE VIEW {name} AS {body}"


def _provenance_sql(name: str) -> str:
    """A verbatim lake file's provenance: the SHA-256 its name carries, and its row number from 1 (the line
    ``pipeline.ingest.files`` gives a Parquet row)."""
    if name == "source_file_hash":
        return "regexp_extract(filename, '([0-9a-f]{64})\\.parquet$', 1) AS \"source_file_hash\""
    return 'CAST(file_row_number + 1 AS BIGINT) AS "source_line"'


def view_value_sql(c: ColumnSpec, ref: str) -> str:
    """A raw view's value of column ``c`` read from ``ref``: cast to its type, with its default for NULL."""
    value = f"CAST({ref} AS {c.duckdb_type})"
    return f"coalesce({value}, {c.default_sql})" if c.default_sql is not None else value


def _column_sql(c: ColumnSpec, in_files: bool) -> str:
    """A raw view's column: typed; in files written before it existed, its default (else NULL)."""
    quoted = f'"{c.name}"'
    return f"{view_value_sql(c, quoted if in_files else 'NULL')} AS {quoted}"


def comment_sql(model: type[SQLModel]) -> list[str]:
    """COMMENT ON statements for a raw view: the class docstring, natural key and field descriptions."""
    name = f"{RAW_SCHEMA}.{table_name(model)}"
    doc = " ".join((model.__doc__ or "").split())
    stmts = [f"COMMENT ON VIEW {name} IS {sql_string(doc + ' Natural key: (' + ', '.join(natural_key(model)) + ').')}"]
    stmts += [f"COMMENT ON COLUMN {name}.{c.name} IS {sql_string(c.description)}" for c in columns(model)]
    return stmts
