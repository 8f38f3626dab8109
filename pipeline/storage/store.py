"""Where the ledger lives on disk, and how a build is published to readers.

Layout for ``--db ledger.duckdb``::

    ledger.duckdb               the PUBLISHED file: what analysts, `costledger sql`,
                                the report and the duckdb CLI open (read-only)
    ledger.duckdb.d/
        work.duckdb             the writer's private file: meta tables, raw views,
                                staging views, intermediate and mart tables
        lake/<table>/<sha>.parquet
                                the loaded rows of each landing file, immutable:
                                written once at ingest, never rewritten
        snapshots/*.duckdb      the last few published files (for rollback)
        tmp/                    DuckDB spill space and files being written
        lock                    one writer at a time (flock)

Why: DuckDB lets one process write a file and no other process read it meanwhile.
The nightly therefore never opens the published file. It builds in ``work.duckdb``,
then writes a *new* small file (marts, meta tables, small intermediate tables, and
views over the lake's Parquet files), checkpoints and closes it, and atomically
renames it over ``ledger.duckdb``. A reader that opened the old file keeps reading
it; the next reader gets the new one; nobody is blocked or sees half a build. What
is copied at publish time is the marts and the manifest, which grow with months and
files, not with rows: request-level data stays in the lake and is referenced, not
copied.

Crash safety: a lake file is written under ``tmp/`` and renamed into the lake
before the manifest row that names it is committed; a file the manifest does not
name is an orphan and is deleted at the next start. The build runs in one
transaction. Publishing writes a temporary file and renames it. So after a
SIGKILL at any point the published file is the old or the new one, and the next
run completes the work.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import duckdb

from pipeline.storage.catalog import init_ledger, sql_literal
from pipeline.storage.db import STORAGE_VERSION, connect_write
from pipeline.base.errors import CostledgerError, ExitCode
from pipeline.base.faults import crashpoint
from pipeline.base.settings import Settings
from pipeline.base.settings_checks import memory_bytes


class LedgerBusy(CostledgerError, RuntimeError):
    """Another costledger process holds the writer lock."""

    exit_code = ExitCode.BUSY


class NotALedger(CostledgerError):
    """The ledger's path names a file that is not a ledger (exit 2: name another)."""

    exit_code = ExitCode.USAGE


class InsufficientDisk(CostledgerError, RuntimeError):
    """Not enough free disk space to load and publish safely."""

    exit_code = ExitCode.DISK


#: Suffix of a snapshot published by a run that loaded nothing and changed no month.
UNCHANGED = "-unchanged"


#: the writer's buffer pool after the build (publishing, the final checkpoint), when the configured one is larger
SMALL_POOL = "512MB"


@dataclass(frozen=True)
class Store:
    published: Path

    @classmethod
    def for_db(cls, db: Path) -> "Store":
        return cls(Path(os.path.abspath(db)))

    @property
    def state(self) -> Path:
        return self.published.with_name(self.published.name + ".d")

    @property
    def work_db(self) -> Path:
        return self.state / "work.duckdb"

    @property
    def lake(self) -> Path:
        return self.state / "lake"

    @property
    def snapshots(self) -> Path:
        return self.state / "snapshots"

    @property
    def tmp(self) -> Path:
        return self.state / "tmp"

    @property
    def spark(self) -> Path:
        """The Spark engine's folder: its builds' Parquet (``build-<time>/<schema>/<model>/``) and its log settings."""
        return self.state / "spark"

    def lake_file(self, table: str, file_hash: str) -> Path:
        return self.lake / table / f"{file_hash}.parquet"

    def ensure_dirs(self) -> None:
        for d in (self.state, self.lake, self.snapshots, self.tmp):
            d.mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------ writer side

    def check_replaceable(self) -> None:
        """Before a writer makes the ledger's folder: a file already at the published file's path that is not a
        ledger (a notes file, another program's DuckDB file) is an error, never replaced by the first publish."""
        if self.state.is_dir() or not self.published.exists():
            return
        if not self.published.is_file():
            raise NotALedger(f"{self.published} is not a file: name the ledger's file with --db or [ledger] db")
        with open(self.published, "rb") as fh:
            head = fh.read(16)
        ledger = False
        if head[8:12] == b"DUCK":
            try:
                con = duckdb.connect(str(self.published), read_only=True)
                try:
                    ledger = bool(con.execute(
                        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'meta' AND table_name = 'runs'"
                    ).fetchall()[0][0])  # fmt: skip
                finally:
                    con.close()
            except duckdb.Error:
                ledger = False
        if not ledger:
            what = "a DuckDB file of another program" if head[8:12] == b"DUCK" else "another file"
            raise NotALedger(
                f"{self.published} exists and is not a costledger ledger ({what}): the first publish would replace "
                "it. Name another file with --db or [ledger] db (nothing was done)"
            )

    @contextmanager
    def writer_lock(self) -> Iterator[None]:
        """Hold the single-writer lock; LedgerBusy if another process has it."""
        self.check_replaceable()
        self.ensure_dirs()
        fd = os.open(self.state / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
                raise LedgerBusy(
                    f"another costledger process (pid {holder}) is writing {self.published}; "
                    "wait for it to finish (readers are not affected)"
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            yield
        finally:
            os.close(fd)  # closing releases the flock

    def open_work(self, settings: Settings) -> duckdb.DuckDBPyConnection:
        """The writer's connection to work.duckdb, with memory limit and spill folder set."""
        self.ensure_dirs()
        try:
            con = connect_write(self.work_db)
        except duckdb.IOException as exc:
            if "Conflicting lock" not in str(exc):
                raise
            holder = re.search(r"held in (.*?) \(PID (\d+)\)", str(exc))
            who = f"{holder.group(1)}, PID {holder.group(2)}" if holder else "another process"
            raise LedgerBusy(
                f"the work file {self.work_db} is open in another process ({who}), for example a duckdb CLI or a "
                "notebook: close it and run again (nothing was done; read the published file instead)"
            ) from None
        temp = settings.temp_directory or str(self.tmp)
        con.execute(f"SET memory_limit = {sql_literal(settings.memory_limit)}")
        con.execute(f"SET temp_directory = {sql_literal(temp)}")
        if settings.threads:
            con.execute(f"SET threads = {int(settings.threads)}")
        # no model relies on insertion order (order-sensitive writes say ORDER BY); dropping it lets
        # large CREATE TABLE AS statements stream instead of buffering (DuckDB's out-of-memory advice)
        con.execute("SET preserve_insertion_order = false")
        init_ledger(con, self.lake)
        return con

    def shrink_pool(self, con: duckdb.DuckDBPyConnection, settings: Settings) -> None:
        """Shrink the writer's buffer pool to ``SMALL_POOL`` once the build is done (a configured limit below that
        stays): clean pages are evicted, nothing is lost. Publishing opens a second database beside it and closing
        checkpoints the run's writes; with the pool still full of the build's pages their allocations came on top
        (at 100 M requests the run's peak RSS: 2.3 -> 2.9-3.0 GiB within a second)."""
        size = memory_bytes(settings.memory_limit)
        if size is None or size > (memory_bytes(SMALL_POOL) or 0):
            try:
                con.execute(f"SET memory_limit = {sql_literal(SMALL_POOL)}")
            except duckdb.Error:
                pass  # pages it cannot evict now: the pool stays as it is

    def close_work(self, con: duckdb.DuckDBPyConnection, settings: Settings) -> None:
        """Close the writer's connection in a small buffer pool (``shrink_pool``)."""
        self.shrink_pool(con, settings)
        con.close()

    def check_disk(self, incoming_bytes: int) -> None:
        """Refuse to start when the disk cannot hold the new lake files, spill and a new published file."""
        self.ensure_dirs()
        published = self.published.stat().st_size if self.published.exists() else 0
        needed = 3 * incoming_bytes + 2 * published + 64 * 1024 * 1024
        free = shutil.disk_usage(self.state).free
        if free < needed:
            raise InsufficientDisk(
                f"only {free / 2**20:,.0f} MiB free on the disk of {self.state}; this run needs about "
                f"{needed / 2**20:,.0f} MiB (3 x {incoming_bytes / 2**20:,.1f} MiB of new files + 2 x the published "
                f"file "
                "+ 64 MiB). Free some space and run again: nothing was changed."
            )

    def remove_orphans(self, con: duckdb.DuckDBPyConnection) -> list[Path]:
        """Delete lake files that neither the manifest nor a snapshot kept for rollback names (a file loaded again
        leaves its earlier lake file to the snapshots that read it), and half-written temporary files (left by a
        crash)."""
        known = {
            row[0]
            for row in con.execute("SELECT lake_file FROM meta.loaded_files WHERE lake_file IS NOT NULL").fetchall()
        }
        known |= self.snapshot_lake_files()
        removed: list[Path] = []
        for path in self.lake.glob("*/*.parquet"):
            if f"{path.parent.name}/{path.name}" not in known:
                path.unlink()
                removed.append(path)
        for folder in (self.tmp, self.snapshots, self.published.parent):
            for pattern in ("*.costledger-tmp", "*.costledger-tmp.wal"):
                for path in folder.glob(pattern):
                    path.unlink()
                    removed.append(path)
        return removed

    # ------------------------------------------------------------ publishing

    def publish(
        self,
        con: duckdb.DuckDBPyConnection,
        run_id: str,
        keep: int,
        tables: list[str],
        views: list[tuple[str, str]],
        changed: bool = True,
    ) -> Path:
        """Write a new published file from the work file and rename it into place atomically.

        A run that loaded nothing and changed no month (``changed`` false) gets a snapshot marked
        ``-unchanged``: pruning keeps the newest ``keep`` snapshots of runs that changed something, so a
        week of empty nightlies never pushes a real one out (see ``prune_snapshots``)."""
        self.ensure_dirs()
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        final = self.snapshots / f"{stamp}-{run_id}{'' if changed else UNCHANGED}.duckdb"
        tmp = final.with_name(final.name + ".costledger-tmp")
        try:
            self._write_published(con, tmp, run_id, tables, views)
        except BaseException:
            # disk full, Ctrl-C, anything: no half-written file (nor its WAL) stays behind
            for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
                leftover.unlink(missing_ok=True)
            raise
        crashpoint("publish.written")
        _fsync(tmp)
        os.replace(tmp, final)
        crashpoint("publish.snapshot_renamed")
        self.link_as_published(final)
        crashpoint("publish.renamed")
        self.prune_snapshots(keep)
        return final

    def _write_published(
        self, con: duckdb.DuckDBPyConnection, tmp: Path, run_id: str, tables: list[str], views: list[tuple[str, str]]
    ) -> None:
        """The new published file's content: the given tables and (name, CREATE VIEW) views, and their comments."""
        pub = duckdb.connect(str(tmp), config={"storage_compatibility_version": STORAGE_VERSION})
        try:
            pub.execute("SET TimeZone = 'UTC'")
            # the raw views name the lake relative to the published file's folder (``raw_view_statements``)
            pub.execute("SET file_search_path = ?", [str(self.published.parent)])
            for schema in ("raw", "meta", "staging", "intermediate", "marts"):
                pub.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
            for table in tables:
                data = con.sql(f"SELECT * FROM {table}").to_arrow_table()
                pub.register("incoming_arrow", data)
                pub.execute(f"CREATE TABLE {table} AS SELECT * FROM incoming_arrow")
                pub.unregister("incoming_arrow")
                crashpoint("publish.table")
            # the views and the comments (a thousand small statements) commit once: each commit of its own costs
            # more than the statement; the tables above commit one by one, so that no table's rows wait in memory
            pub.execute("BEGIN")
            for _, stmt in views:
                pub.execute(stmt)
            for stmt in _comment_statements(con, set(tables) | {name for name, _ in views}):
                pub.execute(stmt)
            pub.execute(
                "CREATE TABLE meta.publication AS SELECT ? AS run_id, current_localtimestamp() AS published_at, "
                "(SELECT count(*) FROM marts.monthly_break_even) AS months",
                [run_id],
            )
            pub.execute("COMMIT")
            pub.execute("CHECKPOINT")
        finally:
            pub.close()

    def snapshot_list(self) -> list[Path]:
        return sorted(self.snapshots.glob("*.duckdb"))

    def snapshot_lake_files(self) -> set[str]:
        """The lake files the snapshots kept for rollback name (an unreadable snapshot names none)."""
        named: set[str] = set()
        for snapshot in self.snapshot_list():
            try:
                con = duckdb.connect(str(snapshot), read_only=True)
                try:
                    rows = con.execute("SELECT lake_file FROM meta.loaded_files WHERE lake_file IS NOT NULL").fetchall()
                finally:
                    con.close()
            except duckdb.Error:
                continue
            named |= {r[0] for r in rows}
        return named

    def prune_snapshots(self, keep: int) -> None:
        """Keep the newest snapshot and the newest ``keep`` of runs that changed something; delete the rest."""
        snaps = self.snapshot_list()
        real = [p for p in snaps if not p.stem.endswith(UNCHANGED)]
        kept = set(real[-keep:]) | set(snaps[-1:])
        for old in snaps:
            if old not in kept:
                old.unlink()

    def snapshot_info(self, snapshot: Path) -> dict[str, object]:
        """What `rollback --list` shows of a snapshot: size, run, publication time, months, whether it changed
        anything."""
        info: dict[str, object] = {
            "name": snapshot.name,
            "mib": snapshot.stat().st_size / 2**20,
            "changed": not snapshot.stem.endswith(UNCHANGED),
        }
        try:
            con = duckdb.connect(str(snapshot), read_only=True)
            try:
                run_id, published_at, months = con.execute(
                    "SELECT run_id, published_at, months FROM meta.publication"
                ).fetchall()[0]
                info.update(run_id=run_id, published_at=str(published_at)[:19], months=months)
            finally:
                con.close()
        except duckdb.Error:
            info.update(run_id="?", published_at="unreadable", months=None)
        return info

    def current_snapshot(self, snaps: list[Path], infos: dict[Path, dict[str, object]] | None = None) -> Path | None:
        """Which of ``snaps`` the published file is: the same file (a hard link, as a publication leaves it), else the
        snapshot of the same run (a ledger copied without its hard links, as ``cp`` or ``rsync`` without ``-H`` copy
        it, has a published file of its own); None when neither. ``infos``: the snapshots' ``snapshot_info`` when the
        caller has read them already (each is a file to open)."""
        if not self.published.exists():
            return None
        for snap in snaps:
            if snap.samefile(self.published):
                return snap
        run_id = self.snapshot_info(self.published)["run_id"]
        infos = infos or {}
        same_run = [snap for snap in snaps if (infos.get(snap) or self.snapshot_info(snap))["run_id"] == run_id]
        return same_run[-1] if run_id != "?" and same_run else None

    def rollback_target(self, to: Path | None = None) -> Path:
        """The snapshot a rollback publishes: ``to``, else the one before the current."""
        snaps = self.snapshot_list()
        if to is None:
            current = self.current_snapshot(snaps)
            older = [s for s in snaps if s != current]
            if not older:
                raise FileNotFoundError(f"no earlier snapshot in {self.snapshots} to roll back to")
            to = older[-1]
        if not to.exists():
            raise FileNotFoundError(f"snapshot {to} does not exist (have: {', '.join(s.name for s in snaps)})")
        return to

    def link_as_published(self, snapshot: Path) -> None:
        """Make ``snapshot`` the published file: a hard link under a temporary name, renamed over it (atomic)."""
        link_tmp = self.published.with_name(self.published.name + ".costledger-tmp")
        if link_tmp.exists():
            link_tmp.unlink()
        os.link(snapshot, link_tmp)
        os.replace(link_tmp, self.published)
        _fsync_dir(self.published.parent)


def _comment_statements(con: duckdb.DuckDBPyConnection, published: set[str]) -> list[str]:
    """COMMENT ON statements that recreate the work file's comments on the published tables and views."""
    stmts = []
    for schema, name, kind, comment in con.execute(
        """SELECT schema_name, table_name, 'TABLE', comment FROM duckdb_tables()
           WHERE comment IS NOT NULL AND database_name = current_database()
           UNION ALL
           SELECT schema_name, view_name, 'VIEW', comment FROM duckdb_views()
           WHERE comment IS NOT NULL AND NOT internal AND database_name = current_database()"""
    ).fetchall():
        if f"{schema}.{name}" in published:
            stmts.append(f"COMMENT ON {kind} {schema}.{name} IS {sql_literal(comment)}")
    for schema, table, column, comment in con.execute(
        "SELECT schema_name, table_name, column_name, comment FROM duckdb_columns() "
        "WHERE comment IS NOT NULL AND database_name = current_database() AND schema_name <> 'main'"
    ).fetchall():
        if f"{schema}.{table}" in published:
            stmts.append(f"COMMENT ON COLUMN {schema}.{table}.{column} IS {sql_literal(comment)}")
    return stmts


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
