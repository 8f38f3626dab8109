"""A raw view is refreshed when it is read, not once per file loaded.

Loading a file marks its kind's raw view stale in the file's transaction; the view is rebuilt from the manifest
before ingest reads it (the rows a duplicate key points at, exchange rates, prices), once a load is done, and when
a ledger is opened. These tests load several files in one run, so that a later file reads what an earlier one
loaded while the view has not yet been refreshed: each fails if that read does not refresh first.
"""

from __future__ import annotations

import json

import duckdb

import pytest

from pipeline.storage.catalog import refresh_stale_raw_views
from pipeline.storage.lake import file_sha256
from pipeline.run.nightly import Run
from pipeline.base.settings import Settings
from pipeline.storage.store import Store
from tests.conftest import PRICE_MOONSHOT, Ledger, request, write_csv

R1 = request("r1", "t1", "2026-07-01T10:00:00Z", output_tokens=10)
R2 = request("r2", "t2", "2026-07-01T11:00:00Z", output_tokens=20)
R3 = request("r3", "t3", "2026-07-01T12:00:00Z", output_tokens=30)


@pytest.fixture
def run_of(tmp_path):
    """Load (kind, path) pairs in one Run (a file is staged while the one before it is open or committed: either
    way the raw view lags the manifest when the file reads it); yields the open Run for queries on its
    connection."""
    settings = Settings(db=tmp_path / "ledger.duckdb")
    store = Store.for_db(settings.db)
    runs = []

    def load(pairs):
        run = Run(store, settings, "test")
        run.__enter__()
        runs.append(run)
        run.load(pairs)
        return run

    yield load
    for run in runs:
        run.__exit__(None, None, None)


def _rows(run, sql):
    cur = run.con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def test_a_row_repeating_one_loaded_earlier_in_the_run_is_quarantined_naming_that_file(tmp_path, run_of):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    write_csv(a, [R1, R2])  # r1 on line 2, r2 on line 3 (line 1 is the header)
    write_csv(b, [R3, R1])  # r1 again, identical, on line 3
    run = run_of([("requests", a), ("requests", b)])
    assert [(f.status, f.rows_loaded, f.rows_quarantined) for f in run.summary.files] == [
        ("loaded", 2, 0),
        ("loaded", 1, 1),
    ]
    (q,) = _rows(run, "SELECT path, line, reason FROM meta.quarantine")
    assert q["path"] == str(b) and q["line"] == 3
    # the verdict names a.csv's hash and line: read back from the raw view, which a.csv's load had only marked stale
    expected = f"identical duplicate of a row already loaded (file {file_sha256(a)[:12]}, line 2); counted once"
    assert q["reason"] == expected


def test_a_row_conflicting_with_one_loaded_earlier_in_the_run_is_not_loaded(tmp_path, run_of):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    write_csv(a, [R1])
    write_csv(b, [{**R1, "output_tokens": 99}])  # r1 with other content
    run = run_of([("requests", a), ("requests", b)])
    (q,) = _rows(run, "SELECT line, reason FROM meta.quarantine")
    assert q["line"] == 2
    assert q["reason"].startswith(f"conflict: key (request_id, provider) already loaded from {a}, line 2")
    # the first content stays: 10 output tokens
    got = _rows(run, "SELECT request_id, output_tokens FROM raw.requests")
    assert got == [{"request_id": "r1", "output_tokens": 10}]


def test_once_a_load_is_done_the_raw_views_show_every_file_it_loaded(tmp_path, run_of):
    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    write_csv(a, [R1])
    write_csv(b, [R2])
    write_csv(c, [R3])
    run = run_of([("requests", a), ("requests", b), ("requests", c)])
    got = _rows(run, "SELECT request_id, source_file_hash, source_line FROM raw.requests ORDER BY request_id")
    assert got == [
        {"request_id": "r1", "source_file_hash": file_sha256(a), "source_line": 2},
        {"request_id": "r2", "source_file_hash": file_sha256(b), "source_line": 2},
        {"request_id": "r3", "source_file_hash": file_sha256(c), "source_line": 2},
    ]


def test_a_price_overlapping_one_loaded_earlier_in_the_run_is_quarantined(tmp_path, run_of):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    write_csv(a, [{**PRICE_MOONSHOT, "effective_from": "2026-07-01", "effective_to": ""}])
    # from 2026-06-01 to 2026-08-01: overlaps a.csv's price, in force from 2026-07-01 on
    write_csv(b, [{**PRICE_MOONSHOT, "effective_from": "2026-06-01", "effective_to": "2026-08-01"}])
    run = run_of([("prices", a), ("prices", b)])
    (q,) = _rows(run, "SELECT path, line, reason FROM meta.quarantine")
    assert q["path"] == str(b) and q["line"] == 2
    assert "the loaded price runs 2026-07-01 00:00 to the next price" in q["reason"]


def test_a_file_rolled_back_is_never_shown_and_a_refresh_rolled_back_is_owed_again(tmp_path):
    """A file committed owes its raw view a refresh; a refresh rolled back still owes it (the next read shows the
    file); a file rolled back owes none (no read shows it, and none fails on its removed lake file)."""
    from pipeline.ingest.files import abandon_file, ingest_file, open_file, settle_file, stage_file

    a, b, c = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "c.csv"
    write_csv(a, [R1])
    write_csv(b, [R2])
    write_csv(c, [R3])
    settings = Settings(db=tmp_path / "ledger.duckdb")
    store = Store.for_db(settings.db)
    con = store.open_work(settings)
    try:

        def shown() -> list[str]:
            return [r for (r,) in con.execute("SELECT request_id FROM raw.requests ORDER BY ALL").fetchall()]

        assert ingest_file(con, "requests", a, store).status == "loaded"
        opened = open_file(con, stage_file(con, "requests", c, store), store)
        abandon_file(con, opened)  # c rolled back, its lake file removed
        refresh_stale_raw_views(con)
        assert shown() == ["r1"]
        settle_file(con, open_file(con, stage_file(con, "requests", b, store), store))  # b committed
        con.execute("BEGIN TRANSACTION")
        refresh_stale_raw_views(con)
        assert shown() == ["r1", "r2"]
        con.execute("ROLLBACK")  # the refresh undone: the view lists a's file alone again, and owes b's
        refresh_stale_raw_views(con)
        assert shown() == ["r1", "r2"]
    finally:
        con.close()


@pytest.mark.slow
def test_a_nightly_of_many_request_files_deduplicates_across_them(tmp_path):
    """End to end: a landing folder whose third file repeats a row of the first (the sample's shape)."""
    from tests.conftest import cli

    landing, db = tmp_path / "landing", tmp_path / "ledger.duckdb"
    write_csv(landing / "requests" / "day-1.csv", [R1])
    write_csv(landing / "requests" / "day-2.csv", [R2])
    write_csv(landing / "requests" / "day-3.csv", [R3, R1])
    res = cli("nightly", landing, "--db", db, "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert (summary["rows_in"], summary["rows_loaded"], summary["rows_quarantined"]) == (4, 3, 1)


@pytest.mark.slow
def test_a_build_keeps_the_raw_views_current_and_documented_whatever_happened_to_them(ledger):
    """A build remakes a raw view only where its files changed; one dropped behind the ledger's back, or lagging a
    file loaded since, is whole again after the next build, with its column descriptions."""

    def requests_view() -> tuple[list[str], str | None]:
        ids = [r["request_id"] for r in ledger.rows("SELECT request_id FROM raw.requests ORDER BY ALL")]
        (comment,) = ledger.rows(
            "SELECT comment FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'raw' "
            "AND table_name = 'requests' AND column_name = 'output_tokens'"
        )
        return ids, comment["comment"]

    ledger.load("requests", [R1])
    ledger.build()
    ids, comment = requests_view()
    assert ids == ["r1"] and comment  # every raw column carries its description
    ledger.build()  # nothing new: the same view, still described
    assert requests_view() == (["r1"], comment)
    ledger.con.execute("DROP VIEW raw.requests")
    ledger.build()
    assert requests_view() == (["r1"], comment)
    ledger.load("requests", [R2])
    ledger.build()
    assert requests_view() == (["r1", "r2"], comment)


def test_a_ledger_opened_again_shows_its_rows_and_a_raw_view_dropped_between_commands_is_back(tmp_path):
    """Opening a ledger leaves a raw view made with the same statements as it is; one dropped behind the ledger's
    back (a duckdb CLI on the work file) is made again, with its description, by the next command that opens it."""
    first = Ledger(tmp_path, Settings())
    first.load("requests", [R1, R2])
    first.con.close()
    again = Ledger(tmp_path, Settings())
    assert [r["request_id"] for r in again.rows("SELECT request_id FROM raw.requests ORDER BY ALL")] == ["r1", "r2"]
    again.con.close()
    con = duckdb.connect(str(again.store.work_db))
    con.execute("DROP VIEW raw.requests")
    con.close()
    last = Ledger(tmp_path, Settings())
    assert [r["request_id"] for r in last.rows("SELECT request_id FROM raw.requests ORDER BY ALL")] == ["r1", "r2"]
    (described,) = last.rows(
        "SELECT comment FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'raw' "
        "AND table_name = 'requests' AND column_name = 'output_tokens'"
    )
    assert described["comment"]
    last.con.close()


def test_a_ledger_from_before_its_catalogue_was_recorded_gains_the_meta_columns_added_since(tmp_path):
    """A command that opens a ledger runs the meta tables' statements only when they are not the ones that made
    them. A ledger made before that record was kept (no ``meta.raw_views_made``) and before a column was added to
    ``meta.runs`` is brought up to date by the next command that opens it, its rows kept."""
    first = Ledger(tmp_path, Settings())
    first.load("requests", [R1, R2])
    first.con.close()
    con = duckdb.connect(str(first.store.work_db))
    con.execute("ALTER TABLE meta.runs DROP COLUMN alerts")
    con.execute("DROP TABLE meta.raw_views_made")
    con.close()
    again = Ledger(tmp_path, Settings())
    assert [r["request_id"] for r in again.rows("SELECT request_id FROM raw.requests ORDER BY ALL")] == ["r1", "r2"]
    (column,) = again.rows(
        "SELECT comment FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'meta' "
        "AND table_name = 'runs' AND column_name = 'alerts'"
    )
    assert column["comment"].startswith("What became of the run's alerts webhook")
    again.con.close()
