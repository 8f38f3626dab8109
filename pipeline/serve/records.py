"""The report's typed records: each names the mart it reads and the columns the report uses, as fields. A field is
read from its column by name when the report gathers its figures; a test checks every field against the mart's columns
and their types, so that a renamed column fails that test rather than the page."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, fields
from decimal import Decimal
from typing import Any, ClassVar, Self


@dataclass(frozen=True, kw_only=True)
class Record:
    """A row of the mart ``MART``, one field per column the report reads."""

    MART: ClassVar[str]

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        """The record of a mart row (a dict by column name); a field the row lacks is an error naming it."""
        missing = [f.name for f in fields(cls) if f.name not in row]
        if missing:
            raise KeyError(f"{cls.MART} has no column {', '.join(missing)}")
        return cls(**{f.name: row[f.name] for f in fields(cls)})

    @classmethod
    def from_rows(cls, rows: list[dict[str, Any]]) -> list[Self]:
        return [cls.from_row(r) for r in rows]

    def as_row(self) -> dict[str, Any]:
        """Its fields by column name, in the mart's order (the exports' rows)."""
        return asdict(self)


@dataclass(frozen=True, kw_only=True)
class BreakEvenMonth(Record):
    """One month of marts.monthly_break_even: the verdict, break-even and the figures behind them."""

    MART: ClassVar[str] = "marts.monthly_break_even"

    month: dt.date
    accepted_work_usd: Decimal | None
    api_comparator_gap_usd: Decimal | None
    api_cost_per_accepted_task_usd: Decimal | None
    api_cost_per_million_tokens_at_mix: Decimal | None
    api_cost_source: str | None
    api_credits_usd: Decimal | None
    api_invoice_uplift: Decimal | None
    api_latency_unknown_share: float | None
    api_measured_cost_per_accepted_task_usd: Decimal | None
    api_run_rate_usd: Decimal | None
    api_tax_usd: Decimal | None
    api_waste_basis: str | None
    api_waste_factor: Decimal | None
    api_waste_factor_high: Decimal | None
    api_waste_factor_low: Decimal | None
    api_would_have_cost_usd: Decimal | None
    avoidable_cost_usd: Decimal | None
    break_even_accepted_tasks: Decimal | None
    break_even_nodes_at_peak: int | None
    break_even_range_high: Decimal | None
    break_even_range_low: Decimal | None
    break_even_reachable: bool | None
    break_even_share_of_capacity: float | None
    capacity_per_node_tokens_per_second: Decimal | None
    capacity_source: str | None
    committed_cost_usd: Decimal | None
    control_requirements: list[str] | None
    failed_work_usd: Decimal | None
    fixed_cost_usd: Decimal | None
    idle_cost_usd: Decimal | None
    infrastructure_break_even_accepted_tasks: Decimal | None
    infrastructure_cost_usd: Decimal | None
    monthly_token_capacity: Decimal | None
    nodes_in_service: int | None
    operating_cost_usd: Decimal | None
    productive_utilisation: float | None
    provisioned_node_hours: Decimal | None
    saving_range_high_usd: Decimal | None
    saving_range_low_usd: Decimal | None
    saving_usd: Decimal | None
    self_hosted_accepted_tasks: int | None
    self_hosted_cost_per_accepted_task_usd: Decimal | None
    self_hosted_cost_per_million_tokens_at_capacity: Decimal | None
    self_hosted_cost_per_million_tokens_served: Decimal | None
    self_hosted_variable_cost_per_accepted_task_usd: Decimal | None
    self_hosting_cheaper: bool | None
    shutdown_break_even_accepted_tasks: Decimal | None
    token_utilisation: float | None
    verdict: str | None
    verdict_caveats: list[str] | None
    verdict_confidence: str | None
    verdict_flipped_by: list[str] | None
    verdict_margin: float | None
    verdict_sensitivity: list[dict[str, Any]] | None


@dataclass(frozen=True, kw_only=True)
class RouteMonth(Record):
    """One route's month of marts.monthly_route_cost: what it served and what it cost, as billed."""

    MART: ClassVar[str] = "marts.monthly_route_cost"

    month: dt.date
    route: str
    requests: int | None
    tasks: int | None
    accepted_tasks: int | None
    cache_hit_input_tokens: Decimal | None
    cache_miss_input_tokens: Decimal | None
    output_tokens: Decimal | None
    reasoning_tokens: Decimal | None
    cache_hit_rate: float | None
    cost_usd: Decimal | None
    cost_basis: str | None
    cost_per_accepted_task_usd: Decimal | None
    p50_latency_ms: int | None
    p95_latency_ms: int | None
    latency_violations: int | None
    review_cost_usd: Decimal | None
    unpriced_requests: int | None
    acceptance_rate: float | None
    retry_rate: float | None
    latency_unknown: int | None
    cache_write_5m_input_tokens: Decimal | None
    cache_write_1h_input_tokens: Decimal | None
    web_search_calls: Decimal | None


@dataclass(frozen=True, kw_only=True)
class CurvePoint(Record):
    """One utilisation of marts.monthly_break_even_curve: what an accepted task would cost on the cluster there."""

    MART: ClassVar[str] = "marts.monthly_break_even_curve"

    month: dt.date
    token_utilisation: Decimal
    accepted_tasks: Decimal | None
    self_hosted_cost_per_accepted_task_usd: Decimal | None
    api_cost_per_accepted_task_usd: Decimal | None
    self_hosting_cheaper: bool | None
    today_token_utilisation: float | None
    break_even_token_utilisation: float | None
    ceiling_token_utilisation: float | None


@dataclass(frozen=True, kw_only=True)
class WorkloadMove(Record):
    """One team's kind of API work in marts.monthly_workload_moves: its saving on the cluster and whether it fits."""

    MART: ClassVar[str] = "marts.monthly_workload_moves"

    month: dt.date
    team: str
    workload: str
    accepted_tasks: int | None
    tokens_per_accepted_task: Decimal | None
    cache_hit_share: Decimal | None
    api_cost_per_accepted_task_usd: Decimal | None
    self_hosted_variable_cost_per_accepted_task_usd: Decimal | None
    saving_per_task_usd: Decimal | None
    saving_per_million_tokens_usd: Decimal | None
    saving_usd: Decimal | None
    peak_tokens_per_second: float | None
    unpriced_requests: Decimal | None
    spare_capacity_tokens_per_second: float | None
    move_rank: int | None
    cumulative_peak_tokens_per_second: float | None
    fits: bool | None
    cumulative_saving_usd: Decimal | None
    reason: str | None


@dataclass(frozen=True, kw_only=True)
class ForecastMonth(Record):
    """The month's row of marts.monthly_forecast: when the cluster's volume reaches break-even if its trend holds."""

    MART: ClassVar[str] = "marts.monthly_forecast"

    month: dt.date
    months_fitted: int | None
    trend_monthly_growth: float | None
    trend_monthly_growth_low: float | None
    trend_monthly_growth_high: float | None
    forecast_status: str
    projected_month: dt.date | None
    earliest_month: dt.date | None
    latest_month: dt.date | None


@dataclass(frozen=True, kw_only=True)
class PlanRow(Record):
    """One row of marts.monthly_hybrid_plan: the month at one cluster size (scenario ``plan``), or the month as it
    ran (scenario ``today``)."""

    MART: ClassVar[str] = "marts.monthly_hybrid_plan"

    month: dt.date
    scenario: str
    nodes: int
    self_hosted_token_share: Decimal | None
    committed_nodes: int | None
    owned_nodes: int | None
    reserved_nodes: int | None
    added_nodes: int | None
    cluster_cost_usd: Decimal | None
    operating_cost_usd: Decimal | None
    api_run_rate_usd: Decimal | None
    api_overflow_cost_usd: Decimal | None
    tasks_moved_to_api: Decimal | None
    api_cost_usd: Decimal | None
    review_usd: Decimal | None
    total_usd: Decimal | None
    is_cheapest: bool | None
    is_cheapest_with_spare: bool | None
    total_with_spare_usd: Decimal | None
    actual_total_usd: Decimal | None
    on_demand_node_hours_released: Decimal | None
    is_current: bool | None
    current_nodes: int | None
    committed_node_month_usd: Decimal | None
    node_month_usd: Decimal | None
    node_cost_source: str | None
    capacity_per_node_tokens_per_second: Decimal | None
    capacity_source: str | None
    overflow_hours: int | None
    peak_tokens_per_second: Decimal | None
    api_invoice_uplift: Decimal | None
    renewal_from: dt.date | None


@dataclass(frozen=True, kw_only=True)
class GateVerdict(Record):
    """One evaluation set's row of marts.gate_verdict: passed, failed or incomplete, and the criteria behind it."""

    MART: ClassVar[str] = "marts.gate_verdict"

    eval_set: str
    verdict: str
    failed_criteria: list[str]
    missing_criteria: list[str]
    criteria_passed: int | None
    criteria: int | None
    skipped_criteria: list[str] | None
    reasons: list[str]


@dataclass(frozen=True, kw_only=True)
class GateCriterion(Record):
    """One criterion of an evaluation set's gate in marts.gate_criteria: its value against its threshold."""

    MART: ClassVar[str] = "marts.gate_criteria"

    eval_set: str
    criterion: str
    value: Decimal | None
    threshold: Decimal | None
    passed: bool | None
    status: str
    detail: str | None
    cases_needed: int | None


@dataclass(frozen=True, kw_only=True)
class ProviderReconciliation(Record):
    """One provider's month in marts.monthly_reconciliation: its invoices against the request log's metered cost."""

    MART: ClassVar[str] = "marts.monthly_reconciliation"

    month: dt.date
    provider: str
    invoiced_usd: Decimal | None
    metered_usd: Decimal | None
    difference_usd: Decimal | None
    status: str | None
    tolerance_usd: Decimal | None
    credits_usd: Decimal | None
    tax_usd: Decimal | None
    invoiced_total_usd: Decimal | None
    requests: int | None
    unpriced_requests: int | None
    invoices: int | None
    invoice_ids: str | None
    allocated_from_multi_month_usd: Decimal | None
    line_price_mismatches: int | None
    line_price_mismatch_usd: Decimal | None
    line_price_mismatch_share: float | None


@dataclass(frozen=True, kw_only=True)
class EngineReconciliation(Record):
    """One cluster's month in marts.monthly_engine_reconciliation: its logged tokens against its engines' counts."""

    MART: ClassVar[str] = "marts.monthly_engine_reconciliation"

    month: dt.date
    cluster_id: str
    engine_prompt_tokens: Decimal | None
    engine_generation_tokens: Decimal | None
    engine_tokens: Decimal | None
    logged_prompt_tokens: int | None
    logged_generation_tokens: int | None
    logged_tokens: int | None
    difference: Decimal | None
    difference_pct: Decimal | None
    tolerance_tokens: Decimal | None
    status: str
    counter_series: int | None
    counter_resets: int | None
    scrape_gaps: int | None


@dataclass(frozen=True, kw_only=True)
class ClusterTelemetry(Record):
    """One cluster's month in marts.monthly_cluster_telemetry: what its GPUs' and engines' own meters say."""

    MART: ClassVar[str] = "marts.monthly_cluster_telemetry"

    month: dt.date
    cluster_id: str
    gpus_metered: int
    provisioned_gpu_hours: Decimal | None
    metered_gpu_hours: Decimal | None
    engine_active_gpu_hours: Decimal | None
    engine_active_share: float | None
    token_utilisation: float | None
    energy_kwh: Decimal | None
    energy_source: str | None
    energy_usd: Decimal | None
    energy_line: str | None
    waiting_hours: int
    least_waiting_hour_tokens_per_second: Decimal | None
    capacity_tokens_per_second: Decimal | None
    queue_pressure: bool
    busy_source: str | None
    prefix_cache_queried_tokens: Decimal | None
    prefix_cache_hit_tokens: Decimal | None
    prefix_cache_hit_share: float | None
    api_cache_hit_share: float | None
    prefix_cache_saved_usd: Decimal | None


@dataclass(frozen=True, kw_only=True)
class PhaseCost(Record):
    """One phase of one cluster's month in marts.monthly_phase_cost: its part of the fixed cost and per million."""

    MART: ClassVar[str] = "marts.monthly_phase_cost"

    month: dt.date
    cluster_id: str
    phase: str
    tokens: int
    allocation_method: str
    phase_seconds: Decimal | None
    allocation_share: float | None
    cost_usd: Decimal | None
    cost_per_million_tokens: Decimal | None
    api_list_per_million: Decimal | None


#: every typed record, for the test that holds them to their marts
RECORDS: tuple[type[Record], ...] = (
    BreakEvenMonth,
    RouteMonth,
    CurvePoint,
    WorkloadMove,
    ForecastMonth,
    PlanRow,
    GateVerdict,
    GateCriterion,
    ProviderReconciliation,
    EngineReconciliation,
    ClusterTelemetry,
    PhaseCost,
)
