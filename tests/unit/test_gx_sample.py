"""Great Expectations' share of ingest: which rows it validates, and that a disagreement with the SQL rules stops.

GX validates a sample of a large file (its fixed cost per file dominated the nightly); the sample must
still contain the rows the SQL rules flag, and GX must still catch a rule the SQL compilation gets wrong.
"""

from __future__ import annotations

import pytest

from tests.conftest import request
from pipeline.ingest.files import IngestOptions, ingest_file
from pipeline.ingest.validate import ValidationPipelineError


def _rows(n: int, bad: set[int]) -> list[dict]:
    # row i (line i + 2 of the CSV: the header is line 1) has negative output tokens when i is in ``bad``
    return [request(f"r{i}", f"t{i}", "2026-07-01T10:00:00Z", output_tokens=-5 if i in bad else 10) for i in range(n)]


def test_gx_sees_a_sample_of_passed_rows_and_the_flagged_rows(ledger):
    # 200 rows, 3 with negative output tokens; gx_max_rows 10: passed rows 197 -> every ceil(197/10) = 20th line
    # (lines 2..201: the multiples of 20 are 20, 40, ..., 200 = 10 lines, all passed rows), flagged rows 3 <= 10
    # -> all 3. GX validates 10 + 3 = 13 rows.
    bad = {5, 77, 150}  # lines 7, 79, 152: none a multiple of 20
    path = ledger.write("requests", _rows(200, bad))
    result = ingest_file(ledger.con, "requests", path, ledger.store, options=IngestOptions(gx_max_rows=10))
    assert (result.rows_in, result.rows_loaded, result.rows_quarantined) == (200, 197, 3)
    seen = ledger.one("SELECT rows_gx_validated FROM meta.loaded_files")["rows_gx_validated"]
    assert seen == 13


def test_gx_sees_the_well_typed_rows_only(ledger):
    # 20 rows: rows 4 and 9 have output tokens "ten" (not a number: typing fails, GX never sees them), row 12 has
    # -5 (well typed, fails an expectation: GX sees it and must flag it too). GX validates 20 - 2 = 18 rows; all
    # three are quarantined
    rows = _rows(20, {12})
    rows[4]["output_tokens"] = rows[9]["output_tokens"] = "ten"
    path = ledger.write("requests", rows)
    result = ingest_file(ledger.con, "requests", path, ledger.store)
    assert (result.rows_in, result.rows_loaded, result.rows_quarantined) == (20, 17, 3)
    assert ledger.one("SELECT rows_gx_validated FROM meta.loaded_files")["rows_gx_validated"] == 18


@pytest.mark.slow
def test_gx_disagreeing_with_the_sql_rules_is_a_pipeline_error(ledger, monkeypatch, gx_in_this_process):
    # the SQL rules "forget" one flagged line: GX (which sees every flagged row) flags it, so ingest must stop
    import pipeline.ingest.validate as validate_module

    real = validate_module.validate

    def forgetful(kind, frame, sql_flags, where, bounds=None):
        sql_flags = {name: set(sorted(lines)[1:]) for name, lines in sql_flags.items()}
        return real(kind, frame, sql_flags, where, bounds)

    monkeypatch.setattr(validate_module, "validate", forgetful)
    path = ledger.write("requests", _rows(50, {3, 30}))
    with pytest.raises(ValidationPipelineError, match="disagree"):
        ingest_file(ledger.con, "requests", path, ledger.store, options=IngestOptions(gx_max_rows=10))
    assert ledger.rows("SELECT * FROM meta.loaded_files") == []


@pytest.mark.slow
def test_gx_flagging_rows_the_sql_rules_all_passed_is_a_pipeline_error(ledger, monkeypatch, gx_in_this_process):
    # the SQL rules "forget" every flagged line: with nothing flagged, GX first answers yes/no per expectation
    # (the cheap pass); its "no" for negative output tokens must still stop ingest, naming the lines
    import pipeline.ingest.validate as validate_module

    real = validate_module.validate

    def blind(kind, frame, sql_flags, where, bounds=None):
        return real(kind, frame, {name: set() for name in sql_flags}, where, bounds)

    monkeypatch.setattr(validate_module, "validate", blind)
    path = ledger.write("requests", _rows(50, {3, 30}))  # rows 3 and 30: lines 5 and 32
    with pytest.raises(ValidationPipelineError, match=r"disagree \(lines only GX flags: \[5, 32\]"):
        ingest_file(ledger.con, "requests", path, ledger.store, options=IngestOptions(gx_max_rows=10))
    assert ledger.rows("SELECT * FROM meta.loaded_files") == []


def test_sql_rules_flagging_a_row_gx_passes_is_a_pipeline_error(ledger, monkeypatch, gx_in_this_process):
    # a clean file, but the SQL rules "flag" line 2 for a check: GX (no unexpected row) must disagree
    import pipeline.ingest.validate as validate_module

    real = validate_module.validate

    def inventive(kind, frame, sql_flags, where, bounds=None):
        first = sorted(sql_flags)[0]
        return real(kind, frame, {**sql_flags, first: {2}}, where, bounds)

    monkeypatch.setattr(validate_module, "validate", inventive)
    path = ledger.write("requests", _rows(20, set()))
    with pytest.raises(ValidationPipelineError, match=r"only SQL flags: \[2\]"):
        ingest_file(ledger.con, "requests", path, ledger.store)
    assert ledger.rows("SELECT * FROM meta.loaded_files") == []


def test_gx_failing_to_evaluate_on_a_clean_sample_is_a_pipeline_error(ledger, monkeypatch, gx_in_this_process):
    # nothing flagged, but GX cannot compare text with a number: the cheap pass must not wave that through
    import pipeline.ingest.validate as validate_module

    real = validate_module.validate

    def garbled(kind, frame, sql_flags, where, bounds=None):
        frame = frame.assign(output_tokens="ten")
        return real(kind, frame, sql_flags, where, bounds)

    monkeypatch.setattr(validate_module, "validate", garbled)
    path = ledger.write("requests", _rows(20, set()))
    with pytest.raises(ValidationPipelineError, match="could not evaluate"):
        ingest_file(ledger.con, "requests", path, ledger.store)
    assert ledger.rows("SELECT * FROM meta.loaded_files") == []


def test_no_expectation_tolerates_a_share_of_bad_rows():
    # the cheap pass reads GX's success as "no unexpected row", which holds only without ``mostly``
    import datetime as dt

    from schemas.expectations import Bounds, suites

    for kind, checks in suites(Bounds()).items():
        for check in checks:
            expectation = check.gx_expectation(dt.datetime(2026, 12, 3))
            assert getattr(expectation, "mostly", 1) == 1, (kind, check.name)


def test_gx_runs_in_a_process_of_its_own_and_its_errors_come_back_naming_the_file():
    # GX in a thread held the GIL while the ingest thread's DuckDB statements waited for it: it runs in a process
    import os

    import pyarrow as pa

    from pipeline.ingest.validate import gx_worker, validate_rows

    assert gx_worker().submit(os.getpid).result() != os.getpid()
    # an error GX (here: the suite of an unknown kind) raises in its process arrives as a pipeline error, not as a
    # broken pool or an exception class that does not pickle
    rows = pa.table({"_line": [2]})
    with pytest.raises(ValidationPipelineError, match=r"^landing/x\.csv: Great Expectations failed: KeyError"):
        gx_worker().submit(validate_rows, "no-such-kind", rows, [], {}, "landing/x.csv").result()


def test_a_run_killed_with_sigkill_leaves_no_gx_process_behind_holding_its_pipes():
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT

    # the run: starts GX's process, says its pid, then dies as a kill -9 would end it
    script = (
        "import os\n"
        "from pipeline.ingest.validate import gx_worker\n"
        "print(gx_worker().submit(os.getpid).result(), flush=True)\n"
        "os.kill(os.getpid(), 9)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # the pipes close (GX's process writes nothing to them and holds them no longer than it lives)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == -9
    gx_pid = int(out.split()[0])

    def alive() -> bool:  # a zombie (ended, not yet reaped by whoever adopted it) holds no memory and no pipe
        try:
            with open(f"/proc/{gx_pid}/stat") as fh:
                return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
        except FileNotFoundError:
            return False

    deadline = time.monotonic() + 10
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(), "GX's process outlived the run that started it"
