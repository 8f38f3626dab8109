"""The raw tables match their SQLModel classes; the marts keep docs/marts.md's contract and are documented."""

import pytest

from pipeline.transform.build import AuditFailed, build, discover
from schemas.ddl import canonical_columns, table_name
from schemas.tables import KINDS, Request
from tests.conftest import PRICE_MOONSHOT, request, sql_tree_with

# docs/marts.md, "Outputs": mart -> the columns the contract names (marts may carry more after them)
CONTRACT = {
    "monthly_route_cost": [
        "month",
        "route",
        "requests",
        "tasks",
        "accepted_tasks",
        "cache_hit_input_tokens",
        "cache_miss_input_tokens",
        "output_tokens",
        "reasoning_tokens",
        "cache_hit_rate",
        "cost_usd",
        "cost_basis",
        "cost_per_accepted_task_usd",
        "p50_latency_ms",
        "p95_latency_ms",
        "latency_violations",
    ],
    "monthly_self_hosted_cost": ["month", "cluster_id", "category", "amount_usd"],
    "monthly_utilisation": [
        "month",
        "cluster_id",
        "provisioned_hours",
        "provisioned_node_hours",
        "busy_hours",
        "in_flight_share",
        "in_flight_accepted_hours",
        "used_node_hours",
        "productive_node_hours",
        "productive_utilisation",
        "token_utilisation",
        "peak_hour_tokens_per_second",
        "peak_to_average_tokens",
        "peak_to_average_requests",
        "max_token_utilisation_at_peak",
        "capacity_tokens_per_second",
        "capacity_per_node_tokens_per_second",
        "capacity_source",
        "tokens_served",
        "fixed_cost_usd",
        "accepted_work_usd",
        "failed_work_usd",
        "idle_cost_usd",
        "self_hosted_cost_per_million_tokens_served",
    ],
    "monthly_break_even": [
        "month",
        "self_hosted_cost_usd",
        "fixed_cost_usd",
        "committed_cost_usd",
        "avoidable_cost_usd",
        "api_cost_per_accepted_task_usd",
        "api_cost_source",
        "api_measured_cost_per_accepted_task_usd",
        "api_equivalent_cost_per_accepted_task_usd",
        "api_overhead_factor",
        "self_hosted_variable_cost_per_accepted_task_usd",
        "break_even_accepted_tasks",
        "self_hosted_accepted_tasks",
        "verdict",
        "self_hosting_cheaper",
        "productive_utilisation",
        "capacity_tokens_per_second",
        "capacity_source",
        "monthly_token_capacity",
        "break_even_share_of_capacity",
        "break_even_reachable",
        "self_hosted_cost_per_million_tokens_at_capacity",
        "api_cost_per_million_tokens_at_mix",
        "api_credits_usd",
        "api_tax_usd",
    ],
    "monthly_reconciliation": ["month", "provider", "invoiced_usd", "metered_usd", "difference_usd", "status"],
    "monthly_hybrid_plan": [
        "month",
        "scenario",
        "nodes",
        "self_hosted_token_share",
        "committed_nodes",
        "added_nodes",
        "cluster_cost_usd",
        "operating_cost_usd",
        "api_overflow_cost_usd",
        "review_usd",
        "total_usd",
        "is_cheapest",
        "is_cheapest_with_spare",
        "total_with_spare_usd",
        "actual_total_usd",
        "on_demand_node_hours_released",
    ],
    "monthly_counterfactual": ["month", "horizon", "scenario"],
    "gate_comparison": ["eval_set", "route", "category"],
    "gate_criteria": ["eval_set", "criterion", "value", "threshold", "passed"],
    "monthly_workload_moves": ["month", "team", "workload"],
    "gate_verdict": ["eval_set"],
}
#: Columns the contract adds to a mart after its first columns, in any order
ADDED = {
    "monthly_break_even": {
        "break_even_nodes_at_peak",
        "nodes_in_service",
        "idle_cost_usd",
        "accepted_work_usd",
        "failed_work_usd",
        "control_requirements",
    },
    "monthly_utilisation": {"accepted_p95_latency_ms", "nodes_in_service", "sweep_optimistic"},
    "monthly_workload_moves": {"fits", "cumulative_saving_usd"},
}
MONEY = {
    "cost_usd",
    "cost_per_accepted_task_usd",
    "amount_usd",
    "self_hosted_cost_usd",
    "fixed_cost_usd",
    "committed_cost_usd",
    "avoidable_cost_usd",
    "api_measured_cost_per_accepted_task_usd",
    "api_equivalent_cost_per_accepted_task_usd",
    "self_hosted_variable_cost_per_accepted_task_usd",
    "self_hosted_cost_per_million_tokens_at_capacity",
    "api_cost_per_million_tokens_at_mix",
    "api_credits_usd",
    "api_tax_usd",
    "api_cost_per_accepted_task_usd",
    "invoiced_usd",
    "metered_usd",
    "difference_usd",
    "cluster_cost_usd",
    "operating_cost_usd",
    "api_overflow_cost_usd",
    "review_usd",
    "total_usd",
    "accepted_work_usd",
    "failed_work_usd",
    "idle_cost_usd",
}


#: The request log's columns as docs/input-files.md states them: token counts are whole numbers (BIGINT),
#: times are UTC timestamps, money is DECIMAL with 12 places; written out here, not read from the code.
REQUESTS_TABLE = [
    ("request_id", "VARCHAR"), ("task_id", "VARCHAR"), ("attempt", "INTEGER"), ("started_at", "TIMESTAMP"),
    ("route", "VARCHAR"), ("provider", "VARCHAR"), ("cluster_id", "VARCHAR"), ("model", "VARCHAR"),
    ("cache_hit_input_tokens", "BIGINT"), ("cache_miss_input_tokens", "BIGINT"), ("output_tokens", "BIGINT"),
    ("reasoning_tokens", "BIGINT"), ("cache_write_5m_input_tokens", "BIGINT"),
    ("cache_write_1h_input_tokens", "BIGINT"),
    ("web_search_calls", "BIGINT"), ("service_tier", "VARCHAR"), ("latency_ms", "BIGINT"), ("status", "VARCHAR"),
    ("accepted", "BOOLEAN"), ("team", "VARCHAR"), ("workload", "VARCHAR"), ("reported_cost_usd", "DECIMAL(38,12)"),
    ("source_file_hash", "VARCHAR"), ("source_line", "BIGINT"),
]  # fmt: skip


def _expected_type(column: str) -> str | None:
    """The type a raw column's name promises, by the ledger's rules (None: the name promises none)."""
    if column.endswith("_tokens") or column in ("source_line", "min_input_tokens"):
        return "BIGINT"
    if column.endswith(("_per_million", "_per_call")):
        return "DECIMAL(24,12)"  # a price per million tokens, to 12 places: $0.1234567 is kept as written
    if column in ("amount", "unit_price") or column.endswith("_usd"):
        return "DECIMAL(38,12)"  # money: a cache-hit token costs $0.0000003, seven places
    if column.endswith("_at") or column in ("effective_from", "effective_to", "charge_start", "charge_end"):
        return "TIMESTAMP"
    return None


def test_raw_tables_have_the_types_the_contract_states(ledger):
    got = ledger.rows(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = 'raw' AND table_name = 'requests' "
        "ORDER BY column_index"
    )
    assert [(g["column_name"], g["data_type"]) for g in got] == REQUESTS_TABLE
    for model in KINDS.values():
        got = ledger.rows(
            "SELECT column_name, data_type, comment FROM duckdb_columns() WHERE schema_name = 'raw' AND table_name = ?",
            [table_name(model)],
        )
        assert got, table_name(model)
        for g in got:
            want = _expected_type(g["column_name"])
            assert want is None or g["data_type"] == want, (table_name(model), g)
            assert g["comment"], f"{table_name(model)}.{g['column_name']} has no comment"


def test_no_surrogate_keys_and_natural_key_on_requests():
    for model in KINDS.values():
        assert "id" not in model.model_fields
    # a request id is unique per provider: two providers may use the same id
    assert [c.name for c in canonical_columns(Request) if c.primary_key] == ["request_id", "provider"]


def test_every_model_states_grain_and_marts_are_audited():
    models = discover()
    assert {m.layer for m in models} == {"staging", "intermediate", "marts"}
    for m in models:
        assert m.grain.startswith("one row"), m.path
        assert m.path.stem == m.name
    marts = [m for m in models if m.layer == "marts"]
    # the contract's marts and the verdict's sensitivity and forecast, plus the report's sensitivity and team usage
    # marts, unallocated FOCUS cost, the usage-export and the engine-counter reconciliations, the cluster's telemetry,
    # and the break-even's inputs and robustness
    assert sorted(m.name for m in marts) == sorted(
        [
            *CONTRACT,
            "monthly_verdict_sensitivity",
            "monthly_forecast",
            "monthly_sensitivity",
            "monthly_team_usage",
            "monthly_unallocated_cloud_cost",
            "monthly_usage_reconciliation",
            "monthly_api_waste",
            "monthly_cluster_economics",
            "monthly_break_even_curve",
            "monthly_engine_reconciliation",
            "monthly_cluster_telemetry",
            "monthly_phase_cost",
            "monthly_chargeback",
            "budget_status",
            "daily_anomalies",
            "monthly_break_even_inputs",
            "monthly_break_even_robustness",
        ]
    )
    assert all(m.unique_key for m in marts)


@pytest.mark.slow
def test_marts_keep_the_contract_with_comments_and_decimal_money(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("r", "t", "2026-07-01T10:00:00Z", cache_miss_input_tokens=10)])
    ledger.build()
    for mart, cols in CONTRACT.items():
        got = ledger.rows(
            "SELECT column_name, data_type, comment FROM duckdb_columns() "
            "WHERE schema_name = 'marts' AND table_name = ? ORDER BY column_index",
            [mart],
        )
        assert [g["column_name"] for g in got][: len(cols)] == cols, mart
        assert ADDED.get(mart, set()) <= {g["column_name"] for g in got}, mart
        for g in got:
            assert g["comment"], f"marts.{mart}.{g['column_name']} has no COMMENT"
            if g["column_name"] in MONEY:
                assert g["data_type"].startswith("DECIMAL"), f"{mart}.{g['column_name']} is {g['data_type']}"
        if "month" in cols:
            months = ledger.rows(f"SELECT DISTINCT typeof(month) AS t FROM marts.{mart}")
            assert months in ([], [{"t": "DATE"}])


def one_mart_tree(tmp_path, sql: str):
    """A model tree of a single mart, marts.monthly_route_cost, with the given SQL."""
    sql_dir = tmp_path / "sql"
    for layer in ("staging", "intermediate", "marts", "audits"):
        (sql_dir / layer).mkdir(parents=True)
    (sql_dir / "marts" / "monthly_route_cost.sql").write_text(sql)
    return sql_dir


@pytest.mark.slow
def test_failed_audit_rolls_back_the_whole_build(ledger, tmp_path):
    ledger.load("requests", [request("r", "t", "2026-07-01T10:00:00Z")])
    ledger.build()
    before = ledger.one("SELECT count(*) AS n FROM marts.monthly_route_cost")
    # a model tree whose audit always fails
    sql_dir = one_mart_tree(
        tmp_path,
        "-- grain: one row per nothing\n-- unique_key: x\n-- column x INTEGER: a number\n"
        "SELECT 1 AS x UNION ALL SELECT 1",
    )
    with pytest.raises(AuditFailed, match="not unique"):
        build(ledger.con, ledger.settings, ledger.store, sql_dir=sql_dir)
    # the published mart is the one from before, not the broken one
    assert ledger.one("SELECT count(*) AS n FROM marts.monthly_route_cost") == before


def test_a_failing_model_is_named_and_rolls_back(ledger, tmp_path):
    from pipeline.transform.build import ModelFailed

    ledger.load("requests", [request("r", "t", "2026-07-01T10:00:00Z")])
    ledger.build()
    before = ledger.one("SELECT count(*) AS n FROM marts.monthly_route_cost")
    sql_dir = one_mart_tree(tmp_path, "-- grain: one row per x\nSELECT no_such_column FROM raw.requests")
    with pytest.raises(
        ModelFailed, match=r"model marts.monthly_route_cost \(sql/marts/monthly_route_cost.sql\) failed"
    ):
        build(ledger.con, ledger.settings, ledger.store, sql_dir=sql_dir)
    assert ledger.one("SELECT count(*) AS n FROM marts.monthly_route_cost") == before


def test_a_cost_line_of_a_class_not_declared_stops_the_build(ledger, tmp_path):
    """The cost classes are declared once (staging.stg_ledger__cost_classes): a model that gives a cost line another
    class (here the opex rows as 'opex' instead of 'operating') fails the build's audit, and nothing is published."""
    sql_dir = sql_tree_with(
        tmp_path,
        "marts/monthly_self_hosted_cost.sql",
        "o.category, 'operating', o.amount_usd",
        "o.category, 'opex', o.amount_usd",
    )
    ledger.load("opex", [{"month": "2026-07", "category": "inference_operations", "amount": "100", "currency": "USD"}])
    selection = ("+marts.monthly_self_hosted_cost", "staging.stg_ledger__cost_classes")
    with pytest.raises(AuditFailed, match="assert_cost_classes_declared"):
        build(ledger.con, ledger.settings, ledger.store, sql_dir=sql_dir, selection=selection)
    # the real tree passes the same audit
    build(ledger.con, ledger.settings, ledger.store, selection=selection)
    assert ledger.one("SELECT cost_class FROM marts.monthly_self_hosted_cost") == {"cost_class": "operating"}


def test_a_caveat_not_declared_stops_the_build(ledger, tmp_path):
    """The verdict's caveats are declared once (staging.stg_ledger__caveats, with what each means in the report's
    words): a break-even that gives a month a caveat not declared there fails the build's audit."""
    raised = "CASE WHEN invoice_unreconciled THEN 'invoice_unreconciled' END,"
    sql_dir = sql_tree_with(tmp_path, "marts/monthly_break_even.sql", raised, "'not_declared',")  # every month
    ledger.load("requests", [request("r", "t", "2026-07-01T10:00:00Z")])
    selection = ("+marts.monthly_break_even", "staging.stg_ledger__caveats")
    with pytest.raises(AuditFailed, match="assert_caveats_declared"):
        build(ledger.con, ledger.settings, ledger.store, sql_dir=sql_dir, selection=selection)
    # the real tree passes the same audit, over the same month
    build(ledger.con, ledger.settings, ledger.store, selection=selection)
    assert ledger.one("SELECT count(*) AS n FROM marts.monthly_break_even") == {"n": 1}


def test_a_verdict_not_declared_stops_the_build(ledger, tmp_path):
    """The break-even's verdicts are declared once (staging.stg_ledger__verdicts, with how the report says each): a
    break-even that gives a month a verdict not declared there fails the build's audit."""
    given = "WHEN NOT has_self_hosted_route THEN 'no_self_hosted_route'"
    sql_dir = sql_tree_with(
        tmp_path, "marts/monthly_break_even.sql", given, given.replace("no_self_hosted_route'", "no_cluster'")
    )
    ledger.load("requests", [request("r", "t", "2026-07-01T10:00:00Z")])  # an API request, no cluster at all
    selection = ("+marts.monthly_verdict_sensitivity", "staging.stg_ledger__verdicts")
    with pytest.raises(AuditFailed, match="assert_verdicts_declared"):
        build(ledger.con, ledger.settings, ledger.store, sql_dir=sql_dir, selection=selection)
    # the real tree passes the same audit, over the same month, and gives the month the declared verdict
    build(ledger.con, ledger.settings, ledger.store, selection=selection)
    assert ledger.one("SELECT verdict FROM marts.monthly_break_even") == {"verdict": "no_self_hosted_route"}
