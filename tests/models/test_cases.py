"""Every model's given/expect cases (tests/models/cases/*.yml, see tests/models/given.py): each runs its model alone on
the rows it gives, without building anything else."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from pipeline.base.models import SQL_DIR
from tests.conftest import sql_tree_with
from tests.models.given import Case, CaseError, load_cases, run_case

CASES = load_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case: Case):
    run_case(case)


def _phase_case() -> Case:
    (case,) = [c for c in CASES if c.id.endswith("the two phases add up to the fixed cost to the last digit")]
    return case


def test_a_case_whose_figure_is_wrong_fails_naming_the_row():
    case = _phase_case()
    wrong = [dict(case.expect[0], cost_usd="826.666666666666"), case.expect[1]]
    with pytest.raises(CaseError) as err:
        run_case(Case(**{**case.__dict__, "expect": wrong}))
    assert "no row of marts.monthly_phase_cost is\n    phase='prompt', cost_usd='826.666666666666'" in str(err.value)
    assert "phase='prompt', cost_usd=Decimal('826.666666666667')" in str(err.value)


def test_a_row_the_case_does_not_expect_fails():
    case = _phase_case()
    with pytest.raises(CaseError, match="gives rows the case does not expect:\n    phase='generation'"):
        run_case(Case(**{**case.__dict__, "expect": case.expect[:1]}))


def test_a_case_naming_a_table_or_column_the_model_does_not_have_fails_naming_it():
    case = _phase_case()
    with pytest.raises(CaseError, match="marts.monthly_phase_cost does not read marts.monthly_break_even"):
        run_case(Case(**{**case.__dict__, "given": {**case.given, "marts.monthly_break_even": []}}))
    given = {"marts.monthly_utilisation": [{"month": "2026-10-01", "cluster": "c1"}]}
    with pytest.raises(CaseError, match="marts.monthly_utilisation has no column cluster$"):
        run_case(Case(**{**case.__dict__, "given": given}))


def test_a_case_runs_the_model_as_its_file_says(tmp_path: Path):
    """The case runs the model's SQL of the tree given, not a copy: a changed formula fails the case."""
    formula = "money_share(fixed_cost_usd, prompt_weight, total_weight)"
    sql_dir = sql_tree_with(tmp_path, "marts/monthly_phase_cost.sql", formula, "0")
    with pytest.raises(CaseError, match="no row of marts.monthly_phase_cost is"):
        run_case(_phase_case(), sql_dir)


def test_every_case_file_is_a_list_of_cases_of_a_model():
    for path in sorted(Path(__file__).parent.joinpath("cases").glob("*")):
        assert path.suffix == ".yml", f"{path}: case files are YAML (.yml)"
        entries = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert isinstance(entries, list) and all({"case", "expect"} <= set(e) for e in entries), path
        assert (SQL_DIR / path.stem.split(".")[0] / f"{path.stem.split('.')[1]}.sql").exists(), path


def test_a_given_value_of_the_wrong_type_fails_naming_the_table():
    case = _phase_case()
    given = {"marts.monthly_utilisation": [{"month": "October", "cluster_id": "c1"}]}
    with pytest.raises(CaseError, match=r"marts.monthly_utilisation row .*'October'.*Conversion Error"):
        run_case(Case(**{**case.__dict__, "given": given}))


def test_every_mart_and_intermediate_model_has_its_cases():
    """Each model that computes something the ledger reports has a case of its own, so that a change to its arithmetic
    fails a test of that model alone (the staging models only type and rename the raw tables)."""
    tested = {c.model for c in CASES}
    models = sorted(
        f"{p.parent.name}.{p.stem}" for layer in ("intermediate", "marts") for p in SQL_DIR.glob(f"{layer}/*.sql")
    )
    assert [m for m in models if m not in tested] == []
