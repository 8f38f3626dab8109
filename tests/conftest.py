"""Shared fixtures: a throw-away ledger that tests fill with a few hand-made rows."""

from __future__ import annotations

import csv
import fcntl
import os
import shutil
import socket
import subprocess
import time
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

import pytest

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

from pipeline.transform.build import BuildResult, build  # noqa: E402
from pipeline.ingest.files import FileResult, ingest_file  # noqa: E402
from pipeline.base.settings import Settings  # noqa: E402
from pipeline.storage.store import Store  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# CI machines are loaded: no property test may fail on the wall clock (a test's own @settings keeps this unless it
# names a deadline)
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("costledger", deadline=None)
_hypothesis_settings.load_profile("costledger")


#: the tiers' marks (``tests/marks.py``)
pytest_plugins = ["tests.marks", "tests.httpserver"]

_UNGROUPED = pytest.StashKey[str]()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup`` a worker marks each grouped test's id with its group, which is how the tests of one
    group (the Spark tests, which share one Spark) reach one worker. A pytest whose ids cannot be marked so would
    spread them silently, each worker starting its own Spark: those tests fail instead, saying why."""
    if not (os.environ.get("PYTEST_XDIST_WORKER") and getattr(config.option, "loadgroup", False)):
        return
    for item in items:
        if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
            item.stash[_UNGROUPED] = (
                "--dist loadgroup did not keep this test with its group: this pytest and pytest-xdist do not work "
                "together (install the versions requirements.lock pins)"
            )


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _UNGROUPED in item.stash:
        pytest.fail(item.stash[_UNGROUPED], pytrace=False)


PRICE_MOONSHOT = {
    "provider": "moonshot",
    "model": "kimi-k3",
    "effective_from": "2026-01-01T00:00:00Z",
    "cache_hit_input_per_million": "0.30",
    "cache_miss_input_per_million": "3.00",
    "output_per_million": "15.00",
    "currency": "USD",
}


def request(request_id: str, task_id: str, started_at: str, route: str = "api", **kw: Any) -> dict[str, Any]:
    """A request row with harmless defaults; override any column with keyword arguments."""
    row = {
        "request_id": request_id,
        "task_id": task_id,
        "attempt": kw.pop("attempt", 1),
        "started_at": started_at,
        "route": route,
        "provider": "moonshot" if route == "api" else "",
        "cluster_id": "c1" if route == "self_hosted" else "",
        "model": "kimi-k3",
        "cache_hit_input_tokens": 0,
        "cache_miss_input_tokens": 0,
        "output_tokens": 0,
        "reasoning_tokens": 0,
        "latency_ms": 1000,
        "status": "ok",
    }
    row.update(kw)
    return row


class Ledger:
    """A ledger in a temp folder: write rows as CSV files, ingest, build, query (the work file)."""

    def __init__(self, folder: Path, settings: Settings) -> None:
        self.folder = folder
        self.settings = replace(settings, db=folder / "ledger.duckdb")
        self.store = Store.for_db(self.settings.db)
        self.con = self.store.open_work(self.settings)
        self._n = 0

    def write(self, kind: str, rows: list[dict[str, Any]], name: str | None = None) -> Path:
        self._n += 1
        path = self.folder / (name or f"{kind}-{self._n}.csv")
        cols: list[str] = []
        for r in rows:
            cols += [c for c in r if c not in cols]
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=cols)
            w.writeheader()
            for r in rows:
                w.writerow({k: ("" if v is None else v) for k, v in r.items()})
        return path

    def load(self, kind: str, rows: list[dict[str, Any]]) -> FileResult:
        return ingest_file(self.con, kind, self.write(kind, rows), self.store)

    def build(self, *select: str, **overrides: Any) -> BuildResult:
        """Every model, or (``select``, as ``build --select`` takes them: ``+marts.x`` for a mart and what it reads)
        only the models a test reads."""
        if overrides:
            self.settings = replace(self.settings, **overrides)
        return build(self.con, self.settings, self.store, selection=select)

    def report_text(self, month: str) -> str:
        """The plain report of ``month``, its whitespace collapsed, after a build of every model (the report reads
        most marts: a test that built only what it reads builds the rest here)."""
        from pipeline.serve.report import plain_report

        self.build()
        return " ".join(plain_report(self.con, month).split())

    def publish(self) -> Path:
        """Publish the work file (as a nightly does); returns the published file's path."""
        from pipeline.transform.build import publication

        tables, views = publication(self.con, self.store)
        self.store.publish(self.con, "test", 3, tables, views)
        return self.settings.db

    def rows(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        cur = self.con.execute(sql, params or [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    def one(self, sql: str, params: list[Any] | None = None) -> dict[str, Any]:
        rows = self.rows(sql, params)
        assert len(rows) == 1, rows
        return rows[0]


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder ``name``, filled by ``make`` once per test run and shared by every pytest-xdist worker (each worker
    would otherwise make its own). Its users only read it. A worker that finds another making it waits for it."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, above the workers' own
    folder = root / f"shared-{name}"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".made").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (folder / ".made").touch()
    return folder


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory) -> Path:
    """The bundled sample data, loaded by one nightly into a fresh ledger, once per test run: its users only read it
    (a test that runs a command that writes works on a copy, ``scripts.marts_equal.copy_ledger``)."""

    def make(folder: Path) -> None:
        db, settings = folder / "ledger.duckdb", ROOT / "costledger.toml"
        res = cli("nightly", ROOT / "sample_data", "--db", db, "--settings", settings)
        # exit 4: the sample's cometapi invoices are 3% above metered, beyond the 1% tolerance, in all four months
        assert res.exit_code == 4, res.output
        assert res.output.count("reconciliation mismatch: cometapi") == 4

    return made_once(tmp_path_factory, "demo", make) / "ledger.duckdb"


@pytest.fixture
def gx_in_this_process(monkeypatch):
    """Great Expectations in a thread of the test's own process, so that a test can replace
    ``pipeline.ingest.validate.validate`` (GX's own process, where it runs otherwise, would not see the replacement)."""
    from concurrent.futures import ThreadPoolExecutor

    import pipeline.ingest.validate as validate_module

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gx")
    monkeypatch.setattr(validate_module, "_WORKER", [pool])
    yield
    pool.shutdown(wait=True)


@pytest.fixture(scope="session")
def new_ledger_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of a ledger just made and closed, once per worker: a test's ledger starts as a copy of it, the same
    files a new ledger has (making its catalogue is some 500 statements; copying it, a few milliseconds)."""
    folder = tmp_path_factory.mktemp("new-ledger")
    Ledger(folder, Settings()).con.close()
    return folder


def new_ledger(folder: Path, template: Path) -> Ledger:
    """A new ledger in ``folder``: a copy of ``template`` (``new_ledger_folder``), opened as every command opens one."""
    shutil.copytree(template, folder, dirs_exist_ok=True)
    return Ledger(folder, Settings())


@pytest.fixture
def ledger(tmp_path: Path, new_ledger_folder: Path):
    led = new_ledger(tmp_path, new_ledger_folder)
    yield led
    led.con.close()


@pytest.fixture
def ledger_factory(tmp_path: Path, new_ledger_folder: Path):
    """Fresh ledgers in one test, each in its own folder (to compare what-ifs)."""
    made: list[Ledger] = []

    def make() -> Ledger:
        made.append(new_ledger(tmp_path / f"ledger{len(made)}", new_ledger_folder))
        return made[-1]

    yield make
    for led in made:
        led.con.close()


def open_published(db: Path | str):  # noqa: ANN201 - a duckdb connection
    """The published file ``db`` read-only, as a DuckDB client opens it: its views name the lake relative to the
    folder that holds it, so the client says where that is (docs/storage.md)."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    if not con.execute("SELECT current_setting('lock_configuration')").fetchall()[0][0]:
        # (a costledger command of this process opened it sandboxed: its instance has the search path already)
        con.execute("SET file_search_path = ?", [str(Path(db).absolute().parent)])
    return con


def sql_tree_with(tmp_path: Path, model_file: str, old: str, new: str) -> Path:
    """A copy of the model tree (``sql/``) under ``tmp_path`` with ``old`` replaced by ``new`` in ``model_file``
    (relative to ``sql/``); ``old`` must be in it, so a test cannot go on editing text the model no longer has."""
    from pipeline.base.models import SQL_DIR

    sql_dir = tmp_path / "sql"
    shutil.copytree(SQL_DIR, sql_dir)
    path = sql_dir / model_file
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{model_file} no longer has {old!r}"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return sql_dir


def D(text: str) -> Decimal:
    return Decimal(text)


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    """Rows as a CSV file with a header (the union of their keys), creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = list(dict.fromkeys(c for r in rows for c in r))
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)


def cli(*args: Any):
    """Invoke the command line in-process with any path-like arguments."""
    from typer.testing import CliRunner

    from pipeline.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens at: for a server a test starts, or an address that refuses."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(server: subprocess.Popen, port: int, seconds: float, log: Path) -> None:
    """Return once ``server`` listens at ``port`` of 127.0.0.1; fail, with the end of its ``log``, if it ends first
    or does not listen within ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        assert server.poll() is None, f"the server ended at start: {log.read_text(errors='replace')[-3000:]}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, f"the server did not listen within {seconds} s"
            time.sleep(0.2)
