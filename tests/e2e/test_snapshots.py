"""Runs that loaded nothing never push real snapshots out of keep_snapshots."""

import csv

from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.storage.store import Store
from tests.conftest import request


def test_empty_nightlies_keep_the_real_snapshots(tmp_path):
    landing, db = tmp_path / "l", tmp_path / "l.duckdb"
    (tmp_path / "s.toml").write_text("[ledger]\nkeep_snapshots = 2\n")
    (landing / "requests").mkdir(parents=True)

    def deliver(name, rid):
        with (landing / "requests" / name).open("w", newline="") as fh:
            row = request(rid, rid, "2026-07-10T10:00:00Z")
            w = csv.DictWriter(fh, fieldnames=list(row))
            w.writeheader()
            w.writerow(row)

    def nightly():
        res = CliRunner().invoke(
            app, ["nightly", str(landing), "--db", str(db), "--settings", str(tmp_path / "s.toml")]
        )
        assert res.exit_code == 0, res.output

    deliver("a.csv", "a")
    nightly()
    deliver("b.csv", "b")
    nightly()
    for _ in range(3):  # three nights with nothing new
        nightly()
    snaps = [p.name for p in Store.for_db(db).snapshot_list()]
    # kept: the two runs that loaded data (keep_snapshots = 2) and the newest, which loaded nothing
    assert len(snaps) == 3, snaps
    assert [s.endswith("-unchanged.duckdb") for s in snaps] == [False, False, True]
    res = CliRunner().invoke(app, ["rollback", "--list", "--db", str(db), "--settings", str(tmp_path / "s.toml")])
    assert res.exit_code == 0 and "loaded nothing, changed no month" in res.output and "published at" in res.output


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
