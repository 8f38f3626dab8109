"""The figures one month's report shows, as ``pipeline.serve.report.gather`` read them from the published ledger."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipeline.serve.planning import Gate
from pipeline.serve.records import (
    BreakEvenMonth,
    ClusterTelemetry,
    PhaseCost,
    EngineReconciliation,
    CurvePoint,
    ForecastMonth,
    PlanRow,
    ProviderReconciliation,
    RouteMonth,
    WorkloadMove,
)


@dataclass(kw_only=True)
class ReportData:
    month: str
    generated_at: str
    publication: dict[str, Any]
    be: BreakEvenMonth
    """The month's break-even, typed (the fields the report reads)."""
    be_row: dict[str, Any]
    """The same row with every column, for the exports."""
    routes: list[RouteMonth]
    trend_routes: list[dict[str, Any]]
    trend_be: list[dict[str, Any]]
    trend_costs: list[dict[str, Any]]
    month_costs: list[dict[str, Any]]
    utilisation: list[dict[str, Any]]
    sensitivity: list[dict[str, Any]]
    measured_plan: list[dict[str, Any]]
    measured_inputs: dict[str, Any]
    reconciliation: list[ProviderReconciliation]
    invoices: list[dict[str, Any]]
    usage: list[dict[str, Any]]
    """Provider usage exports against the logs (marts.monthly_usage_reconciliation), for this month."""
    data_quality: list[dict[str, Any]]
    rejected_files: list[dict[str, Any]]
    restated: list[dict[str, Any]]
    settings: list[dict[str, Any]]
    license: list[dict[str, Any]]
    teams: list[dict[str, Any]]
    engines: list[EngineReconciliation] = field(default_factory=list)
    """Each cluster's request log against its serving engines' token counts (marts.monthly_engine_reconciliation)."""
    chargeback: list[dict[str, Any]] = field(default_factory=list)
    """Who spent what: the month's rows of marts.monthly_chargeback."""
    budgets: list[dict[str, Any]] = field(default_factory=list)
    """The month's rows of marts.budget_status."""
    anomalies: list[dict[str, Any]] = field(default_factory=list)
    """The month's rows of marts.daily_anomalies."""
    telemetry: list[ClusterTelemetry] = field(default_factory=list)
    """What each cluster's GPUs and engines reported of the month (marts.monthly_cluster_telemetry)."""
    phases: list[PhaseCost] = field(default_factory=list)
    """Each cluster's fixed cost split between prompt and generation (marts.monthly_phase_cost)."""
    forecast: ForecastMonth | None = None
    """The month's row of marts.monthly_forecast (when the ledger has the mart)."""
    previous: BreakEvenMonth | None = None
    """The month before's break-even row, when the ledger has it."""
    movements: list[dict[str, Any]] = field(default_factory=list)
    """The three largest cost movements since the month before, with their causes (sql/queries/month_movements.sql)."""
    counterfactual: list[dict[str, Any]] = field(default_factory=list)
    """The month's rows of marts.monthly_counterfactual: every decision as a scenario of one month."""
    hybrid: list[PlanRow] = field(default_factory=list)
    """The month's rows of marts.monthly_hybrid_plan: its cost at each cluster size."""
    curve: list[CurvePoint] = field(default_factory=list)
    """The month's rows of marts.monthly_break_even_curve: the cost per accepted task at each utilisation."""
    moves: list[WorkloadMove] = field(default_factory=list)
    """The month's rows of marts.monthly_workload_moves: the API's workloads in the order they would move."""
    bridge: list[dict[str, Any]] = field(default_factory=list)
    """How the month's cost figures tie together (sql/queries/cost_bridge.sql), step by step."""
    gate: Gate | None = None
    """The latest evaluation set's deployment gate, when the ledger has one."""
    caveat_meanings: dict[str, str] = field(default_factory=dict)
    """Each caveat the verdict can carry and what it means, in the report's words (staging.stg_ledger__caveats)."""
    verdict_words: dict[str, dict[str, str]] = field(default_factory=dict)
    """Each verdict the break-even can give, as the headline, a sentence and a table cell say it
    (staging.stg_ledger__verdicts: ``headline``, ``in_a_sentence``, ``in_a_table``)."""
    charts: dict[str, str] = field(default_factory=dict)
    charts_note: str | None = None
    """Why the charts were left out, when the chart renderer could not draw them."""

    def setting(self, key: str) -> str | None:
        return next((r["value"] or None for r in self.settings if r["key"] == key), None)
