"""The Spark engine over Spark Connect: `costledger build --engine spark` with ``engine.spark_remote`` set builds on a
server the test starts on 127.0.0.1, to the same marts and intermediates as a DuckDB build of the same ledger.

Each build runs as a command of its own process, as a user runs it: Connect's client (gRPC) keeps threads and
sockets in the process that used it, and this test's worker goes on to start local Spark sessions (test_spark.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from scripts.marts_equal import copy_ledger
from tests.conftest import ROOT, free_port, wait_listening
from tests.e2e.spark_support import MARKS, assert_equal, spark_copy

pytestmark = MARKS


@dataclass
class Ran:
    exit_code: int
    output: str


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
    return Ran(done.returncode, done.stdout + done.stderr)


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
            "3g",
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


def test_the_demo_builds_alike_over_spark_connect_and_on_duckdb(demo_db, tmp_path, connect_server):
    settings = tmp_path / "costledger.toml"
    settings.write_text(
        (ROOT / "costledger.toml").read_text(encoding="utf-8") + f'\n[engine]\nspark_remote = "{connect_server}"\n',
        encoding="utf-8",
    )
    # the build's process has no Java: it builds on the server or not at all
    before, after = spark_copy(demo_db, tmp_path, settings, run=_no_java)
    assert_equal(before, after)
    # the Spark build's published file answers the usual questions: the report reads it
    on_spark = tmp_path / "spark" / demo_db.name
    res = _no_java("report", "--db", on_spark, "--format", "text")
    assert res.exit_code == 0, res.output
    assert "break-even" in res.output.lower()
    # and a DuckDB build after it starts over in full (the Spark build left no incremental state), to the same ledger
    res = _no_java("build", "--db", on_spark, "--settings", ROOT / "costledger.toml")
    assert res.exit_code in (0, 4), res.output
    assert_equal(before, after)


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
