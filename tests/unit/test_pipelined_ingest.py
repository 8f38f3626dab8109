"""A run's files overlap: Great Expectations checks file i in its thread while file i+1 is staged.

File i's rows are written in a transaction left open, and file i+1 is recognised, checked and deduplicated inside
it, so it sees file i as loaded; file i is committed only once GX agrees. These tests hold the run to that: the
overlap happens, the next file still sees the open one, a GX disagreement or an interrupt leaves nothing of the
files not committed, and the next run carries on.
"""

from __future__ import annotations

import threading
from pathlib import Path

import duckdb
import pytest

from pipeline.storage.lake import file_sha256
from pipeline.run.nightly import run_ingest
from pipeline.base.settings import Settings
from pipeline.storage.store import Store
from tests.conftest import request, write_csv

R1 = request("r1", "t1", "2026-07-01T10:00:00Z", output_tokens=10)
R2 = request("r2", "t2", "2026-07-01T11:00:00Z", output_tokens=20)
R3 = request("r3", "t3", "2026-07-01T12:00:00Z", output_tokens=30)


def _files(folder: Path, b_rows: list[dict]) -> list[tuple[str, Path]]:
    """a.csv (r1, r2), b.csv (``b_rows``), c.csv: a.csv's bytes under another name."""
    a, b, c = folder / "a.csv", folder / "b.csv", folder / "c.csv"
    write_csv(a, [R1, R2])
    write_csv(b, b_rows)
    c.write_bytes(a.read_bytes())
    return [("requests", a), ("requests", b), ("requests", c)]


def _state(store: Store) -> tuple[list[tuple], int, list[str], list[str]]:
    """(manifest rows, key index size, lake files on disk, temporary files left)."""
    con = duckdb.connect(str(store.work_db), read_only=True)
    try:
        files = con.execute(
            "SELECT regexp_extract(path, '[^/]+$'), rows_in, rows_loaded, rows_quarantined, rows_gx_validated "
            "FROM meta.loaded_files ORDER BY load_seq"
        ).fetchall()
        keys = con.execute("SELECT count(*) FROM meta.key_index").fetchall()[0][0]
    finally:
        con.close()
    lake = sorted(p.name for p in store.lake.rglob("*.parquet"))
    tmp = sorted(p.name for p in store.state.rglob("*.costledger-tmp"))
    return files, keys, lake, tmp


@pytest.fixture
def setup(tmp_path):
    settings = Settings(db=tmp_path / "ledger.duckdb")
    landing = tmp_path / "landing"
    landing.mkdir()
    return settings, Store.for_db(settings.db), landing


def test_gx_checks_a_file_while_the_next_is_staged_and_the_next_sees_it_as_loaded(
    setup, monkeypatch, gx_in_this_process
):
    import pipeline.ingest.loader as loader_module
    import pipeline.ingest.validate as validate_module

    settings, store, landing = setup
    # b.csv repeats a.csv's r2 (line 3 of a.csv: the header is line 1) and adds r3
    pairs = _files(landing, [R2, R3])
    staging_b = threading.Event()
    real_stage, real_validate = loader_module.stage_file, validate_module.validate

    def stage(con, kind, path, *args, **kwargs):
        if path.name == "b.csv":
            staging_b.set()
        return real_stage(con, kind, path, *args, **kwargs)

    waited: list[bool] = []

    def gx_waiting_for_b(kind, frame, sql_flags, where, bounds=None):
        # GX's check of a.csv finishes only once b.csv is being staged: without the overlap this wait times out
        if where.endswith("a.csv"):
            waited.append(staging_b.wait(timeout=30))
        return real_validate(kind, frame, sql_flags, where, bounds)

    monkeypatch.setattr(loader_module, "stage_file", stage)
    monkeypatch.setattr(validate_module, "validate", gx_waiting_for_b)
    summary = run_ingest(store, settings, pairs, "test")

    assert waited == [True]
    assert [(Path(f.path).name, f.status) for f in summary.files] == [
        ("a.csv", "loaded"),
        ("b.csv", "loaded"),
        ("c.csv", "skipped"),  # staged while b.csv was open: a.csv's manifest row was there to see
    ]
    assert "same content already loaded from" in summary.files[2].message
    files, keys, lake, tmp = _state(store)
    # a: 2 in, 2 loaded; b: 2 in, r3 loaded, r2 quarantined; GX validated every well-typed row of each (2 and 2)
    assert files == [("a.csv", 2, 2, 0, 2), ("b.csv", 2, 1, 1, 2)]
    assert keys == 3 and len(lake) == 2 and tmp == []
    con = duckdb.connect(str(store.work_db), read_only=True)
    try:
        reason = con.execute("SELECT line, reason FROM meta.quarantine").fetchall()
    finally:
        con.close()
    # b.csv's line 2 (r2) is a.csv's line 3: found through a.csv's keys and lake file, before a.csv was committed
    a_hash = file_sha256(pairs[0][1])
    assert reason == [(2, f"identical duplicate of a row already loaded (file {a_hash[:12]}, line 3); counted once")]


def test_gx_disagreeing_on_a_file_rejects_that_file_alone_and_the_run_carries_on(
    setup, monkeypatch, gx_in_this_process
):
    import pipeline.ingest.validate as validate_module

    settings, store, landing = setup
    # b.csv has r3 with negative output tokens: the SQL rules quarantine it; GX is told they flagged nothing
    pairs = _files(landing, [R2 | {"request_id": "r4", "task_id": "t4"}, R3 | {"output_tokens": -1}])
    real_validate = validate_module.validate

    def blind_on_b(kind, frame, sql_flags, where, bounds=None):
        if where.endswith("b.csv"):
            sql_flags = {name: set() for name in sql_flags}
        return real_validate(kind, frame, sql_flags, where, bounds)

    monkeypatch.setattr(validate_module, "validate", blind_on_b)
    summary = run_ingest(store, settings, pairs, "test")
    # b.csv is rejected whole, naming the disagreement; c.csv, staged inside b.csv's transaction and rolled back with
    # it, is staged again (its content is a.csv's: skipped)
    assert [f.status for f in summary.files] == ["loaded", "rejected", "skipped"]
    assert "Great Expectations and the SQL rules disagree" in summary.files[1].message
    files, keys, lake, tmp = _state(store)
    # b.csv's sealed lake file removed, c.csv's temporary one too
    assert files == [("a.csv", 2, 2, 0, 2)]
    assert keys == 2 and lake == [f"{file_sha256(pairs[0][1])}.parquet"] and tmp == []

    monkeypatch.undo()
    summary = run_ingest(store, settings, pairs, "test")
    assert [f.status for f in summary.files] == ["skipped", "loaded", "skipped"]
    files, keys, lake, tmp = _state(store)
    assert files[1] == ("b.csv", 2, 1, 1, 2) and keys == 3 and len(lake) == 2 and tmp == []


def test_an_interrupt_while_the_next_file_is_staged_leaves_nothing_of_the_open_file(setup, monkeypatch):
    import pipeline.ingest.loader as loader_module

    settings, store, landing = setup
    pairs = _files(landing, [R3])
    real_stage = loader_module.stage_file

    def interrupted_at_b(con, kind, path, *args, **kwargs):
        if path.name == "b.csv":
            raise KeyboardInterrupt  # Ctrl-C while a.csv waits for GX in its open transaction
        return real_stage(con, kind, path, *args, **kwargs)

    monkeypatch.setattr(loader_module, "stage_file", interrupted_at_b)
    with pytest.raises(KeyboardInterrupt):
        run_ingest(store, settings, pairs, "test")
    assert _state(store) == ([], 0, [], [])  # a.csv rolled back, its sealed lake file removed

    monkeypatch.undo()
    summary = run_ingest(store, settings, pairs, "test")
    assert [f.status for f in summary.files] == ["loaded", "loaded", "skipped"]
    files, keys, lake, tmp = _state(store)
    assert [f[:4] for f in files] == [("a.csv", 2, 2, 0), ("b.csv", 1, 1, 0)] and keys == 3 and len(lake) == 2


def test_a_file_whose_load_runs_out_of_memory_is_rejected_alone_and_the_file_before_it_loads_on_its_own(
    setup, monkeypatch
):
    import pipeline.ingest.loader as loader_module

    settings, store, landing = setup
    pairs = _files(landing, [R3])
    real_stage = loader_module.stage_file

    def out_of_memory_at_b(con, kind, path, *args, **kwargs):
        if path.name == "b.csv":  # while a.csv waits for GX in its open transaction
            raise duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate data of size 2.0 GiB")
        return real_stage(con, kind, path, *args, **kwargs)

    monkeypatch.setattr(loader_module, "stage_file", out_of_memory_at_b)
    summary = run_ingest(store, settings, pairs, "test")
    # a.csv loaded again in a transaction of its own; b.csv rejected naming memory; c.csv (a.csv's bytes) skipped
    assert [(f.path.rsplit("/", 1)[-1], f.status) for f in summary.files] == [
        ("a.csv", "loaded"),
        ("b.csv", "rejected"),
        ("c.csv", "skipped"),
    ]
    assert "needs more memory than the ledger may use ([ledger] memory_limit)" in summary.files[1].message
    files, keys, lake, tmp = _state(store)
    assert files == [("a.csv", 2, 2, 0, 2)] and keys == 2 and len(lake) == 1 and tmp == []
