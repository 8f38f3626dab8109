"""Opening the ledger's DuckDB file.

Every write opens the file with ``storage_compatibility_version = v1.5.0``, so
the file stays readable by the standalone DuckDB CLI from pip's ``duckdb-cli``
(1.5.x), which cannot read duckdb 2.0's default storage format. Every
connection runs in UTC, so month boundaries never depend on the machine.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

STORAGE_VERSION = "v1.5.0"
SCHEMAS = ("raw", "meta", "staging", "intermediate", "marts")


class LedgerNotFound(FileNotFoundError):
    pass


def connect_write(path: Path | str) -> duckdb.DuckDBPyConnection:
    """A read-write connection (creates the file). One writer process at a time."""
    path = Path(path)
    if str(path) != ":memory:":
        path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path), config={"storage_compatibility_version": STORAGE_VERSION})
    _session(con)
    return con


def connect_read(path: Path | str) -> duckdb.DuckDBPyConnection:
    """A read-only connection; the file must exist."""
    path = Path(path)
    if not path.exists():
        raise LedgerNotFound(f"no ledger at {path}: run `costledger nightly LANDING_DIR --db {path}` first")
    con = duckdb.connect(str(path), read_only=True)
    _session(con)
    return con


def _session(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("SET TimeZone = 'UTC'")
