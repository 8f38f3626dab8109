"""Models declare themselves (issue #13): header keys checked against one fixed set, column
comments checked against the model's columns, the restated-month watch covers every mart."""

import shutil
from pathlib import Path

import pytest

from pipeline.build import ModelFailed, month_fingerprints
from pipeline.models import SQL_DIR, ModelHeaderError, discover
from pipeline.errors import CostledgerError
from tests.conftest import PRICE_MOONSHOT, request


@pytest.fixture
def sql_copy(tmp_path) -> Path:
    target = tmp_path / "sql"
    shutil.copytree(SQL_DIR, target)
    return target


def test_a_misspelt_header_key_is_an_error_naming_file_and_line(sql_copy):
    path = sql_copy / "intermediate" / "int_requests_monthly.sql"
    path.write_text(path.read_text().replace("-- incremental: months", "-- incremenal: months"))
    with pytest.raises(ModelHeaderError) as err:
        discover(sql_copy)
    # before: the model silently became a full table
    assert f"{path}:3: unknown header key 'incremenal'; did you mean incremental?" in str(err.value)
    assert err.value.exit_code == 1 and isinstance(err.value, CostledgerError)


def test_a_comment_on_a_column_the_model_lacks_names_file_and_line(sql_copy, ledger):
    path = sql_copy / "marts" / "monthly_reconciliation.sql"
    text = path.read_text().replace("-- column provider: API provider.", "-- column provder: API provider.")
    path.write_text(text)
    line = text.splitlines().index("-- column provder: API provider.") + 1
    from pipeline.build import build

    with pytest.raises(ModelFailed) as err:  # before: a raw BinderException traceback
        build(ledger.con, ledger.settings, ledger.store, sql_dir=sql_copy)
    assert f"sql/marts/monthly_reconciliation.sql:{line}: the comment names column provder" in str(err.value)


def test_every_mart_with_a_month_is_watched_for_restatements(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1000, team="a")])
    ledger.build()
    models = discover()
    marts = {m.qualified for m in models if m.layer == "marts"}
    assert len(marts) >= 8 and "marts.monthly_team_usage" in marts  # found in sql/marts, not listed in Python
    before = month_fingerprints(ledger.con, models)
    # a change in a mart the old hard-coded list left out (team usage) now shows as a restated month
    ledger.con.execute("UPDATE marts.monthly_team_usage SET requests = requests + 1")
    after = month_fingerprints(ledger.con, models)
    assert before.keys() == after.keys() == {"2026-07-01"} and before != after


def test_a_comment_or_layout_edit_does_not_make_the_next_build_full(sql_copy, ledger):
    from pipeline import incremental
    from pipeline.build import build

    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("r1", "t1", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1000)])
    build(ledger.con, ledger.settings, ledger.store, sql_dir=sql_copy)
    path = sql_copy / "intermediate" / "int_requests_priced.sql"
    text = path.read_text()
    # a new comment line in the body and the body re-indented: the same SQL
    path.write_text(text.replace("\nSELECT", "\n-- a note for the reader\nSELECT", 1).replace("    ", "  "))
    assert not incremental.plan(ledger.con, discover(sql_copy), 10_000_000).full
    # a real change (a different column list) does
    path.write_text(text.replace("SELECT", "SELECT 1 AS changed,", 1))
    assert incremental.plan(ledger.con, discover(sql_copy), 10_000_000).full
