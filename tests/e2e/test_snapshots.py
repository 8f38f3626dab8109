"""Runs that loaded nothing never push real snapshots out of keep_snapshots."""

import csv
import shutil
from pathlib import Path

from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.storage.store import Store
from tests.conftest import cli, open_published, request


def _deliver(landing: Path, name: str, rid: str) -> None:
    """A request log of one request, ``rid``, as ``requests/name``."""
    (landing / "requests").mkdir(parents=True, exist_ok=True)
    with (landing / "requests" / name).open("w", newline="") as fh:
        row = request(rid, rid, "2026-07-10T10:00:00Z")
        w = csv.DictWriter(fh, fieldnames=list(row))
        w.writeheader()
        w.writerow(row)


def _run(*args: str | Path) -> str:
    res = cli(*args)
    assert res.exit_code == 0, res.output
    return res.output


def test_empty_nightlies_keep_the_real_snapshots(tmp_path):
    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    (tmp_path / "s.toml").write_text("[ledger]\nkeep_snapshots = 2\n")

    def nightly():
        _run("nightly", landing, "--db", db, "--settings", tmp_path / "s.toml")

    _deliver(landing, "a.csv", "a")
    nightly()
    _deliver(landing, "b.csv", "b")
    nightly()
    snaps_before = [p.name for p in Store.for_db(db).snapshot_list()]
    for _ in range(3):  # three nights with nothing new: nothing built, nothing published
        nightly()
    assert [p.name for p in Store.for_db(db).snapshot_list()] == snaps_before
    for _ in range(3):  # three builds that load nothing: each publishes a snapshot marked unchanged
        _run("build", "--db", db, "--settings", tmp_path / "s.toml")
    snaps = [p.name for p in Store.for_db(db).snapshot_list()]
    # kept: the two runs that loaded data (keep_snapshots = 2) and the newest, which loaded nothing
    assert len(snaps) == 3, snaps
    assert [s.endswith("-unchanged.duckdb") for s in snaps] == [False, False, True]
    res = CliRunner().invoke(app, ["rollback", "--list", "--db", str(db), "--settings", str(tmp_path / "s.toml")])
    assert res.exit_code == 0 and "loaded nothing, changed no month" in res.output and "published at" in res.output


def test_a_ledger_copied_without_its_hard_links_rolls_back_to_the_snapshot_before_its_own(tmp_path):
    # a publication leaves the published file a hard link to its snapshot; a copy of the ledger made as cp, or rsync
    # without -H, make it has a published file of its own. A rollback still tells which snapshot it is (its run) and
    # publishes the one before it, and the snapshot list marks it
    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    _deliver(landing, "a.csv", "a")
    _run("nightly", landing, "--db", db)
    _deliver(landing, "b.csv", "b")
    _run("nightly", landing, "--db", db)
    shutil.copy(db, tmp_path / "copy.duckdb")
    (tmp_path / "copy.duckdb").replace(db)  # the same bytes, no longer the snapshot's file
    first, second = Store.for_db(db).snapshot_list()
    assert not second.samefile(db)
    listed = _run("rollback", "--list", "--db", db).splitlines()
    assert [line[:1] for line in listed if first.name in line or second.name in line] == [" ", "*"]
    _run("rollback", "--db", db)
    assert first.samefile(db)
    con = open_published(db)
    try:
        assert con.execute("SELECT task_id FROM raw.requests").fetchall() == [("a",)]  # b.csv's request taken back
    finally:
        con.close()


class _Recorder:
    """A DuckDB connection that notes the memory limit in force when it is closed."""

    def __init__(self) -> None:
        import duckdb

        self.con = duckdb.connect()
        self.limit_at_close: str | None = None

    def execute(self, sql: str, *args):  # type: ignore[no-untyped-def]
        return self.con.execute(sql, *args)

    def close(self) -> None:
        self.limit_at_close = self.con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        self.con.close()


def test_the_writer_closes_in_a_small_buffer_pool(tmp_path):
    # closing checkpoints the run's writes: the pool is shrunk to 512MB first (488.2 MiB = 512e6 bytes), unless the
    # configured limit is already smaller (256MB stays 256MB: never raised)
    from dataclasses import replace

    from pipeline.base.settings import Settings

    store = Store.for_db(tmp_path / "l.duckdb")
    cases = [("4GB", "488.2 MiB"), ("80%", "488.2 MiB"), ("600MB", "488.2 MiB")]
    cases += [("512MB", "488.2 MiB"), ("256MB", "244.1 MiB")]
    for configured, at_close in cases:
        rec = _Recorder()
        rec.con.execute(f"SET memory_limit = '{configured}'")
        store.close_work(rec, replace(Settings(), memory_limit=configured))  # type: ignore[arg-type]
        assert rec.limit_at_close == at_close, configured
