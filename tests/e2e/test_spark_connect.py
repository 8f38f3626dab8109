"""The Spark engine over Spark Connect: `costledger build --engine spark` with ``engine.spark_remote`` set builds on a
server the test starts on 127.0.0.1, to the same marts and intermediates as a DuckDB build of the same ledger.

Each build runs as a command of its own process, as a user runs it: Connect's client (gRPC) keeps threads and
sockets in the process that used it, and this test's worker goes on to start local Spark sessions (test_spark.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from pipeline.base.models import discover
from scripts.marts_equal import copy_ledger
from tests.conftest import ROOT, free_port, wait_listening
from tests.e2e.spark_support import MARKS, assert_equal

pytestmark = MARKS


@dataclass
class Ran:
    exit_code: int
    output: str
    """What the command printed, both streams."""
    stdout: str


def _no_java(*args: object) -> Ran:
    """``costledger args`` in a process of its own that has no Java (no JAVA_HOME, a PATH of the virtualenv alone):
    a build that succeeds there did not start a Spark of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("JAVA_HOME", "SPARK_HOME")}
    env["PATH"] = str(Path(sys.executable).parent)
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *map(str, args)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return Ran(done.returncode, done.stdout + done.stderr, done.stdout)


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    """A Spark Connect server on 127.0.0.1, started from pyspark's own Spark (its spark-connect jar ships with it),
    stopped when the module's tests end: the URL to reach it."""
    import pyspark

    home = Path(pyspark.__file__).parent
    port = free_port()
    tmp_path = tmp_path_factory.mktemp("connect")
    log = (tmp_path / "connect-server.log").open("wb")
    server = subprocess.Popen(
        [
            str(home / "bin" / "spark-submit"),
            "--class",
            "org.apache.spark.sql.connect.service.SparkConnectServer",
            "--name",
            "costledger-test-connect",
            "--master",
            "local[2]",
            "--driver-memory",
            "4g",
            "--conf",
            f"spark.connect.grpc.binding.port={port}",
            "--conf",
            "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.sql.shuffle.partitions=8",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1"},
        start_new_session=True,
    )
    try:
        wait_listening(server, port, 120, tmp_path / "connect-server.log")
        yield f"sc://127.0.0.1:{port}"
    finally:
        os.killpg(server.pid, 15)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait()
        log.close()


def test_the_demo_builds_over_spark_connect_month_after_month_to_duckdbs_ledger(demo_db, tmp_path, connect_server):
    # the demo's first three months, built in full over Spark Connect; then its last month, built from there: the
    # priced requests of the first three are carried over, not computed again, and so are the tasks, the months and
    # the days the new month does not touch. Every mart and intermediate equals the DuckDB build of all four months at
    # once (demo_db; a Spark full build equals that one: test_spark.py).
    landing, later = tmp_path / "landing", tmp_path / "later"
    shutil.copytree(ROOT / "sample_data", landing)
    for kind, name in (("requests", "requests-2026-10.parquet"), ("outcomes", "outcomes-2026-10.csv.gz")):
        (later / kind).mkdir(parents=True)
        (landing / kind / name).rename(later / kind / name)
    settings = tmp_path / "costledger.toml"
    settings.write_text(
        (ROOT / "costledger.toml").read_text(encoding="utf-8")
        + f'\n[engine]\nname = "spark"\nspark_remote = "{connect_server}"\n',
        encoding="utf-8",
    )
    db = tmp_path / "ledger.duckdb"
    # the command's process has no Java: it builds on the server or not at all
    res = _no_java("nightly", landing, "--db", db, "--settings", settings, "--json")
    assert res.exit_code in (0, 4), res.output  # 4: the demo's cometapi invoices are 3 % above metered
    assert json.loads(res.stdout)["models_rebuilt_in_full"][PRICED] == "no earlier build"
    # each model's Spark SQL is kept for the next build, one file a model
    kept = {path: path.stat().st_ino for path in (Path(f"{db}.d") / "spark" / "sql").glob("*.json")}
    assert len(kept) == len(discover())
    for kind in ("requests", "outcomes"):
        for path in (later / kind).iterdir():
            path.rename(landing / kind / path.name)
    res = _no_java("nightly", landing, "--db", db, "--settings", settings, "--json")
    assert res.exit_code in (0, 4), res.output
    summary = json.loads(res.stdout)
    assert summary["files_loaded"] == 2
    # every incremental model went on from the first build: the priced requests of the new files, the tasks (keys)
    # of the new requests and outcomes, the months and days they touch; none was computed again in full
    assert summary["models_rebuilt_in_full"] == {}
    # and no model's SQL was translated again (a translation is kept by writing a new file in its place): the build
    # ran what the first one kept
    assert {path: path.stat().st_ino for path in (Path(f"{db}.d") / "spark" / "sql").glob("*.json")} == kept
    before, after = Path(f"{demo_db}.d") / "work.duckdb", Path(f"{db}.d") / "work.duckdb"
    assert_equal(before, after)
    # the Spark build's published file answers the usual questions: the report reads it
    res = _no_java("report", "--db", db, "--format", "text")
    assert res.exit_code == 0, res.output
    assert "break-even" in res.output.lower()
    # and a DuckDB build after it starts over in full (the state Spark left is not DuckDB's), to the same ledger
    res = _no_java("build", "--db", db, "--settings", ROOT / "costledger.toml", "--json")
    assert res.exit_code in (0, 4), res.output
    assert json.loads(res.stdout)["models_rebuilt_in_full"][PRICED] == "no earlier build"
    assert_equal(before, after)


#: the append model: the first incremental model a build computes
PRICED = "intermediate.int_requests_priced"


def test_a_setting_the_connect_server_keeps_for_itself_stops_the_build_naming_it(demo_db, tmp_path, connect_server):
    settings = tmp_path / "costledger.toml"
    settings.write_text(
        f'[engine]\nspark_remote = "{connect_server}"\nspark_options = {{ "spark.driver.memory" = "8g" }}\n',
        encoding="utf-8",
    )
    (tmp_path / "copy").mkdir()
    db = copy_ledger(demo_db, tmp_path / "copy")
    res = _no_java("build", "--engine", "spark", "--db", db, "--settings", settings)
    assert res.exit_code == 1, res.output
    assert f"the Spark Connect server {connect_server} does not let a session set spark.driver.memory" in res.output


def test_an_unreachable_spark_connect_server_is_a_clear_error_at_once(demo_db, tmp_path):
    port = free_port()
    settings = tmp_path / "costledger.toml"
    settings.write_text(f'[engine]\nspark_remote = "sc://127.0.0.1:{port}"\n', encoding="utf-8")
    (tmp_path / "copy").mkdir()
    db = copy_ledger(demo_db, tmp_path / "copy")
    started = time.monotonic()
    res = _no_java("build", "--engine", "spark", "--db", db, "--settings", settings)
    assert res.exit_code == 1, res.output
    assert f"Spark Connect server sc://127.0.0.1:{port} did not answer: nothing listens at" in res.output, res.output
    assert time.monotonic() - started < 60  # not the client's ten minutes of retries
