"""Runs that loaded nothing never push real snapshots out of keep_snapshots (issue #13)."""

import csv

from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.store import Store
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
