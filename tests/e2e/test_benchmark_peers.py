"""The benchmark's peers compute the same marts as costledger, so the comparison is of the same work.

Three independent implementations of the contract marts on the same landing files: costledger's nightly, the
analyst's DuckDB script (benchmarks/analyst.sql) and the pandas notebook (benchmarks/notebook.py). They must agree
to the cent; and the checker that says so must catch a cent's difference.
"""

from __future__ import annotations

import importlib.util
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest
from typer.testing import CliRunner

from benchmarks.benchmark import ANALYST_SQL, NOTEBOOK, PeerCheck, Step, compare_peers, table
from pipeline.cli import app
from pipeline.sample.large import write_large_sample
from tests.conftest import ROOT, made_once


@pytest.fixture(scope="module")
def peers(tmp_path_factory) -> dict[str, Path]:
    def make(work: Path) -> None:
        landing = work / "landing"
        # two months (July's prices change on 2026-08-16: the price join is exercised), retries, both routes
        write_large_sample(landing, 40_000, months=2)
        res = CliRunner().invoke(app, ["nightly", str(landing), "--db", str(work / "ledger.duckdb")])
        assert res.exit_code == 0, res.output
        con = duckdb.connect(str(work / "analyst.duckdb"))
        con.execute("SET VARIABLE landing = ?", [str(landing)])
        con.execute(ANALYST_SQL.read_text(encoding="utf-8"))
        con.close()
        spec = importlib.util.spec_from_file_location("notebook", NOTEBOOK)
        assert spec and spec.loader
        notebook = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(notebook)
        notebook.monthly(landing).to_csv(work / "notebook.csv", index=False)

    work = made_once(tmp_path_factory, "peers", make)
    return {"db": work / "ledger.duckdb", "analyst": work / "analyst.duckdb", "notebook": work / "notebook.csv"}


def test_peers_agree_with_costledger_to_the_cent(peers):
    compared, differences = compare_peers(peers["db"], peers["analyst"], peers["notebook"])
    assert differences == []
    # route cost: 3 months (July, August and September, whose first day has the extra day's cluster charge) x 2
    # routes x 11 columns = 66; utilisation 3 x 4 = 12; break-even 3 x 10 = 30; reconciliation 2 months x 2
    # providers x 2 = 8; notebook 2 months with requests x 2 routes x 8 = 32. Total 148.
    assert compared == 148


def test_the_check_catches_a_cent(peers, tmp_path):
    import shutil

    analyst = tmp_path / "analyst.duckdb"
    shutil.copy(peers["analyst"], analyst)
    con = duckdb.connect(str(analyst))
    con.execute("UPDATE route_cost SET cost_usd = cost_usd + 0.01 WHERE route = 'api' AND month = DATE '2026-07-01'")
    con.execute("UPDATE break_even SET verdict = 'not_a_verdict' WHERE month = DATE '2026-08-01'")
    con.close()
    _, differences = compare_peers(peers["db"], analyst, None)
    assert len(differences) == 2, differences
    assert any(d.startswith("route_cost.cost_usd at (datetime.date(2026, 7, 1), 'api')") for d in differences)
    assert any(d.startswith("break_even.verdict") for d in differences)


def test_result_table_shows_every_ratio():
    # floor 10 s, analyst 20 s, notebook 40 s, nightly 15 s: (b)/(a) = 15/10 = 1.50x, (b)/(a') = 15/20 = 0.75x,
    # (b)/(a'') = 15/40 = 0.375 -> 0.38x ('.2f' rounds the exact binary 0.375 half to even: 0.38);
    # one more day 0.6 s = 0.6/15 = 4.0 %
    steps = [
        Step(size=10, name="(a) floor", rows=10, seconds=10.0, peak_rss_mb=100.0, exit_code=0),
        Step(size=10, name="(a') analyst's script", rows=10, seconds=20.0, peak_rss_mb=100.0, exit_code=0),
        Step(size=10, name="(a'') pandas notebook", rows=10, seconds=40.0, peak_rss_mb=100.0, exit_code=0),
        Step(size=10, name="(b) nightly", rows=10, seconds=15.0, peak_rss_mb=100.0, exit_code=0),
        Step(size=10, name="(c) one more day", rows=1, seconds=0.6, peak_rss_mb=100.0, exit_code=0),
    ]
    text = table(steps, "costledger benchmark", [PeerCheck(size=10, compared=148, differences=[])])
    assert "(b)/(a) = 1.50x; (b)/(a') = 0.75x; (b)/(a'') = 0.38x" in text
    assert "(c)/(b) = 4.0%" in text
    assert "148 values compared, all equal to the cent" in text
    # a peer that failed (out of memory, exit 1) is said to have failed, and is not compared
    steps[1] = Step(size=10, name="(a') analyst's script", rows=10, seconds=20.0, peak_rss_mb=100.0, exit_code=1)
    text = table(
        steps,
        "costledger benchmark",
        [PeerCheck(size=10, compared=32, differences=[], failed=["(a') analyst's script"])],
    )
    assert "(b)/(a') = 0.75x ((a') failed after that long)" in text
    assert (
        "32 values compared, all equal to the cent. (a') analyst's script failed (exit code above), not compared."
        in text
    )
    # both failed: nothing was compared, and the line does not claim equality
    text = table(
        steps,
        "costledger benchmark",
        [PeerCheck(size=10, compared=0, differences=[], failed=["(a') analyst's script", "(a'') notebook"])],
    )
    assert "0 values compared, no peer left to compare. (a') analyst's script failed" in text
    assert "all equal" not in text


def test_peak_memory_counts_a_step_and_the_processes_it_starts_together():
    # the parent holds 200 MB and starts a child that holds 200 MB while the parent still holds its own: together
    # at least 400 MB, where wait4's ru_maxrss (the largest single process) would say about 220
    import sys

    from benchmarks.benchmark import run_measured

    script = (
        "import subprocess, sys, time\n"
        "a = bytearray(200 * 2**20)\n"
        "child = 'b = bytearray(200 * 2**20); import time; time.sleep(1.5)'\n"
        "subprocess.run([sys.executable, '-c', child], check=True)\n"
    )
    seconds, peak_mib, code = run_measured([sys.executable, "-c", script])
    assert code == 0 and seconds >= 1.5
    assert peak_mib >= 400


def test_the_lower_bound_does_the_marts_work(peers):
    # benchmarks/lower_bound.py times the marts' heaviest work with no guarantee; its figures must be the ledger's
    # (requests, tasks, accepted tasks per month and route, the API's metered cost to the cent) or it bounds other
    # work. The sample has two months and a price change on 2026-08-16, so the price join is exercised.
    spec = importlib.util.spec_from_file_location("lower_bound", ROOT / "benchmarks" / "lower_bound.py")
    assert spec and spec.loader
    lower = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lower)
    landing = peers["db"].parent / "landing"
    params = {"requests": str(landing / "requests" / "*.parquet")}
    con = duckdb.connect()
    con.execute(lower.PRICES, {"prices": str(landing / "prices" / "*.csv")})
    volume = con.execute(lower.VOLUME, params).fetchall()
    con.execute(f"CREATE TABLE tasks AS {lower.TASK_ROWS}", params)
    accepted = con.execute(lower.ACCEPTED.format(tasks="SELECT * FROM tasks")).fetchall()
    assert sum(row[2] for row in volume) == 40_000  # every request counted once
    assert lower.check(peers["db"], volume, accepted) == []
    # a cent more on one month's metered API cost, or one accepted task fewer, is caught
    api = next(i for i, row in enumerate(volume) if row[1] == "api")
    shifted = [
        tuple(row[:8]) + (row[8] + Decimal("0.01"),) + tuple(row[9:]) if i == api else row
        for i, row in enumerate(volume)
    ]
    assert len(lower.check(peers["db"], shifted, accepted)) == 1
    fewer = [(accepted[0][0], accepted[0][1], accepted[0][2] - 1, *accepted[0][3:])] + accepted[1:]
    assert len(lower.check(peers["db"], volume, fewer)) == 1
