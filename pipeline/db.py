"""Opening the ledger's DuckDB file.

Every write opens the file with ``storage_compatibility_version = v1.5.0``, so
the file stays readable by the standalone DuckDB CLI from pip's ``duckdb-cli``
(1.5.x), which cannot read duckdb 2.0's default storage format. Every
connection runs in UTC, so month boundaries never depend on the machine.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
from pipeline.errors import CostledgerError

STORAGE_VERSION = "v1.5.0"
SCHEMAS = ("raw", "meta", "staging", "intermediate", "marts")


class LedgerNotFound(CostledgerError, FileNotFoundError):
    pass


def connect_write(path: Path | str) -> duckdb.DuckDBPyConnection:
    """A read-write connection (creates the file). One writer process at a time."""
    path = Path(path)
    if str(path) != ":memory:":
        path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path), config={"storage_compatibility_version": STORAGE_VERSION})
    _session(con)
    return con


def connect_read(path: Path | str, lake: Path | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the published file, sandboxed; the file must exist.

    External access is off: no file outside ``lake`` (the ledger's own Parquet lake, which
    the raw views read) can be read, nothing can be written, attached, exported, installed
    or loaded, and the configuration is locked so a query cannot switch it back on.
    """
    path = Path(path)
    if not path.exists():
        raise LedgerNotFound(f"no ledger at {path}: run `costledger nightly LANDING_DIR --db {path}` first")
    con = duckdb.connect(str(path), read_only=True)
    if con.execute("SELECT current_setting('lock_configuration')").fetchall()[0][0]:
        # this process already opened the file sandboxed and DuckDB shares the instance: it is locked as we left it
        return con
    _session(con)
    if lake is not None:
        con.execute("SET allowed_directories = ?", [[str(Path(lake).resolve()) + "/"]])
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def _session(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("SET TimeZone = 'UTC'")
