"""A Spark build keeps each model's Spark SQL in the ledger (``pipeline/transform/spark/translations.py``): the next
build runs what was kept, a change to what a translation is made from translates again, and a keep that cannot be
read or written never stops a build. No JVM: the translations are SQLGlot's."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import sqlglot

from pipeline.base.models import SQL_DIR, discover
from pipeline.transform.spark.translate import Macro, spark_macros, to_spark_steps
from pipeline.transform.spark.translations import KEEP_UNREAD_SECONDS, Translations

#: a model whose WITH query is read twice (a shared step) and calls a macro, and two models of the project
MODELS = ("marts.shared_step", "intermediate.int_gate_drills", "staging.stg_ledger__gate_checks")
SHARED_STEP = """WITH shares AS (
    SELECT month, per_million(cost_usd) AS cost_usd FROM marts.monthly_phase_cost
)
SELECT a.month, a.cost_usd, b.cost_usd AS again FROM shares AS a JOIN shares AS b ON a.month = b.month"""


@pytest.fixture(scope="module")
def macros() -> dict[str, Macro]:
    return spark_macros(SQL_DIR)


@pytest.fixture(scope="module")
def bodies() -> dict[str, str]:
    return {"marts.shared_step": SHARED_STEP} | {m.qualified: m.body for m in discover() if m.qualified in MODELS}


def _prefix(name: str) -> str:
    return name.replace(".", "__") + "__"


def test_the_next_build_runs_the_translation_kept(tmp_path, macros, bodies):
    first = Translations(tmp_path / "sql", macros)
    made = {name: first.steps(body, _prefix(name)) for name, body in bodies.items()}
    # each is the translator's own
    assert made == {name: to_spark_steps(body, macros, _prefix(name)) for name, body in bodies.items()}
    assert [s.shared for s in made["marts.shared_step"][0]] == [True]
    kept = sorted((tmp_path / "sql").glob("*.json"))
    assert len(kept) == len(MODELS)
    # what is kept is what the next build runs: a kept file changed by hand is read as it is
    for path in kept:
        doc = json.loads(path.read_text(encoding="utf-8"))
        path.write_text(json.dumps({**doc, "sql": "SELECT 1 AS kept"}), encoding="utf-8")
    later = Translations(tmp_path / "sql", macros)
    for name, body in bodies.items():
        steps, final = later.steps(body, _prefix(name))
        assert (steps, final) == (made[name][0], "SELECT 1 AS kept")


def test_a_change_to_the_sql_its_prefix_or_a_macro_translates_again(tmp_path, macros, bodies):
    name, body = "marts.shared_step", bodies["marts.shared_step"]
    Translations(tmp_path / "sql", macros).steps(body, _prefix(name))
    for path in (tmp_path / "sql").glob("*.json"):  # were it read, this would be the answer
        path.write_text(json.dumps({"steps": [], "sql": "SELECT 1 AS stale"}), encoding="utf-8")
    changed_sql = body.replace("per_million", "per_million ", 1)
    assert changed_sql != body
    assert Translations(tmp_path / "sql", macros).steps(changed_sql, _prefix(name)) == to_spark_steps(
        changed_sql, macros, _prefix(name)
    )
    assert Translations(tmp_path / "sql", macros).steps(body, "other__") == to_spark_steps(body, macros, "other__")
    # per_million's body changed: a new translation of the same SQL, with the new body in it
    macro = macros["per_million"]
    other = {**macros, "per_million": Macro(macro.name, macro.params, sqlglot.parse_one("0.5", read="duckdb"))}
    steps, final = Translations(tmp_path / "sql", other).steps(body, _prefix(name))
    assert (steps, final) == to_spark_steps(body, other, _prefix(name))
    assert "stale" not in final


def test_a_keep_that_cannot_be_read_or_written_is_translated_again(tmp_path, macros, bodies):
    name, body = "staging.stg_ledger__gate_checks", bodies["staging.stg_ledger__gate_checks"]
    want = to_spark_steps(body, macros, _prefix(name))
    Translations(tmp_path / "sql", macros).steps(body, _prefix(name))
    (kept,) = (tmp_path / "sql").glob("*.json")
    for garbage in ("", "{not json", '{"steps": [["v"]], "sql": "x"}', '{"steps": [], "sql": 7}', "[]"):
        kept.write_text(garbage, encoding="utf-8")
        assert Translations(tmp_path / "sql", macros).steps(body, _prefix(name)) == want, garbage
        assert json.loads(kept.read_text(encoding="utf-8"))["sql"] == want[1]  # and kept whole again
    # where nothing can be written (a file stands where the folder would be), the build still gets its SQL
    (tmp_path / "blocked").write_text("a file", encoding="utf-8")
    assert Translations(tmp_path / "blocked" / "sql", macros).steps(body, _prefix(name)) == want


def test_translations_no_build_read_for_30_days_are_removed(tmp_path, macros, bodies):
    keep = Translations(tmp_path / "sql", macros)
    for name, body in bodies.items():
        keep.steps(body, _prefix(name))
    paths = sorted((tmp_path / "sql").glob("*.json"))
    old = time.time() - KEEP_UNREAD_SECONDS - 3600
    for path in paths:
        os.utime(path, (old, old))
    # a build reads one of them: it stays; the two no build read go
    name = "marts.shared_step"
    keep.steps(bodies[name], _prefix(name))
    keep.prune()
    left = sorted((tmp_path / "sql").glob("*.json"))
    assert len(left) == 1 and left[0] in paths
    assert (
        json.loads(left[0].read_text(encoding="utf-8"))["sql"] == to_spark_steps(bodies[name], macros, _prefix(name))[1]
    )


def test_a_model_s_sql_is_kept_under_a_name_of_its_own(tmp_path: Path, macros, bodies):
    """Two models never share a kept translation (the name covers the SQL and the prefix)."""
    keep = Translations(tmp_path / "sql", macros)
    for name, body in bodies.items():
        keep.steps(body, _prefix(name))
        keep.steps(body, "another__")
    assert len(list((tmp_path / "sql").glob("*.json"))) == 2 * len(MODELS)
