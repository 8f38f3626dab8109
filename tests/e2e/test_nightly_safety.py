"""The nightly never loses or double-counts money and never blocks readers.

* kill test: SIGKILL the nightly at 24 points (reads, validation, lake writes, manifest
  commits, models, build commit, each publish step); the published ledger then opens
  and holds exactly the state before or after the run, and the next run completes it;
* concurrent readers: a reader loop during a nightly sees zero lock errors and only
  complete, consistent states;
* idempotency, same-name conflicts, snapshot invoices, late data, lock, disk check.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline.cli import app
from pipeline.sample.demo import write_sample
from pipeline.storage.store import Store
from scripts.marts_equal import copy_ledger
from tests.conftest import made_once, open_published, ROOT

runner = CliRunner()
SETTINGS = ROOT / "costledger.toml"
AUGUST = (
    "requests/requests-2026-08.jsonl.gz",
    "outcomes/outcomes-2026-08.csv",
    "opex/opex-2026-08.csv",
    "invoices/invoices-2026-08.csv",
)
AUGUST_NAMES = [Path(f).name for f in AUGUST]

#: Every phase once in the run's first file; the states with earlier files already committed (a later file's
#: commit, a crash after the third commit) once each; the build's first and a late model; the publication's steps.
#: (The repeats of each ingest phase in a later file were dropped in 0.7.0: they reach the same states as these.)
CRASH_POINTS = [
    "ingest.read#1",
    "ingest.validated#1",
    "ingest.lake_written#1",
    "ingest.lake_renamed#1",
    "ingest.before_commit#1",
    "ingest.before_commit#2",
    "ingest.committed#1",
    "ingest.committed#3",
    "run.file_done#2",
    "build.model#1",
    "build.model#23",
    "build.before_commit",
    "build.committed",
    "run.before_publish",
    "publish.table#1",
    "publish.written",
    "publish.snapshot_renamed",
    "publish.renamed",
]


def fingerprint(db: Path) -> tuple:
    """What a reader of the published file sees: mart contents, raw row counts, the manifest."""
    con = open_published(db)
    try:
        marts = con.execute(
            "SELECT string_agg(CAST(r AS VARCHAR), '|' ORDER BY month, route) FROM marts.monthly_route_cost r"
        ).fetchone()[0]
        be = con.execute(
            "SELECT string_agg(CAST(b AS VARCHAR), '|' ORDER BY month) FROM marts.monthly_break_even b"
        ).fetchone()[0]
        counts = con.execute(
            "SELECT (SELECT count(*) FROM raw.requests), (SELECT count(*) FROM raw.outcomes), "
            "(SELECT count(*) FROM raw.invoices), (SELECT sum(rows_in) FROM meta.loaded_files), "
            "(SELECT sum(rows_loaded) + sum(rows_quarantined) FROM meta.loaded_files)"
        ).fetchone()
        return marts, be, counts
    finally:
        con.close()


def nightly_process(landing: Path, db: Path, crash_at: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "GX_ANALYTICS_ENABLED": "false"}
    env.pop("COSTLEDGER_CRASH_AT", None)
    if crash_at:
        env["COSTLEDGER_CRASH_AT"] = crash_at
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline.cli",
            "nightly",
            str(landing),
            "--db",
            str(db),
            "--settings",
            str(SETTINGS),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )


@pytest.fixture(scope="module")
def landings(tmp_path_factory) -> tuple[Path, Path]:
    """Landing A (July) and landing B (A + August), small enough for many runs."""

    def make(base: Path) -> None:
        full = base / "B"
        write_sample(full, seed=11, months=2, tasks_per_month=40, scenario="small-team")
        july = base / "A"
        shutil.copytree(full, july)
        for rel in AUGUST:
            (july / rel).unlink()

    base = made_once(tmp_path_factory, "landings", make)
    return base / "A", base / "B"


@pytest.fixture(scope="module")
def reference(landings, tmp_path_factory) -> tuple[Path, tuple, tuple]:
    """A ledger after A (state 'before'), and the fingerprint an uninterrupted run on B gives ('after'). Both
    ledgers stay in their folders (``A/ledger.duckdb``; ``B/ledger.duckdb``, a copy of A's that B's nightly went on
    from): a test that needs one works on a copy (``copy_ledger``)."""
    july, full = landings

    def make(folder: Path) -> None:
        (folder / "A").mkdir()
        db = folder / "A" / "ledger.duckdb"
        assert nightly_process(july, db).returncode in (0, 4)
        (folder / "B").mkdir()
        assert nightly_process(full, copy_ledger(db, folder / "B")).returncode in (0, 4)

    folder = made_once(tmp_path_factory, "reference", make)
    db = folder / "A" / "ledger.duckdb"
    before, after = fingerprint(db), fingerprint(folder / "B" / "ledger.duckdb")
    assert before != after
    return db, before, after


@pytest.fixture
def after_a(reference, tmp_path) -> Path:
    """A copy of the ledger after landing A's nightly (July), in the test's folder."""
    return copy_ledger(reference[0], tmp_path)


@pytest.fixture
def after_b(reference, tmp_path) -> Path:
    """A copy of the ledger after landing A's nightly and then B's (July, then August), in the test's folder."""
    return copy_ledger(reference[0].parent.parent / "B" / "ledger.duckdb", tmp_path)


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_sigkill_leaves_before_or_after_and_next_run_completes(point, landings, reference, tmp_path):
    _, full = landings
    ref_db, before, after = reference
    db = copy_ledger(ref_db, tmp_path)

    crashed = nightly_process(full, db, crash_at=point)
    assert crashed.returncode == -9, f"{point} was never reached: {crashed.stdout[-500:]} {crashed.stderr[-2000:]}"
    assert fingerprint(db) in (before, after), f"after a kill at {point} the published ledger is neither state"

    # the next run (in this process: a crash's leftovers are on disk, not in the process that resumes)
    resumed = cli("nightly", str(full), "--db", str(db))
    assert resumed.exit_code in (0, 4), resumed.output[-2000:]
    assert fingerprint(db) == after
    store = Store.for_db(db)
    con = open_published(db)
    lake = {r[0] for r in con.execute("SELECT lake_file FROM meta.loaded_files WHERE lake_file IS NOT NULL").fetchall()}
    con.close()
    on_disk = {str(p.relative_to(store.lake)) for p in store.lake.glob("*/*.parquet")}
    assert on_disk == lake, "lake files and manifest disagree (orphans or missing files)"
    assert not list(store.state.rglob("*.costledger-tmp"))


def test_readers_never_blocked_and_never_see_half_a_build(landings, reference, tmp_path):
    _, full = landings
    ref_db, before, after = reference
    db = copy_ledger(ref_db, tmp_path)
    duckdb_cli = Path(sys.executable).parent / "duckdb"
    results = {"reads": 0, "during": 0, "after": 0, "errors": [], "states": set(), "cli_reads": 0}
    done = threading.Event()

    def reader() -> None:
        while results["after"] < 5:
            phase = "after" if done.is_set() else "during"
            try:
                con = open_published(db)
                try:
                    run_id, months = con.execute("SELECT run_id, months FROM meta.publication").fetchone()
                    # a complete build: every month of the spine has both routes and one break-even row,
                    # and the self-hosted cost agrees between the two marts
                    bad = con.execute(
                        """SELECT count(*) FROM marts.monthly_break_even b
                           JOIN marts.monthly_route_cost r ON r.month = b.month AND r.route = 'self_hosted'
                           WHERE r.cost_usd <> b.self_hosted_cost_usd"""
                    ).fetchone()[0]
                    n_routes = con.execute("SELECT count(*) FROM marts.monthly_route_cost").fetchone()[0]
                    if bad or n_routes != 2 * months:
                        results["errors"].append(f"inconsistent read: run {run_id}")
                    results["states"].add(run_id)
                finally:
                    con.close()
                results["reads"] += 1
                results[phase] += 1
                if duckdb_cli.exists() and results["reads"] % 10 == 0:
                    cli = subprocess.run(
                        [str(duckdb_cli), "-readonly", str(db), "-c", "select count(*) from marts.monthly_break_even"],
                        capture_output=True,
                        text=True,
                        timeout=60,
                    )
                    if cli.returncode != 0:
                        results["errors"].append(f"duckdb CLI: {cli.stderr.strip()}")
                    results["cli_reads"] += 1
            except Exception as exc:  # a lock error or a torn read is what this test is for
                results["errors"].append(f"{type(exc).__name__}: {exc}")

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        proc = nightly_process(full, db)
    finally:
        done.set()
        thread.join(timeout=120)
    assert proc.returncode in (0, 4), proc.stderr[-2000:]
    assert results["errors"] == []
    assert results["during"] >= 10 and results["cli_reads"] >= 1
    assert fingerprint(db) == after
    # readers saw the old publication during the run, then the new one, nothing in between
    assert len(results["states"]) == 2


def cli(*args: str):
    return runner.invoke(app, [*args, "--settings", str(SETTINGS)])


def test_same_name_different_content_is_a_conflict(tmp_path, landings, after_a):
    july, _ = landings
    landing = tmp_path / "landing"
    shutil.copytree(july, landing)
    db = after_a  # July's files loaded (from another folder: a file's name is its path under its kind folder)
    opex = landing / "opex" / "opex-2026-07.csv"
    opex.write_text(opex.read_text().replace("18000", "19000"))
    res = cli("nightly", str(landing), "--db", str(db))
    assert res.exit_code == 3
    assert "conflict" in res.output and "opex-2026-07.csv" in res.output
    con = open_published(db)
    assert (
        con.execute("SELECT sum(amount) FROM raw.opex WHERE category = 'platform_engineering'").fetchone()[0] == 18000
    )
    con.close()


def test_a_later_invoice_file_restates_its_lines_and_adds_new_ones(ledger):
    line = {
        "provider": "p",
        "invoice_id": "p-07",
        "line_id": "1",
        "period_start": "2026-07-01",
        "period_end": "2026-08-01",
        "line_type": "output",
        "amount": "10.00",
        "currency": "USD",
    }
    ledger.load("invoices", [line, {**line, "line_id": "2", "amount": "5.00"}])
    # a later file of the open period: line 1 restated (12), line 2 not in it (still 5: an invoice split over files
    # adds up), line 3 new (1) -> 12 + 5 + 1 = 18, not 10 + 5 + 12 + 1 = 28
    ledger.load("invoices", [{**line, "amount": "12.00"}, {**line, "line_id": "3", "amount": "1.00"}])
    ledger.build()
    rec = ledger.one("SELECT invoiced_usd FROM marts.monthly_reconciliation")
    assert rec["invoiced_usd"] == 18
    assert ledger.one("SELECT count(*) AS n FROM raw.invoices")["n"] == 4  # history kept


def test_late_file_restates_its_month_and_the_run_log_says_so(tmp_path, landings):
    july, full = landings
    landing = tmp_path / "landing"
    shutil.copytree(full, landing)
    late = landing / "requests" / "requests-2026-08.jsonl.gz"
    late_copy = tmp_path / "late.jsonl.gz"
    shutil.move(late, late_copy)
    db = tmp_path / "l.duckdb"
    assert cli("nightly", str(landing), "--db", str(db)).exit_code in (0, 4)
    shutil.move(late_copy, late)
    res = runner.invoke(app, ["nightly", str(landing), "--db", str(db), "--json", "--settings", str(SETTINGS)])
    import json

    summary = json.loads(res.stdout)
    assert summary["files_loaded"] == 1 and "2026-08-01" in summary["months_changed"]
    assert "2026-07-01" not in summary["months_changed"]
    con = open_published(db)
    log = con.execute("SELECT files_loaded, months_changed, outcome FROM meta.runs ORDER BY started_at").fetchall()
    con.close()
    assert log[-1][0] == 1 and "2026-08-01" in log[-1][1]


def test_second_writer_is_refused_while_readers_still_read(landings, after_a):
    july, _ = landings
    db = after_a
    store = Store.for_db(db)
    with store.writer_lock():
        res = cli("nightly", str(july), "--db", str(db))
        assert res.exit_code == 5 and "another costledger process" in res.output
        assert cli("sql", "select count(*) from marts.monthly_break_even", "--db", str(db)).exit_code == 0


def test_low_disk_refuses_before_writing(tmp_path, landings, monkeypatch):
    july, _ = landings
    db = tmp_path / "l.duckdb"
    monkeypatch.setattr(shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(10**9, 10**9 - 1000, 1000))
    res = cli("nightly", str(july), "--db", str(db))
    assert res.exit_code == 6 and "free" in res.output
    assert not db.exists()


def test_rollback_publishes_the_previous_snapshot(reference, after_b):
    _, first, second = reference  # the states after July's nightly and after August's
    db = after_b
    assert fingerprint(db) == second
    assert cli("rollback", "--db", str(db)).exit_code == 0
    assert fingerprint(db) == first


def test_a_rollback_sticks_through_the_next_nightly(landings, reference, after_b):
    _, full = landings
    _, first, _ = reference  # the state after July's nightly
    db = after_b  # July's nightly, then August's
    res = cli("rollback", "--db", str(db), "--json")
    assert res.exit_code == 0, res.output
    taken = sorted(Path(f["path"]).name for f in json.loads(res.stdout)["rolled_back_files"])
    assert taken == sorted(AUGUST_NAMES)  # the four August files loaded after July's snapshot
    # the next nightly over the same folder: July's state again (before, it republished August), the August files
    # named as rolled back
    again = cli("nightly", str(full), "--db", str(db), "--json")
    assert again.exit_code in (0, 4), again.output
    assert fingerprint(db) == first
    skipped = {
        Path(f["path"]).name: f["message"] for f in json.loads(again.stdout)["files"] if f["status"] == "skipped"
    }
    assert all("rolled back on" in skipped[name] and "costledger reprocess" in skipped[name] for name in AUGUST_NAMES)
    runs = rows_of(db, "select command from meta.runs where command like 'rollback%'")
    assert len(runs) == 1 and runs[0][0].startswith("rollback to ")
    # one August file loaded again by name: it counts again, the others stay out
    back = cli("reprocess", str(full / "opex" / "opex-2026-08.csv"), "--db", str(db))
    assert back.exit_code in (0, 4), back.output
    assert rows_of(db, "select count(*) from meta.loaded_files where path like '%opex-2026-08.csv'") == [(1,)]
    assert rows_of(db, "select count(*) from meta.loaded_files where path like '%requests-2026-08%'") == [(0,)]


def rows_of(db: Path, sql: str) -> list[tuple]:
    con = open_published(db)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_gx_import_starts_before_the_loaded_files_are_recognised(tmp_path, landings, after_a, monkeypatch):
    # A nightly over a landing folder that already loaded its files spends seconds hashing them;
    # GX's import (~5 s) starts beside that hashing when a file's kind and name are new, and not at all when every
    # file is one loaded before
    import pipeline.ingest.files as ingest_module
    import pipeline.storage.lake as lake_module
    import pipeline.ingest.validate as validate_module

    july, full = landings
    landing = tmp_path / "landing"
    shutil.copytree(july, landing)
    db = after_a  # July's files loaded (from another folder: they are told loaded by their content)
    events: list[str] = []
    real_hash = lake_module.file_sha256
    monkeypatch.setattr(validate_module, "warm_up", lambda: events.append("warm_up"))
    for module in (ingest_module, lake_module):  # the files loaded before are hashed ahead (lake.HashAhead)
        monkeypatch.setattr(module, "file_sha256", lambda p: events.append(p.name) or real_hash(p))
    # every file loaded before: hashed, skipped, GX never imported
    assert cli("nightly", str(landing), "--db", str(db)).exit_code in (0, 4)
    assert events and "warm_up" not in events
    # August's files added (names no loaded file has): the warm-up comes before the first file is hashed
    events.clear()
    shutil.copytree(full, landing, dirs_exist_ok=True)
    assert cli("nightly", str(landing), "--db", str(db)).exit_code in (0, 4)
    assert events[0] == "warm_up" and len(events) > 2


def test_files_loaded_before_are_hashed_once_and_a_new_file_s_recorded_hash_is_its_content_s(
    tmp_path, landings, after_a, monkeypatch
):
    # Telling the files loaded before loaded and intact hashes each landing file and its lake file: each landing file
    # once (the build reads lake files, never landing files). A file restated under a known name is new: the hash
    # the ledger records for it is the hash of the content it loaded
    import pipeline.ingest.files as ingest_module
    import pipeline.storage.lake as lake_module

    july, full = landings
    landing = tmp_path / "landing"
    shutil.copytree(july, landing)
    db = after_a  # July's files loaded (from another folder: they are told loaded by their content)
    con = open_published(db)
    loaded = con.execute("SELECT path, lake_file FROM meta.loaded_files").fetchall()
    con.close()
    lake = Store.for_db(db).lake
    landing_before = {Path(p).name for p, _ in loaded}
    lake_before = {(lake / f).name for _, f in loaded if f}
    events: list[str] = []
    real_hash = lake_module.file_sha256

    def spy(p: Path) -> str:
        events.append(p.name)
        return real_hash(p)

    for module in (ingest_module, lake_module):
        monkeypatch.setattr(module, "file_sha256", spy)
    shutil.copytree(full, landing, dirs_exist_ok=True)
    prices = landing / "prices" / "prices.csv"  # restated under the same name: a new file of a known name
    prices.write_text(prices.read_text().replace(",15.00,", ",15.50,"))
    res = cli("nightly", str(landing), "--db", str(db))
    assert res.exit_code in (0, 4), res.output
    hashed = Counter(events)
    assert len(landing_before) > 4 and lake_before <= set(hashed)  # every file loaded before was checked
    assert {n: hashed[n] for n in landing_before - {"prices.csv"}} == {n: 1 for n in landing_before - {"prices.csv"}}
    assert all(hashed[n] >= 1 for n in AUGUST_NAMES)
    con = open_published(db)
    (recorded,) = con.execute(
        "SELECT file_hash FROM meta.loaded_files WHERE path LIKE '%prices.csv' ORDER BY loaded_at DESC LIMIT 1"
    ).fetchone()
    con.close()
    assert recorded == hashlib.sha256(prices.read_bytes()).hexdigest()
