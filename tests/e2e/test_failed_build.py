"""A failed build never poisons the next night: the files the failing run loaded are taken back, so a bad file removed
from the landing folder is a bad file gone, and one still there is loaded again by the next run."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from pipeline.base.faults import at
from pipeline.transform.build import ModelFailed
from tests.conftest import cli, open_published, PRICE_MOONSHOT, request, write_csv

pytestmark = pytest.mark.slow


def _fail_the_build() -> None:
    raise ModelFailed("build rolled back: model marts.x (sql/marts/x.sql) failed: Out of Range Error: a test's failure")


def _landing(root: Path) -> Path:
    landing = root / "landing"
    write_csv(landing / "prices" / "prices.csv", [PRICE_MOONSHOT])
    # 1,000,000 cache-miss tokens x $3.00 / 1e6 = $3.00
    write_csv(
        landing / "requests" / "july.csv", [request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=10**6)]
    )
    return landing


def _published(db: Path, sql: str) -> list[tuple]:
    con = open_published(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_a_file_whose_build_failed_and_was_then_removed_is_gone(tmp_path):
    landing, db = _landing(tmp_path), tmp_path / "ledger.duckdb"
    assert cli("nightly", landing, "--db", db).exit_code == 0
    # a second file arrives, and the build that would take it in fails
    write_csv(
        landing / "requests" / "august.csv",
        [request("r2", "t2", "2026-08-10T10:00:00Z", cache_miss_input_tokens=10**6)],
    )
    with at("build.model", _fail_the_build):
        res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 1, res.output
    assert "the 1 file(s) this run loaded were taken back" in res.output
    assert "please report" not in res.output
    # the published ledger is the first night's; the work file holds nothing of August
    assert _published(db, "SELECT count(*) FROM raw.requests") == [(1,)]
    # the file is removed from the landing folder: the next nightly publishes, and August is nowhere
    (landing / "requests" / "august.csv").unlink()
    res = cli("nightly", landing, "--db", db, "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["files_loaded"] == 0
    assert _published(db, "SELECT request_id FROM raw.requests") == [("r1",)]
    assert _published(db, "SELECT month, metered_usd FROM marts.monthly_reconciliation") == [(dt.date(2026, 7, 1), 3)]


def test_a_file_whose_build_failed_is_loaded_again_by_the_next_run(tmp_path):
    landing, db = _landing(tmp_path), tmp_path / "ledger.duckdb"
    with at("build.model", _fail_the_build):
        res = cli("nightly", landing, "--db", db)
    assert res.exit_code == 1, res.output
    assert "the 2 file(s) this run loaded were taken back" in res.output
    res = cli("nightly", landing, "--db", db, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["files_loaded"] == 2  # not skipped as "already loaded"
    # rows in = loaded + quarantined, once: one request, one price, no row twice
    assert _published(db, "SELECT count(*) FROM raw.requests") == [(1,)]
    assert _published(db, "SELECT count(*), sum(rows_loaded) FROM meta.loaded_files") == [(2, 2)]
