"""`costledger build --select`: the selected models computed alone equal the same models of a whole build, nothing
is published, and the next whole build (which rebuilds in full the incremental models built alone) equals a whole
build that never had a selected one."""

from __future__ import annotations

import pytest

from pipeline.storage.store import Store
from tests.conftest import cli, open_published, write_csv
from tests.models.test_phase_cost import CHARGE, REQUEST, _timed

pytestmark = pytest.mark.slow

MART = "marts.monthly_phase_cost"


def _landing(folder):
    from tests.conftest import PRICE_MOONSHOT

    for kind, rows in (("prices", [PRICE_MOONSHOT]), ("cluster-charges", [CHARGE]), ("requests", [REQUEST]),
                       ("engine-metrics", _timed(("12.5", "42.5"), ("100", "370")))):  # fmt: skip
        write_csv(folder / kind / f"{kind}.csv", rows)
    return folder


def _rows(db, table: str):
    con = open_published(db)
    try:
        return sorted(map(tuple, con.execute(f"SELECT * FROM {table}").fetchall()), key=repr)
    finally:
        con.close()


def test_a_selected_build_equals_the_whole_one_and_publishes_nothing(tmp_path):
    landing = _landing(tmp_path / "landing")
    whole, alone = tmp_path / "whole" / "ledger.duckdb", tmp_path / "alone" / "ledger.duckdb"
    assert cli("nightly", landing, "--db", whole).exit_code == 0
    assert cli("ingest", "prices", landing / "prices" / "prices.csv", "--db", alone).exit_code == 0
    for kind in ("cluster-charges", "requests", "engine-metrics"):
        assert cli("ingest", kind, landing / kind / f"{kind}.csv", "--db", alone).exit_code == 0
    res = cli("build", "--db", alone, "--select", f"+{MART}")
    assert res.exit_code == 0, res.output
    assert "not published" in " ".join(res.output.split())
    assert not Store.for_db(alone).published.exists()  # ingests and a selected build publish nothing
    # the selected mart, read from the work file, equals the whole build's published one
    import duckdb

    con = duckdb.connect(str(Store.for_db(alone).work_db), read_only=True)
    try:
        got = sorted(map(tuple, con.execute(f"SELECT * FROM {MART}").fetchall()), key=repr)
        unselected = con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'marts' AND table_name = 'monthly_forecast'"
        ).fetchone()[0]
    finally:
        con.close()
    assert got == _rows(whole, MART)
    assert unselected == 0  # a mart the selection does not read was not built
    # the next whole build equals the whole build; after another selected build, the next whole one rebuilds the
    # incremental models built alone in full, saying so, and still equals it
    assert cli("build", "--db", alone).exit_code == 0
    assert cli("build", "--db", alone, "--select", f"+{MART}").exit_code == 0
    res = cli("build", "--db", alone)
    assert res.exit_code == 0, res.output
    assert "(build --select computed it alone)" in " ".join(res.output.split())
    for table in (MART, "marts.monthly_utilisation", "marts.monthly_break_even", "intermediate.int_requests_daily"):
        assert _rows(alone, table) == _rows(whole, table), table


def test_a_selection_that_names_no_model_or_asks_for_spark_is_a_usage_error(tmp_path):
    db = tmp_path / "ledger.duckdb"
    res = cli("build", "--db", db, "--select", "monthly_phase_cots")
    assert res.exit_code == 2 and "did you mean" in res.output and "monthly_phase_cost" in res.output
    res = cli("build", "--db", db, "--select", MART, "--engine", "spark")
    assert res.exit_code == 2 and "--select builds on the DuckDB engine" in " ".join(res.output.split())
