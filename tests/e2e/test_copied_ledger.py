"""A ledger is a folder you can copy: the published file's views find the lake relative to the folder that holds it,
so a ledger copied, moved or restored elsewhere answers every reading command, and the original may be gone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import cli, open_published

pytestmark = pytest.mark.slow


def _copy_ledger(db: Path, to: Path) -> Path:
    to.mkdir(parents=True)
    shutil.copy2(db, to / db.name)
    shutil.copytree(db.with_name(db.name + ".d"), to / (db.name + ".d"), symlinks=True)
    return to / db.name


def test_a_ledger_copied_then_moved_answers_every_reading_command(demo_db, tmp_path):
    first = _copy_ledger(demo_db, tmp_path / "first")
    moved = tmp_path / "elsewhere" / "backup"
    moved.parent.mkdir()
    shutil.move(first.parent, moved)  # the first copy's folder is gone: nothing can read from it
    db = moved / demo_db.name
    assert not first.exists()
    # the raw requests, read through the lake of the moved folder: the demo's 4 months of requests, as the original
    res = cli("sql", "select count(*) AS n from raw.requests", "--db", db, "--format", "json")
    assert res.exit_code == 0, res.output
    original = open_published(demo_db)
    try:
        (n,) = original.execute("SELECT count(*) FROM raw.requests").fetchone()
    finally:
        original.close()
    assert json.loads(res.stdout) == [{"n": n}] and n > 0
    for args in (
        ["status", "--json"],
        ["export", "focus", "--month", "2026-10", "--out", tmp_path / "f.csv"],
        ["report", "--month", "2026-10", "--format", "json"],
        ["explain", "marts.monthly_break_even.fixed_cost_usd", "--month", "2026-10"],
        ["verify"],
    ):
        res = cli(*args, "--db", db)
        assert res.exit_code == 0, (args, res.output[-2000:])
        assert "please report" not in res.output and "PermissionException" not in res.output
