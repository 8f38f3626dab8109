"""The report's typed records: each names the mart it reads and the columns the report uses, as fields. A field is
read from its column by name when the report gathers its figures; a test checks every field against the mart's columns
and their types, so that a renamed column fails that test rather than the page."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any, ClassVar, Self


@dataclass(frozen=True, kw_only=True)
class BreakEvenMonth:
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
    marginal_break_even_accepted_tasks: Decimal | None
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

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        """The record of a mart row (a dict by column name); a field the row lacks is an error naming it."""
        missing = [f.name for f in fields(cls) if f.name not in row]
        if missing:
            raise KeyError(f"{cls.MART} has no column {', '.join(missing)}")
        return cls(**{f.name: row[f.name] for f in fields(cls)})


#: every typed record, for the test that holds them to their marts
RECORDS: tuple[type, ...] = (BreakEvenMonth,)
