"""Opening the ledger's DuckDB file.

Every write opens the file with ``storage_compatibility_version = v1.5.0``, so
the file stays readable by the standalone DuckDB CLI from pip's ``duckdb-cli``
(1.5.x), which cannot read duckdb 2.0's default storage format. Every
connection runs in UTC, so month boundaries never depend on the machine.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import duckdb
from pipeline.base.errors import CostledgerError

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


@dataclass(frozen=True)
class ReadLimits:
    """What one read-only session may use: DuckDB's memory limit, a spill folder of its own and its size."""

    memory_limit: str
    spill_directory: Path
    max_spill: str


def connect_read(
    path: Path | str, lake: Path | None = None, limits: ReadLimits | None = None
) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the published file, sandboxed; the file must exist.

    External access is off. The lake files the manifest names (which the raw views read) are the only
    readable paths; no directory is open, so no file can be created or listed. Nothing can be attached,
    exported, installed or loaded, and the configuration is locked so a query cannot switch it back on.
    With ``limits``, the session has that memory limit and spills only into its own folder, up to its size.
    """
    path = Path(path)
    if not path.exists():
        raise LedgerNotFound(f"no ledger at {path}: run `costledger nightly LANDING_DIR --db {path}` first")
    con = duckdb.connect(str(path), read_only=True)
    if con.execute("SELECT current_setting('lock_configuration')").fetchall()[0][0]:
        # this process already opened the file sandboxed and DuckDB shares the instance: it is locked as we left it
        return con
    _session(con)
    # the raw views name the lake relative to the folder that holds the published file: a ledger's folder copied,
    # moved or restored elsewhere reads its own lake
    con.execute("SET GLOBAL file_search_path = ?", [str(path.absolute().parent)])  # every connection of the instance
    if lake is not None:
        con.execute("SET allowed_paths = ?", [lake_paths(con, Path(lake), path.absolute().parent)])
    if limits is not None:
        con.execute("SET memory_limit = ?", [limits.memory_limit])
        con.execute("SET temp_directory = ?", [str(limits.spill_directory)])
        con.execute("SET max_temp_directory_size = ?", [limits.max_spill])
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def lake_paths(con: duckdb.DuckDBPyConnection, lake: Path, base: Path | None = None) -> list[str]:
    """The lake files the ledger's manifest names, as the raw views spell them (relative to ``base``, the published
    file's folder), absolute and resolved."""
    try:
        names = con.execute("SELECT lake_file FROM meta.loaded_files WHERE lake_file IS NOT NULL").fetchall()
    except duckdb.CatalogException:  # a ledger without a manifest has no raw views to read
        return []
    paths = set()
    for (name,) in names:
        paths.add(str(lake / name))
        paths.add(str((lake / name).resolve()))
        if base is not None:
            paths.add(os.path.relpath(lake / name, base))
    return sorted(paths)


def _session(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("SET TimeZone = 'UTC'")
    # DuckDB's progress bar writes to stdout, inside a streamed csv or json result
    con.execute("SET enable_progress_bar = false")
