"""Great Expectations' share of ingest: which rows it validates, and that a disagreement with the SQL rules stops.

GX validates a sample of a large file (issue #14: its fixed cost per file dominated the nightly); the sample must
still contain the rows the SQL rules flag, and GX must still catch a rule the SQL compilation gets wrong.
"""

from __future__ import annotations

import pytest

from tests.conftest import request
from pipeline.ingest import IngestOptions, ingest_file
from pipeline.validate import ValidationPipelineError


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


def test_gx_disagreeing_with_the_sql_rules_is_a_pipeline_error(ledger, monkeypatch):
    # the SQL rules "forget" one flagged line: GX (which sees every flagged row) flags it, so ingest must stop
    import pipeline.validate as validate_module

    real = validate_module.validate

    def forgetful(kind, frame, sql_flags, where, bounds=None):
        sql_flags = {name: set(sorted(lines)[1:]) for name, lines in sql_flags.items()}
        return real(kind, frame, sql_flags, where, bounds)

    monkeypatch.setattr(validate_module, "validate", forgetful)
    path = ledger.write("requests", _rows(50, {3, 30}))
    with pytest.raises(ValidationPipelineError, match="disagree"):
        ingest_file(ledger.con, "requests", path, ledger.store, options=IngestOptions(gx_max_rows=10))
    assert ledger.rows("SELECT * FROM meta.loaded_files") == []
