"""What a row *is*: one SQLModel class per canonical raw table.

Each class is the single source of truth for its table: the raw tables' DDL is
generated from these classes (``schemas.ddl``), the ingest allow-list of columns
is derived from them, and every field's ``description`` becomes the column's
``COMMENT ON`` text in the DuckDB file.

Conventions
-----------
* Natural keys (``request_id``; ``(provider, invoice_id, line_id)``; ...) are the
  primary keys. No surrogate ``id``: SQLModel's default ``int | None`` key emits
  ``SERIAL``, which DuckDB rejects, and a natural key keeps reloads idempotent.
* Money is ``Decimal``: ``DECIMAL(38,12)`` for amounts (a picodollar), and
  ``DECIMAL(24,12)`` for prices per million tokens (a per-token price has 18
  decimal places; ``tokens x price / 1e6`` is exact at scale 18, and a request's
  cost keeps 12: a price with more than 6 places per million can round it once,
  below a picodollar).
* Timestamps are UTC ``TIMESTAMP`` (ingest converts any offset to UTC).
* Every raw row carries ``source_file_hash`` and ``source_line``: where it came from.

``table=True`` models do not validate on ``__init__``; use ``model_validate``.
"""

from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from datetime import date, datetime
from decimal import Decimal
from typing import Literal

from sqlalchemy import BigInteger, Boolean, Date, DateTime, Integer, Numeric
from sqlmodel import Field, SQLModel

from schemas.focus import FOCUS_COLUMNS, FocusCharge
from schemas.meters import EngineSample, GpuSample
from schemas.money import Money, PricePerMillion
from schemas.provenance import Provenance


Route = Literal["api", "self_hosted"]
LineType = Literal[
    "input_cache_hit", "input_cache_miss", "input_cache_write", "output", "tool", "credit", "tax", "other"
]
ChargeKind = Literal["on_demand", "reserved", "other"]
OpexCategory = Literal[
    "platform_engineering",
    "inference_operations",
    "networking",
    "storage",
    "observability",
    "security",
    "on_call",
    "other",
]

ROUTES: tuple[str, ...] = ("api", "self_hosted")
LINE_TYPES: tuple[str, ...] = (
    "input_cache_hit",
    "input_cache_miss",
    "input_cache_write",
    "output",
    "tool",
    "credit",
    "tax",
    "other",
)
#: Provider service tiers a request is billed at (prices are keyed by them).
SERVICE_TIERS: tuple[str, ...] = ("standard", "batch", "flex", "priority")
CHARGE_KINDS: tuple[str, ...] = ("on_demand", "reserved", "other")
CHARGE_UNITS: tuple[str, ...] = ("node_hour", "gpu_hour")
OPEX_CATEGORIES: tuple[str, ...] = (
    "platform_engineering",
    "inference_operations",
    "networking",
    "storage",
    "observability",
    "security",
    "on_call",
    "energy",
    "other",
)
#: The failure drills of the deployment gate (``gate-checks``), as seed 001 lists them.
GATE_DRILLS: tuple[str, ...] = ("node_loss", "rollback", "queue_growth", "long_context_burst", "malformed_tool_call")
#: The ledger's currency: amounts in any other convert through the ``fx`` kind (a row without a rate on or before
#: its date is quarantined, never converted at 1).
LEDGER_CURRENCY = "USD"


class Request(Provenance, table=True):
    """One request to a model = one attempt of a task."""

    __tablename__ = "requests"

    request_id: str = Field(
        primary_key=True, description="Id of the request, unique per provider (the natural key is provider and id)."
    )
    task_id: str = Field(nullable=False, description="The unit of business work this request is an attempt of.")
    attempt: int | None = Field(
        default=None, sa_type=Integer, description="Attempt number within the task (1 = first try), if logged."
    )
    started_at: datetime = Field(sa_type=DateTime, nullable=False, description="When the request started, UTC.")
    route: str = Field(
        nullable=False, description="'api' (hosted, per-token) or 'self_hosted' (own cluster, per-hour)."
    )
    provider: str | None = Field(
        default=None,
        primary_key=True,
        description="API provider (API rows), e.g. 'moonshot'. Matches prices.provider. Part of the natural key: two "
        "providers may use the same request id.",
    )
    cluster_id: str | None = Field(default=None, description="Cluster that served the request (self-hosted rows).")
    model: str = Field(nullable=False, description="Model name as priced in the price catalog.")
    cache_hit_input_tokens: int = Field(
        sa_type=BigInteger, nullable=False, description="Prompt tokens served from a prefix cache."
    )
    cache_miss_input_tokens: int = Field(
        sa_type=BigInteger, nullable=False, description="Prompt tokens not served from cache."
    )
    output_tokens: int = Field(
        sa_type=BigInteger, nullable=False, description="Visible output tokens, excluding reasoning."
    )
    reasoning_tokens: int = Field(
        sa_type=BigInteger, nullable=False, description="Hidden reasoning tokens, billed at the output rate."
    )
    cache_write_5m_input_tokens: int = Field(
        default=0,
        sa_type=BigInteger,
        description="Prompt tokens written to the provider's prompt cache with a 5-minute lifetime (Anthropic, "
        "Bedrock); priced at the 5-minute cache-write rate, never as cache-miss input. Default 0.",
    )
    cache_write_1h_input_tokens: int = Field(
        default=0,
        sa_type=BigInteger,
        description="Prompt tokens written to the prompt cache with a 1-hour lifetime; priced at the 1-hour "
        "cache-write rate. Default 0.",
    )
    web_search_calls: int = Field(
        default=0, sa_type=BigInteger, description="Web searches the request ran, billed per call. Default 0."
    )
    service_tier: str = Field(
        default="standard",
        description="Service tier the request was billed at: standard (default), batch, flex or priority.",
    )
    latency_ms: int | None = Field(
        default=None,
        sa_type=BigInteger,
        description="Wall time of the request in milliseconds. Optional on api rows (response bodies carry none: "
        "left out of latency percentiles and SLO checks, counted as latency_unknown); self_hosted rows need it.",
    )
    status: str = Field(nullable=False, description="'ok', 'error', 'timeout', ...: how the request ended.")
    accepted: bool | None = Field(
        default=None,
        sa_type=Boolean,
        description="The task's outcome as judged on this attempt, if the log carries it.",
    )
    team: str | None = Field(default=None, description="Team that sent the request, if logged.")
    workload: str | None = Field(
        default=None,
        description="The kind of work the request did (coding, long_context, vision, tool_calling, ...: free text), "
        "if logged. With the team it names a workload: the unit the ledger ranks for moving between routes.",
    )
    reported_cost_usd: Decimal | None = Field(
        default=None,
        sa_type=Money,
        description="What the provider says the request cost (OpenRouter's usage.cost), if the log has it; kept "
        "next to the metered cost, never used in its place.",
    )


class Outcome(Provenance, table=True):
    """One decision about a task (evaluation harness or human review)."""

    __tablename__ = "outcomes"

    task_id: str = Field(primary_key=True, description="The task decided on.")
    decided_at: datetime = Field(
        primary_key=True,
        sa_type=DateTime,
        description="When the decision was made, UTC. The latest decision is the task's final outcome.",
    )
    accepted: bool = Field(sa_type=Boolean, nullable=False, description="True if the task's work was accepted.")
    request_id: str | None = Field(
        default=None, description="The accepted attempt; default: the task's last 'ok' attempt."
    )
    review_minutes: Decimal | None = Field(
        default=None, sa_type=Numeric(18, 4), description="Human review time spent on this decision, minutes."
    )
    reason: str | None = Field(default=None, description="Why the task was accepted or rejected.")


class InvoiceLine(Provenance, table=True):
    """One line of a provider's invoice."""

    __tablename__ = "invoices"

    provider: str = Field(primary_key=True, description="API provider that issued the invoice.")
    invoice_id: str = Field(primary_key=True, description="Provider's invoice number.")
    line_id: str = Field(primary_key=True, description="Line within the invoice.")
    period_start: datetime = Field(
        sa_type=DateTime, nullable=False, description="Start of the billed period, UTC (inclusive)."
    )
    period_end: datetime = Field(
        sa_type=DateTime, nullable=False, description="End of the billed period, UTC (exclusive)."
    )
    line_type: str = Field(
        nullable=False, description="input_cache_hit, input_cache_miss, output, credit, tax or other."
    )
    model: str | None = Field(default=None, description="Model the line bills, if any.")
    quantity: Decimal | None = Field(
        default=None, sa_type=Numeric(38, 6), description="Billed quantity (tokens), if given."
    )
    unit_price_per_million: Decimal | None = Field(
        default=None, sa_type=PricePerMillion, description="Price per million units, if given."
    )
    amount: Decimal = Field(sa_type=Money, nullable=False, description="Line amount in currency; credits are negative.")
    currency: str = Field(nullable=False, description="ISO currency code (USD).")


class Price(Provenance, table=True):
    """A published per-token price, valid from effective_from (inclusive) to effective_to (exclusive)."""

    __tablename__ = "prices"

    provider: str = Field(primary_key=True, description="API provider.")
    model: str = Field(primary_key=True, description="Model name.")
    effective_from: datetime = Field(
        primary_key=True, sa_type=DateTime, description="First instant the price applies, UTC."
    )
    service_tier: str = Field(
        primary_key=True,
        default="standard",
        description="Service tier the price applies to: standard (default), batch, flex or priority.",
    )
    min_input_tokens: int = Field(
        primary_key=True,
        default=0,
        sa_type=BigInteger,
        description="Long-context tier: the price applies to requests with at least this many input tokens (hit + "
        "miss + cache writes); the row with the largest one not above the request's input wins. Default 0.",
    )
    effective_to: datetime | None = Field(
        default=None,
        sa_type=DateTime,
        description="First instant it no longer applies (exclusive); empty = until the next price.",
    )
    cache_hit_input_per_million: Decimal = Field(
        sa_type=PricePerMillion, nullable=False, description="USD per 1M cache-hit input tokens."
    )
    cache_miss_input_per_million: Decimal = Field(
        sa_type=PricePerMillion, nullable=False, description="USD per 1M cache-miss input tokens."
    )
    cache_write_5m_per_million: Decimal | None = Field(
        default=None,
        sa_type=PricePerMillion,
        description="Per 1M tokens written to the cache with a 5-minute lifetime; empty = the cache-miss price.",
    )
    cache_write_1h_per_million: Decimal | None = Field(
        default=None,
        sa_type=PricePerMillion,
        description="Per 1M tokens written to the cache with a 1-hour lifetime; empty = the cache-miss price.",
    )
    output_per_million: Decimal = Field(
        sa_type=PricePerMillion, nullable=False, description="USD per 1M output (and reasoning) tokens."
    )
    web_search_per_call: Decimal | None = Field(
        default=0, sa_type=PricePerMillion, description="Per web search call (not per token). Default 0."
    )
    currency: str = Field(nullable=False, description="ISO currency code (USD).")


class ClusterCharge(Provenance, table=True):
    """One charge for a self-hosted cluster (on-demand, reserved, other)."""

    __tablename__ = "cluster_charges"

    charge_id: str = Field(primary_key=True, description="Unique id of the charge.")
    cluster_id: str = Field(nullable=False, description="Cluster the charge pays for.")
    charge_start: datetime = Field(sa_type=DateTime, nullable=False, description="Start of the charged period, UTC.")
    charge_end: datetime = Field(
        sa_type=DateTime, nullable=False, description="End of the charged period, UTC (exclusive)."
    )
    kind: str = Field(nullable=False, description="on_demand, reserved or other.")
    quantity: Decimal | None = Field(
        default=None, sa_type=Numeric(38, 6), description="Charged quantity in unit, if given."
    )
    unit: str | None = Field(default=None, description="node_hour or gpu_hour, if given.")
    unit_price: Decimal | None = Field(default=None, sa_type=Money, description="Price per unit, if given.")
    amount: Decimal = Field(sa_type=Money, nullable=False, description="Charged amount in currency.")
    currency: str = Field(nullable=False, description="ISO currency code (USD).")


class HardwareAsset(Provenance, table=True):
    """One owned asset, amortised straight-line."""

    __tablename__ = "hardware"

    asset_id: str = Field(primary_key=True, description="Unique id of the asset.")
    cluster_id: str = Field(nullable=False, description="Cluster the asset belongs to.")
    purchase_price: Decimal = Field(sa_type=Money, nullable=False, description="Purchase price in currency.")
    in_service_date: date = Field(sa_type=Date, nullable=False, description="First day in service.")
    life_months: int = Field(
        sa_type=Integer, nullable=False, description="Useful life in months (amortisation period)."
    )
    salvage_value: Decimal | None = Field(
        default=None, sa_type=Money, description="Value at end of life; amortised = purchase_price - salvage_value."
    )
    retired_date: date | None = Field(default=None, sa_type=Date, description="First day out of service, if retired.")
    nodes: int | None = Field(
        default=None, sa_type=Integer, description="Nodes (servers) the asset is; provisioned node-hours count each."
    )
    currency: str = Field(nullable=False, description="ISO currency code (USD).")


class OpexLine(Provenance, table=True):
    """One operating cost for a month (the costs published analyses leave out)."""

    __tablename__ = "opex"

    month: date = Field(
        primary_key=True, sa_type=Date, description="Month the cost belongs to (first day of the month)."
    )
    cluster_id: str = Field(
        primary_key=True, default="", description="Cluster the cost belongs to; '' = shared by all clusters."
    )
    category: str = Field(
        primary_key=True,
        description="platform_engineering, inference_operations, networking, storage, observability, security, "
        "on_call or other.",
    )
    amount: Decimal = Field(sa_type=Money, nullable=False, description="Amount in currency.")
    currency: str = Field(nullable=False, description="ISO currency code (USD).")
    note: str | None = Field(default=None, description="Free-text note.")


@dataclass(frozen=True)
class ReadOptions:
    """How a kind's files differ from the canonical layout."""

    rename: dict[str, str] = dc_field(default_factory=dict)
    """File column name, lower-cased -> field name."""
    null_tokens: tuple[str, ...] = ()
    """Text values that mean NULL (besides the empty string)."""
    lower: tuple[str, ...] = ()
    """Columns whose text is lower-cased (FOCUS writes 'Usage-Based' and 'Usage-based')."""
    defaults: dict[str, str] = dc_field(default_factory=dict)
    """Value of a column the file does not have."""


READ_OPTIONS: dict[str, ReadOptions] = {
    # ``check`` is an SQL keyword: the table's column is drill
    "gate-checks": ReadOptions(rename={"check": "drill"}),
    # a long metrics file's time column is called timestamp by every exporter
    "engine-metrics": ReadOptions(rename={"timestamp": "sampled_at"}),
    "gpu-metrics": ReadOptions(rename={"timestamp": "sampled_at"}),
    "focus": ReadOptions(
        rename=FOCUS_COLUMNS,
        null_tokens=("NULL", "null"),
        lower=("charge_category", "charge_class", "charge_frequency", "pricing_category"),
        defaults={"currency": "USD"},
    ),
}


class LoadTestPoint(Provenance, table=True):
    """One point of a capacity sweep: the cluster under load at one concurrency (seed 000, step 1).

    A sweep measures aggregate throughput (all tokens the cluster processed, input and output) and
    latency at several concurrencies; the capacity at the SLO is the highest throughput among the
    points whose p95 latency is within the self-hosted SLO.
    """

    __tablename__ = "load_tests"

    sweep_id: str = Field(primary_key=True, description="The sweep (one load-test session) this point belongs to.")
    cluster_id: str = Field(
        primary_key=True, description="The cluster under test (matches cluster charges and hardware)."
    )
    concurrency: int = Field(
        primary_key=True, sa_type=Integer, description="Concurrent requests held during the point (>= 1)."
    )
    measured_at: datetime = Field(
        sa_type=DateTime,
        nullable=False,
        description="When the point was measured, UTC. A month uses the latest sweep measured before it ends.",
    )
    tokens_per_second: Decimal = Field(
        sa_type=Numeric(18, 3),
        nullable=False,
        description="Aggregate tokens per second the cluster processed (input + output, all requests).",
    )
    p95_latency_ms: Decimal = Field(
        sa_type=Numeric(18, 3),
        nullable=False,
        description="95th percentile end-to-end request latency at this concurrency, ms.",
    )
    p50_latency_ms: Decimal | None = Field(
        default=None, sa_type=Numeric(18, 3), description="Median end-to-end request latency, ms, if measured."
    )
    output_tokens_per_second: Decimal | None = Field(
        default=None, sa_type=Numeric(18, 3), description="Output tokens per second, if measured."
    )
    nodes: int | None = Field(
        default=None,
        sa_type=Integer,
        description="Nodes the sweep ran on (default 1): its capacity per node is its capacity / nodes.",
    )


class EvalTask(Provenance, table=True):
    """One task of an evaluation case: the deployment gate runs each case on both routes with the same prompt and
    acceptance criteria, so a case has a task on each route (the route comes from the task's requests)."""

    __tablename__ = "eval_tasks"

    eval_set: str = Field(primary_key=True, description="The evaluation set (e.g. 'k3-gate-2026-10').")
    task_id: str = Field(primary_key=True, description="A task of the request log run for the case.")
    case_id: str = Field(nullable=False, description="The case: the same prompt and criteria on both routes.")
    category: str | None = Field(
        default=None, description="The kind of work the case stands for (e.g. 'coding', 'extraction'); '' = none."
    )


class GateCheck(Provenance, table=True):
    """One run of a failure drill on a cluster (seed 001's deployment gate). The file's column is ``check``."""

    __tablename__ = "gate_checks"

    eval_set: str = Field(primary_key=True, description="The evaluation set the drill belongs to.")
    drill: str = Field(
        primary_key=True,
        description="node_loss, rollback, queue_growth, long_context_burst or malformed_tool_call (the file's "
        "column check).",
    )
    cluster_id: str = Field(primary_key=True, description="The cluster the drill ran on.")
    run_at: datetime = Field(
        primary_key=True, sa_type=DateTime, description="When the drill ran, UTC; the latest run of a drill counts."
    )
    passed: bool = Field(sa_type=Boolean, nullable=False, description="Whether the cluster came through the drill.")
    recovery_minutes: Decimal | None = Field(
        default=None,
        sa_type=Numeric(18, 4),
        description="Minutes from the fault until the cluster served normally again, if measured (checked against "
        "[gate] max_recovery_minutes when set).",
    )
    note: str | None = Field(default=None, description="Free-text note (what happened).")


USAGE_TOKEN_TYPES: tuple[str, ...] = (
    "input_cache_hit",
    "input_cache_miss",
    "input_cache_write_5m",
    "input_cache_write_1h",
    "output",
    "requests",
)


class UsageLine(Provenance, table=True):
    """Tokens (or requests) a provider reports for one time bucket: its usage export, to check the logs against."""

    __tablename__ = "usage"

    provider: str = Field(primary_key=True, description="API provider whose usage export this is.")
    bucket_start: datetime = Field(primary_key=True, sa_type=DateTime, description="Start of the bucket, UTC.")
    line_id: str = Field(primary_key=True, description="The line within the bucket (result and token type).")
    bucket_end: datetime = Field(sa_type=DateTime, nullable=False, description="End of the bucket (exclusive), UTC.")
    model: str | None = Field(default=None, description="Model, when the export is grouped by model.")
    token_type: str = Field(
        nullable=False,
        description="input_cache_hit, input_cache_miss, input_cache_write_5m, input_cache_write_1h, output (incl. "
        "reasoning) or requests.",
    )
    quantity: int = Field(sa_type=BigInteger, nullable=False, description="Tokens (or requests) reported.")


_date = date  # the fx table has a column named ``date``


class FxRate(Provenance, table=True):
    """An exchange rate: USD per unit of a currency, in force from its date until the currency's next rate."""

    __tablename__ = "fx"

    currency: str = Field(primary_key=True, description="ISO currency code, e.g. CNY or EUR.")
    date: _date = Field(primary_key=True, sa_type=Date, description="The date the rate is for (in force from then on).")
    usd_per_unit: Decimal = Field(
        sa_type=Money, nullable=False, description="US dollars per one unit of the currency (e.g. 0.138912 for CNY)."
    )


#: For each kind with money in a ``currency``: the column whose date picks the exchange rate (the latest ``fx``
#: date on or before it); a row with no rate by then is quarantined. Prices are not here: they convert per request,
#: at the rate of the request's date, and a request with no rate by its date is unpriced (and named as such).
FX_DATE_COLUMNS: dict[str, str] = {
    "invoices": "period_start",
    "cluster-charges": "charge_start",
    "hardware": "in_service_date",
    "opex": "month",
    "focus": "charge_period_start",
}

KINDS: dict[str, type[SQLModel]] = {
    "requests": Request,
    "outcomes": Outcome,
    "invoices": InvoiceLine,
    "prices": Price,
    "cluster-charges": ClusterCharge,
    "hardware": HardwareAsset,
    "opex": OpexLine,
    "focus": FocusCharge,
    "load-tests": LoadTestPoint,
    "fx": FxRate,
    "usage": UsageLine,
    "eval-tasks": EvalTask,
    "gate-checks": GateCheck,
    "engine-metrics": EngineSample,
    "gpu-metrics": GpuSample,
}
