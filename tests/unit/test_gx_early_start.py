"""Great Expectations' process starts when a loading command starts (``pipeline.cli.entry``), not once the ledger is
open, and a command that ends without needing it does not wait for its import."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

import pipeline.cli.main
import pipeline.ingest.validate
from pipeline.cli import entry, toc
from tests.conftest import ROOT


@pytest.mark.parametrize(
    "args, expected",
    [
        (["nightly", "--help"], True),
        (["nightly", "landing", "-h"], True),
        (["nightly", "landing"], False),
        (["ingest", "requests", "--", "--help"], False),  # after "--" it is a file name
        ([], False),
    ],
)
def test_asks_help(args, expected):
    assert toc.asks_help(args) is expected


@pytest.mark.parametrize(
    "args, starts",
    [
        (["nightly", "landing"], True),
        (["ingest", "requests", "a.csv"], True),
        (["nightly", "--help"], False),
        (["ingest", "--help"], False),
        (["build"], False),
        (["sql", "select 1"], False),
        (["status"], False),
    ],
)
def test_only_the_loading_commands_start_gx_first_and_stop_it_when_done(monkeypatch, args, starts):
    calls: list[str] = []
    monkeypatch.setattr(pipeline.ingest.validate, "warm_up", lambda: calls.append("warm_up"))
    monkeypatch.setattr(pipeline.ingest.validate, "stop_worker", lambda: calls.append("stop_worker"))
    monkeypatch.setattr(pipeline.cli.main, "run", lambda a: calls.append("run") or 7)
    assert entry(args) == 7  # the command's own exit code comes through
    assert calls == (["warm_up", "run", "stop_worker"] if starts else ["run"])


def test_the_warm_up_is_submitted_before_the_commands_are_imported():
    # in a fresh process: when warm_up is called, neither Typer nor the commands (nor DuckDB) are imported yet
    script = (
        "import sys\n"
        "import pipeline.ingest.validate as v\n"
        "seen = []\n"
        "names = ('typer', 'duckdb', 'pipeline.cli.main')\n"
        "v.warm_up = lambda: seen.append(sorted(m for m in names if m in sys.modules))\n"
        "from pipeline.cli import entry\n"
        "code = entry(['nightly', '/no/such/landing/folder'])\n"
        "print(code, seen)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "1 [[]]", out.stderr


def test_stopping_gx_does_not_wait_for_a_running_call():
    # a call still running (as GX's import is when a command fails at once) is stopped with its process, not waited for
    script = (
        "import os, time\n"
        "from pipeline.ingest.validate import gx_worker, stop_worker\n"
        "pid = gx_worker().submit(os.getpid).result()\n"
        "gx_worker().submit(time.sleep, 300)\n"
        "time.sleep(0.5)\n"
        "t = time.monotonic()\n"
        "stop_worker()\n"  # busy for another 300 s
        "print(round(time.monotonic() - t), os.path.exists(f'/proc/{pid}/status') and "
        "open(f'/proc/{pid}/status').read().split('State:')[1].split()[0] not in ('Z', 'X'))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=200)
    seconds, alive = out.stdout.split()
    assert int(seconds) < 60 and alive == "False", out.stdout
    assert out.stderr == ""


@pytest.mark.slow
def test_a_nightly_that_loads_files_ends_quietly(tmp_path):
    # GX's process, idle once the files are checked, is shut down, not terminated: terminated after GX's work it
    # leaks a semaphore and Python's resource tracker prints a warning at exit
    landing = tmp_path / "landing"
    for kind, name in (("prices", "prices.csv"), ("hardware", "hardware.csv"), ("opex", "opex-2026-07.csv")):
        (landing / kind).mkdir(parents=True)
        shutil.copy(ROOT / "sample_data" / kind / name, landing / kind / name)
    out = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "nightly", str(landing), "--db", str(tmp_path / "l.duckdb")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "3 file(s) loaded" in out.stderr + out.stdout
    assert "Warning" not in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_a_nightly_that_fails_at_once_leaves_one_line_and_no_gx_process(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pipeline.cli",
            "nightly",
            str(tmp_path / "missing"),
            "--db",
            str(tmp_path / "l.duckdb"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [f"error: landing folder {tmp_path / 'missing'} does not exist"]
