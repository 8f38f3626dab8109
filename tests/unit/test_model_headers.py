"""Models declare themselves: header keys checked against one fixed set, column
comments checked against the model's columns, the restated-month watch covers every mart."""

import shutil
from pathlib import Path

import pytest

from pipeline.transform.build import ModelFailed, build, month_fingerprints
from pipeline.base.models import SQL_DIR, ModelHeaderError, discover
from pipeline.base.errors import CostledgerError
from tests.conftest import PRICE_MOONSHOT, request


@pytest.fixture
def sql_copy(tmp_path) -> Path:
    target = tmp_path / "sql"
    shutil.copytree(SQL_DIR, target)
    return target


def test_a_misspelt_header_key_is_an_error_naming_file_and_line(sql_copy):
    path = sql_copy / "intermediate" / "int_task_outcomes_monthly.sql"
    path.write_text(path.read_text().replace("-- incremental: months", "-- incremenal: months"))
    with pytest.raises(ModelHeaderError) as err:
        discover(sql_copy)
    # the defect guarded: the model silently became a full table
    assert f"{path}:3: unknown header key 'incremenal'; did you mean incremental?" in str(err.value)
    assert err.value.exit_code == 1 and isinstance(err.value, CostledgerError)


def test_a_model_names_exactly_the_settings_it_reads(sql_copy):
    """A setting's value is part of the fingerprint of the models that declare it: a model that reads a setting it
    does not declare would not be rebuilt when the setting changes, so it is an error naming the model."""
    path = sql_copy / "intermediate" / "int_tasks_resolved.sql"
    text = path.read_text()
    declared = "-- settings: review_rate_per_hour_usd, slo_ms_api, slo_ms_self_hosted"
    line = text.splitlines().index(declared) + 1
    path.write_text(text.replace(declared, "-- settings: slo_ms_api, slo_ms_self_hosted"))
    with pytest.raises(ModelHeaderError) as err:
        discover(sql_copy)
    assert f"{path}: the model reads the setting review_rate_per_hour_usd: name it in its header" in str(err.value)
    path.write_text(text.replace(declared, declared + ", review_rate_per_hour"))
    with pytest.raises(ModelHeaderError) as err:
        discover(sql_copy)
    assert f"{path}:{line}: settings: review_rate_per_hour is not a setting the models read (did you mean " in str(
        err.value
    )
    path.write_text(text.replace(declared, declared + ", gpus_per_node"))
    with pytest.raises(ModelHeaderError) as err:
        discover(sql_copy)
    assert f"{path}:{line}: settings: gpus_per_node is declared but the model does not read it" in str(err.value)


RECONCILIATION = "marts.monthly_reconciliation"
PROVIDER = "-- column provider VARCHAR: API provider."
METERED = (
    "-- column metered_usd DECIMAL(38,12): Requests x the price in force at each request, in USD "
    "(priced requests only)."
)


@pytest.mark.parametrize(
    "old, new, message",
    [
        # declared, and missing from the SELECT (a misspelt name): the defect guarded, a BinderException traceback
        (
            PROVIDER,
            "-- column provder VARCHAR: API provider.",
            "{path}:{line}: column provder is declared, but marts.monthly_reconciliation does not have it "
            "(its SELECT gives month, provider, invoiced_usd,",
        ),
        # in the SELECT, and missing from the declaration: the column would reach the published file unexplained
        (
            PROVIDER + "\n",
            "",
            "{path}: marts.monthly_reconciliation has column provider (VARCHAR), which its header does not declare: "
            "add '-- column provider VARCHAR: what it means' after column month",
        ),
        # declared with a type the SELECT does not give (money that became a DOUBLE)
        (
            METERED,
            METERED.replace("DECIMAL(38,12)", "DOUBLE"),
            "{path}:{line}: column metered_usd is declared DOUBLE, but marts.monthly_reconciliation gives "
            "DECIMAL(38,12): cast it in the SELECT, or declare DECIMAL(38,12)",
        ),
    ],
    ids=["declared-not-selected", "selected-not-declared", "wrong-type"],
)
def test_a_mart_whose_columns_differ_from_its_declaration_fails_the_build_naming_both(
    sql_copy, ledger, old, new, message
):
    path = sql_copy / "marts" / "monthly_reconciliation.sql"
    text = path.read_text()
    assert old in text
    line = text[: text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, new))
    with pytest.raises(ModelFailed) as err:
        build(ledger.con, ledger.settings, ledger.store, sql_dir=sql_copy, selection=("+" + RECONCILIATION,))
    assert message.format(path="sql/marts/monthly_reconciliation.sql", line=line) in str(err.value)
    assert str(err.value).startswith("build rolled back: ")
    # nothing of the failed build is left: the mart does not exist
    assert not ledger.con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'marts' AND table_name = 'monthly_reconciliation'"
    ).fetchone()[0]


def test_columns_in_another_order_than_the_select_fail_the_build(sql_copy, ledger):
    path = sql_copy / "marts" / "monthly_reconciliation.sql"
    text = path.read_text()
    month = "-- column month DATE: First day of the month (UTC).\n"
    path.write_text(text.replace(month, "").replace(PROVIDER + "\n", PROVIDER + "\n" + month))
    with pytest.raises(ModelFailed) as err:
        build(ledger.con, ledger.settings, ledger.store, sql_dir=sql_copy, selection=("+" + RECONCILIATION,))
    # the header now says month second (line 7) while the SELECT gives it first
    assert (
        "sql/marts/monthly_reconciliation.sql:7: column month is declared in place 2 but is column 1 of "
        "marts.monthly_reconciliation: declare the columns in the order the SELECT gives them"
    ) in str(err.value)


@pytest.mark.parametrize(
    "old, new, message",
    [
        (
            PROVIDER,
            "-- column provider: API provider.",
            "{path}:{line}: a column is declared with its type, as DuckDB names it: "
            "'-- column provider TYPE: what it means'",
        ),
        (
            PROVIDER,
            PROVIDER + "\n" + PROVIDER,
            "{path}:{after}: column provider is declared twice (first on line {line})",
        ),
        # a mart's column says what it means, or takes it from the same column of a table it reads (none reads a
        # difference_usd)
        (
            "-- column difference_usd DECIMAL(38,12): invoiced_usd - metered_usd; NULL when either side is missing.",
            "-- column difference_usd DECIMAL(38,12)",
            "{path}:{line}: column difference_usd of marts.monthly_reconciliation has no meaning, and no table it "
            "reads has a column difference_usd to take one from: "
            "'-- column difference_usd DECIMAL(38,12): what it means'",
        ),
    ],
    ids=["no-type", "twice", "no-meaning"],
)
def test_a_column_declaration_without_type_or_meaning_names_file_and_line(sql_copy, old, new, message):
    path = sql_copy / "marts" / "monthly_reconciliation.sql"
    text = path.read_text()
    line = text[: text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, new))
    with pytest.raises(ModelHeaderError) as err:
        discover(sql_copy)
    assert message.format(path=path, line=line, after=line + 1) in str(err.value)


def test_an_intermediate_column_without_a_meaning_of_its_own_or_upstream_names_file_and_line(sql_copy):
    """Not only a mart's columns: a column of any model says what it means (its COMMENT in the ledger, the docs).
    hours_in_month is made in int_months_spined; nothing it reads has one."""
    path = sql_copy / "intermediate" / "int_months_spined.sql"
    text = path.read_text()
    old = next(line for line in text.splitlines() if line.startswith("-- column hours_in_month BIGINT:"))
    line = text[: text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, "-- column hours_in_month BIGINT"))
    with pytest.raises(ModelHeaderError) as err:
        discover(sql_copy)
    assert (
        f"{path}:{line}: column hours_in_month of intermediate.int_months_spined has no meaning, and no table it reads "
        "has a column hours_in_month to take one from"
    ) in str(err.value)


def test_the_settings_views_columns_mean_what_the_settings_docs_say(sql_copy):
    """The settings view's columns are declared without meanings: each takes its setting's doc, with the key a user
    writes in the settings file, so the two never say different things."""
    by_name = {m.qualified: m for m in discover(sql_copy)}
    assert by_name["staging.stg_ledger__settings"].column("gate_min_cases").meaning == (
        "The setting gate.min_cases: Deployment gate: the evaluation set needs at least this many cases, covering "
        "every category."
    )


def test_a_column_declared_without_meaning_takes_the_one_of_the_column_it_passes_on(sql_copy):
    """``provider`` in marts.monthly_reconciliation, declared with no meaning, is the provider column of
    intermediate.int_api_provider_monthly, the first table it reads that has one, which in turn takes it from the
    table it reads: the meaning is written once, where the column is born."""
    path = sql_copy / "marts" / "monthly_reconciliation.sql"
    path.write_text(path.read_text().replace(PROVIDER, "-- column provider VARCHAR"))
    by_name = {m.qualified: m for m in discover(sql_copy)}
    inherited = by_name[RECONCILIATION].column("provider").meaning
    assert inherited and inherited == by_name["intermediate.int_api_provider_monthly"].column("provider").meaning


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_comment_or_layout_edit_does_not_make_the_next_build_full(sql_copy, ledger):
    from pipeline.transform import incremental

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


def _edit(path: Path, old: str, new: str) -> str:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return new


def _line_of(path: Path, text: str) -> int:
    return path.read_text().splitlines().index(text) + 1


@pytest.mark.parametrize(
    "model, old, new, message",
    [
        # the body reads a scoped view its header does not declare
        (
            "int_task_outcomes_monthly",
            "-- input tasks_of_months: intermediate.int_tasks_resolved\n",
            "",
            "reads scoped.tasks_of_months, which no '-- input tasks_of_months: SCHEMA.MODEL' header line declares",
        ),
        # a months model is partitioned by month: it must be in the key
        (
            "int_task_outcomes_monthly",
            "-- unique_key: month, route",
            "-- unique_key: route",
            "a months model is partitioned by month: its unique_key must include month",
        ),
        (
            "int_task_outcomes_monthly",
            "-- incremental: months",
            "-- incremental: monthly",
            "incremental must be one of append, keys, months, days",
        ),
        (
            "int_task_outcomes_monthly",
            "-- input tasks_of_months: intermediate.int_tasks_resolved",
            "-- input tasks_of_months: intermediate.int_tasks_resolved, lookup ended_at",
            "input tasks_of_months: expected",
        ),
        # a days model is partitioned by day, and each input says which column's day puts a row in a day
        (
            "int_cluster_busy_daily",
            "-- unique_key: cluster_id, day",
            "-- unique_key: cluster_id",
            "a days model is partitioned by day: its unique_key must include day",
        ),
        (
            "int_cluster_busy_daily",
            ", day started_at, lookback ended_at",
            ", lookback ended_at",
            "a days model's input names its day column (, day COLUMN)",
        ),
        (
            "int_task_outcomes_monthly",
            "-- input tasks_of_months: intermediate.int_tasks_resolved",
            "-- input tasks_of_months: intermediate.int_tasks_resolved, day started_at",
            "day is for days models only",
        ),
        (
            "int_task_outcomes_monthly",
            "-- incremental: months",
            "-- incremental: months\n-- days_touched: started_at, ended_at",
            "days_touched is for append models only",
        ),
        # within: a range of keys of another day input of the same model, for days models only
        (
            "int_team_usage_daily",
            "within task_id of retries_of_days.task_id",
            "within task_id of retries_of_dayz.task_id",
            "input tasks_of_days: within ... of retries_of_dayz: not a day input of this model",
        ),
        (
            "int_team_usage_daily",
            "within task_id of retries_of_days.task_id",
            "within team of retries_of_days.task_id",
            "input tasks_of_days: within: input tasks_of_days does not read team",
        ),
        (
            "int_team_usage_daily",
            "within task_id of retries_of_days.task_id",
            "day first_day, within task_id of retries_of_days.task_id",
            "names its day column (, day COLUMN) or the range of keys it reads",
        ),
        (
            "int_task_outcomes_monthly",
            "-- input tasks_of_months: intermediate.int_tasks_resolved",
            "-- input tasks_of_months: intermediate.int_tasks_resolved, within task_id of tasks_of_months.task_id",
            "within is for days models only",
        ),
        # a keys model is recomputed by the first column of its unique_key
        ("int_task_retries", "-- unique_key: task_id, month, route, team\n", "", "it needs a unique_key"),
        # compression: COLUMN METHOD pairs, on the tables created empty and then filled (append and keys)
        (
            "int_tasks_resolved",
            "-- compression: task_id zstd, accepted_request_id zstd",
            "-- compression: task_id zstd accepted_request_id zstd",
            "compression: expected COLUMN METHOD[, COLUMN METHOD]",
        ),
        (
            "int_task_outcomes_monthly",
            "-- incremental: months",
            "-- incremental: months\n-- compression: route zstd",
            "compression is for append and keys models only",
        ),
    ],
)
def test_an_incremental_header_its_strategy_cannot_follow_names_file_and_line(sql_copy, model, old, new, message):
    path = sql_copy / "intermediate" / f"{model}.sql"
    _edit(path, old, new)
    with pytest.raises(ModelHeaderError) as err:
        discover(sql_copy)
    assert message in str(err.value) and str(err.value).startswith(f"{path}:")


@pytest.mark.slow
def test_the_declared_compression_is_the_one_the_columns_are_stored_with(sql_copy, ledger):
    # int_requests_priced and int_tasks_resolved declare zstd for their columns of unique ids (at 10 M requests
    # half the write time and size of DuckDB's own choice, DICT_FSST); the other text columns keep DuckDB's choice
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request(f"r{i}", f"t{i}", "2026-07-10T10:00:00Z") for i in range(50)])
    ledger.build()
    ledger.con.execute("CHECKPOINT")  # rows are compressed when written to the file

    def stored(table: str) -> dict[str, set[str]]:
        rows = ledger.rows(
            f"SELECT column_name, compression FROM pragma_storage_info('intermediate.{table}') "
            "WHERE segment_type = 'VARCHAR'"
        )
        out: dict[str, set[str]] = {}
        for r in rows:
            out.setdefault(r["column_name"], set()).add(r["compression"])
        return out

    priced, tasks = stored("int_requests_priced"), stored("int_tasks_resolved")
    assert priced["request_id"] == priced["task_id"] == {"ZSTD"} and priced["route"] != {"ZSTD"}
    assert tasks["task_id"] == tasks["accepted_request_id"] == {"ZSTD"} and tasks["route"] != {"ZSTD"}
    # a column the table does not have fails the build, naming the file and line
    path = sql_copy / "intermediate" / "int_tasks_resolved.sql"
    _edit(path, "-- compression: task_id zstd,", "-- compression: task_idd zstd,")
    ledger.con.execute("DELETE FROM meta.build_state")  # a full build creates the tables again
    with pytest.raises(ModelHeaderError) as err:
        build(ledger.con, ledger.settings, ledger.store, sql_dir=sql_copy)
    assert str(err.value) == f"{path}:{_line_of(path, '-- compression: task_idd zstd, accepted_request_id zstd')}: " + (
        "compression: no column task_idd"
    )


@pytest.mark.parametrize("engine", ["duckdb", "spark"])
def test_a_keys_model_must_read_an_append_model_on_either_engine(sql_copy, ledger, engine):
    # one planner checks the headers for both engines, before anything is built (and before Spark starts)
    from dataclasses import replace

    path = sql_copy / "intermediate" / "int_tasks_resolved.sql"
    _edit(path, "intermediate.int_requests_priced (", "staging.stg_ledger__requests (")
    settings = replace(ledger.settings, engine_name=engine)
    with pytest.raises(ModelHeaderError, match=f"^{path}: a keys model reads exactly one append model"):
        build(ledger.con, settings, ledger.store, sql_dir=sql_copy)


@pytest.mark.slow
def test_a_second_model_of_each_strategy_is_built_from_its_header_alone(sql_copy, ledger):
    """Before, the engine named int_requests_priced and took *the* tasks model with next(...): a copy of either
    was silently wrong. Copies of the keys and months models, under new names, now agree with the originals
    after a full build and after incremental ones (a retry and a late decision)."""

    models = ("int_tasks_resolved", "int_task_outcomes_monthly", "int_requests_daily")  # keys, months, days
    for layer, name in (("intermediate", m) for m in models):
        text = (sql_copy / layer / f"{name}.sql").read_text()
        (sql_copy / layer / f"{name}_copy.sql").write_text(
            text.replace("scoped.requests_of_tasks", "scoped.copy_attempts").replace(
                "-- input requests_of_tasks:", "-- input copy_attempts:"
            )
        )
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [
            request("r1", "t1", "2026-07-31T23:00:00Z", status="error"),
            request("r2", "t2", "2026-07-10T10:00:00Z", accepted="true"),
        ],
    )
    build(ledger.con, ledger.settings, ledger.store, sql_dir=sql_copy)
    ledger.load("requests", [request("r3", "t1", "2026-08-01T01:00:00Z", attempt=2, accepted="true")])
    build(ledger.con, ledger.settings, ledger.store, sql_dir=sql_copy)
    ledger.load("outcomes", [{"task_id": "t2", "accepted": "false", "decided_at": "2026-08-02T09:00:00Z"}])
    build(ledger.con, ledger.settings, ledger.store, sql_dir=sql_copy)
    for name in models:
        original = sorted(map(repr, ledger.con.execute(f"SELECT * FROM intermediate.{name}").fetchall()))
        copy = sorted(map(repr, ledger.con.execute(f"SELECT * FROM intermediate.{name}_copy").fetchall()))
        assert original == copy and original, name
    # by hand: t1 accepted in August by its retry r3; t2 rejected by the late decision
    assert ledger.con.execute(
        "SELECT task_id, CAST(month AS VARCHAR), accepted FROM intermediate.int_tasks_resolved_copy ORDER BY task_id"
    ).fetchall() == [("t1", "2026-08-01", True), ("t2", "2026-07-01", False)]


def test_a_table_named_in_a_string_or_a_comment_is_not_read(sql_copy):
    # a seed whose text mentions a mart neither reads it nor waits for it
    (sql_copy / "staging" / "stg_a_words.sql").write_text(
        "-- grain: one row\n-- materialized: view\n-- column words VARCHAR: Words.\n"
        "SELECT 'see marts.monthly_break_even' AS words -- and intermediate.int_tasks_resolved\n"
        "/* or staging.stg_ledger__outcomes */\n",
        encoding="utf-8",
    )
    (model,) = [m for m in discover(sql_copy) if m.qualified == "staging.stg_a_words"]
    assert model.reads() == []


def test_an_append_model_runs_after_what_the_keys_models_it_computes_read(sql_copy):
    # the DuckDB engine computes the tasks (a keys model) batch by batch with the priced requests (the append model
    # they read): the outcomes they also read must be built first, even when a model visited early pulls the priced
    # requests forward (here a staging model that reads a mart built from them)
    (sql_copy / "staging" / "stg_a_early.sql").write_text(
        "-- grain: one row per cluster\n-- materialized: view\n-- column cluster_id VARCHAR: The cluster.\n"
        "SELECT DISTINCT e.cluster_id FROM marts.monthly_engine_reconciliation AS e\n",
        encoding="utf-8",
    )
    order = [m.qualified for m in discover(sql_copy)]
    assert order.index("staging.stg_ledger__outcomes") < order.index("intermediate.int_requests_priced")
    assert order.index("intermediate.int_requests_priced") < order.index("intermediate.int_tasks_resolved")


def test_a_model_file_changed_is_read_again_even_at_the_same_length(sql_copy):
    """The models are read from their files each time they are asked for: a file rewritten with text of the same
    length (a meaning with two letters swapped), however soon after, gives its new declaration."""
    path = sql_copy / "intermediate" / "int_months_spined.sql"
    before = {m.qualified: m for m in discover(sql_copy)}["intermediate.int_months_spined"].column("month_start")
    assert before.meaning == "The month's first instant (UTC)."
    path.write_text(path.read_text().replace("The month's first instant (UTC).", "The month's frist instant (UTC)."))
    after = {m.qualified: m for m in discover(sql_copy)}["intermediate.int_months_spined"].column("month_start")
    assert after.meaning == "The month's frist instant (UTC)."
