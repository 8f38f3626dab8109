"""What the operating system says is not a bug: one line and the documented exit code, never "please report it"."""

import subprocess
import sys
import time

import duckdb

from pipeline.cli.main import run
from tests.conftest import PRICE_MOONSHOT, cli, request, write_csv


def small_landing(tmp_path):
    root = tmp_path / "landing"
    write_csv(root / "prices" / "prices.csv", [PRICE_MOONSHOT])
    write_csv(root / "requests" / "r.csv", [request("r1", "t1", "2026-07-10T10:00:00Z")])
    return root, tmp_path / "ledger.duckdb"


def test_a_reader_holding_the_work_file_makes_the_nightly_exit_5_naming_it(tmp_path, capsys):
    root, db = small_landing(tmp_path)
    assert cli("nightly", root, "--db", db).exit_code == 0
    work = tmp_path / "ledger.duckdb.d" / "work.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, time; c = duckdb.connect({str(work)!r}, read_only=True); "
            "print('open', flush=True); time.sleep(60)",
        ],  # fmt: skip
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "open"
        code = run(["nightly", str(root), "--db", str(db)])
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err
    assert code == 5, err
    assert "is open in another process" in err and f"PID {holder.pid}" in err and "please report" not in err


def test_a_full_disk_while_committing_exits_6(tmp_path, monkeypatch, capsys):
    import pipeline.run.nightly as nightly

    root, db = small_landing(tmp_path)

    def build(*args, **kwargs):  # the build's commit meets a full disk
        raise duckdb.TransactionException("TransactionContext Error: Failed to commit: No space left on device")

    monkeypatch.setattr(nightly, "build", build)
    assert run(["nightly", str(root), "--db", str(db)]) == 6
    err = capsys.readouterr().err
    assert "the disk is full" in err and "please report" not in err


def test_an_output_path_that_is_a_folder_or_a_full_device_is_one_line(tmp_path, capsys):
    root, db = small_landing(tmp_path)
    assert cli("nightly", root, "--db", db).exit_code == 0
    folder = tmp_path / "reports"
    folder.mkdir()
    assert run(["report", "--db", str(db), "--out", str(folder)]) == 1
    err = capsys.readouterr().err
    assert "Is a directory" in err and "please report" not in err and "Traceback" not in err
    assert run(["report", "--db", str(db), "--format", "md", "--out", "/dev/full"]) == 6
    err = capsys.readouterr().err
    assert "No space left on device" in err and "please report" not in err


def test_ctrl_c_while_a_result_is_fetched_exits_130(tmp_path, monkeypatch, capsys):
    import pipeline.serve.shell as shell

    root, db = small_landing(tmp_path)
    assert cli("nightly", root, "--db", db).exit_code == 0

    def check(con, text):  # DuckDB's Python client reports Ctrl-C during a fetch as this RuntimeError
        raise RuntimeError("Query interrupted")

    monkeypatch.setattr(shell, "check", check)
    assert run(["sql", "select 1", "--db", str(db)]) == 130
    assert "interrupted" in capsys.readouterr().err


def test_sample_refuses_a_folder_that_is_not_empty(tmp_path):
    landing = tmp_path / "landing"
    write_csv(landing / "requests" / "real.csv", [request("r1", "t1", "2026-07-10T10:00:00Z")])
    before = sorted(p.name for p in landing.rglob("*"))
    res = cli("sample", "--out", landing)
    assert res.exit_code == 2 and "is not empty" in res.output and "--force" in res.output
    assert sorted(p.name for p in landing.rglob("*")) == before
    started = time.perf_counter()
    assert cli("sample", "--out", landing, "--force").exit_code == 0
    assert (landing / "requests" / "real.csv").exists() and len(list(landing.rglob("*.csv*"))) > 2
    assert time.perf_counter() - started < 120


def test_a_link_back_up_inside_the_landing_folder_is_not_walked(tmp_path):
    import json

    root, db = small_landing(tmp_path)
    (root / "requests" / "loop").symlink_to("..")  # requests/loop/requests/loop/... and the other kinds' folders
    (root / "requests" / "self").symlink_to(".")
    res = cli("nightly", root, "--db", db, "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    # the price list is read once, as prices (never as requests through the link); one request file
    assert summary["files_loaded"] == 2 and summary["rows_loaded"] == 2
    not_read = {f["path"]: f["message"] for f in summary["files"] if f["status"] == "skipped"}
    assert not_read == {
        str(root / "requests" / "loop"): "not read: a link to a folder already read or above",
        str(root / "requests" / "self"): "not read: a link to a folder already read or above",
    }


def test_after_ingest_the_command_says_what_publishes_it(tmp_path):
    root, db = small_landing(tmp_path)
    res = cli("ingest", "requests", root / "requests" / "r.csv", "--db", db)
    assert res.exit_code == 0, res.output
    assert "not published yet: `costledger build` builds and publishes what was loaded" in " ".join(res.stdout.split())
    assert cli("build", "--db", db).exit_code == 0
    status = cli("status", "--db", db)
    # every row of the one request file loaded: no empty table of reasons, a sentence
    assert status.exit_code == 0 and "No row has been quarantined." in status.stdout
    assert "Top quarantine reasons" not in status.stdout
