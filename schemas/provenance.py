"""Where a loaded row came from: the two columns every raw table has."""

from __future__ import annotations

from sqlalchemy import BigInteger, String
from sqlmodel import Field, SQLModel


class Provenance(SQLModel):
    """Where a loaded row came from (every raw table has these two columns)."""

    source_file_hash: str = Field(
        sa_type=String,
        nullable=False,
        description="SHA-256 of the landing file this row was loaded from (meta.loaded_files.file_hash).",
    )
    source_line: int = Field(
        sa_type=BigInteger,
        nullable=False,
        description="Line of the row in its landing file (CSV: 2 is the first data row; JSONL: 1-based line; Parquet: "
        "1-based row).",
    )
