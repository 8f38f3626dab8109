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
  ``DECIMAL(18,6)`` for prices per million tokens (so a per-token price has 12
  decimal places and ``tokens x price / 1e6`` is exact at scale 12).
* Timestamps are UTC ``TIMESTAMP`` (ingest converts any offset to UTC).
* Every raw row carries ``source_file_hash`` and ``source_line``: where it came from.

``table=True`` models do not validate on ``__init__``; use ``model_validate``.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Literal

from sqlalchemy import BigInteger, Boolean, Date, DateTime, Integer, Numeric, String
from sqlmodel import Field, SQLModel

Money = Numeric(38, 12)
PricePerMillion = Numeric(18, 6)

Route = Literal["api", "self_hosted"]
LineType = Literal["input_cache_hit", "input_cache_miss", "output", "credit", "tax", "other"]
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
LINE_TYPES: tuple[str, ...] = ("input_cache_hit", "input_cache_miss", "output", "credit", "tax", "other")
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
    "other",
)
#: Currencies the ledger accepts. Everything is USD until an exchange-rate source lands.
CURRENCIES: tuple[str, ...] = ("USD",)


class Provenance(SQLModel):
    """Where a loaded row came from (every raw table has these two columns)."""

    source_file_hash: str = Field(
        sa_type=String,
        nullable=False,
        description="SHA-256 of the landing file this row was loaded from (meta.loaded_files.file_hash).",
    )
    source_line: int = Field(
        sa_type=BigInteger,
        nullable=False,
        description="Line of the row in its landing file (CSV: 2 is the first data row; JSONL: 1-based line; Parquet: 1-based row).",
    )


class Request(Provenance, table=True):
    """One request to a model = one attempt of a task."""

    __tablename__ = "requests"

    request_id: str = Field(primary_key=True, description="Unique id of the request (natural key).")
    task_id: str = Field(nullable=False, description="The unit of business work this request is an attempt of.")
    attempt: int | None = Field(default=None, sa_type=Integer, description="Attempt number within the task (1 = first try), if logged.")
    started_at: datetime = Field(sa_type=DateTime, nullable=False, description="When the request started, UTC.")
    route: str = Field(nullable=False, description="'api' (hosted, per-token) or 'self_hosted' (own cluster, per-hour).")
    provider: str | None = Field(default=None, description="API provider (API rows), e.g. 'moonshot'. Matches prices.provider.")
    cluster_id: str | None = Field(default=None, description="Cluster that served the request (self-hosted rows).")
    model: str = Field(nullable=False, description="Model name as priced in the price catalog.")
    cache_hit_input_tokens: int = Field(sa_type=BigInteger, nullable=False, description="Prompt tokens served from a prefix cache.")
    cache_miss_input_tokens: int = Field(sa_type=BigInteger, nullable=False, description="Prompt tokens not served from cache.")
    output_tokens: int = Field(sa_type=BigInteger, nullable=False, description="Visible output tokens, excluding reasoning.")
    reasoning_tokens: int = Field(sa_type=BigInteger, nullable=False, description="Hidden reasoning tokens, billed at the output rate.")
    latency_ms: int = Field(sa_type=BigInteger, nullable=False, description="Wall time of the request in milliseconds.")
    status: str = Field(nullable=False, description="'ok', 'error', 'timeout', ...: how the request ended.")
    accepted: bool | None = Field(default=None, sa_type=Boolean, description="The task's outcome as judged on this attempt, if the log carries it.")
    team: str | None = Field(default=None, description="Team that sent the request, if logged.")


class Outcome(Provenance, table=True):
    """One decision about a task (evaluation harness or human review)."""

    __tablename__ = "outcomes"

    task_id: str = Field(primary_key=True, description="The task decided on.")
    decided_at: datetime = Field(primary_key=True, sa_type=DateTime, description="When the decision was made, UTC. The latest decision is the task's final outcome.")
    accepted: bool = Field(sa_type=Boolean, nullable=False, description="True if the task's work was accepted.")
    request_id: str | None = Field(default=None, description="The accepted attempt; default: the task's last 'ok' attempt.")
    review_minutes: Decimal | None = Field(default=None, sa_type=Numeric(18, 4), description="Human review time spent on this decision, minutes.")
    reason: str | None = Field(default=None, description="Why the task was accepted or rejected.")


class InvoiceLine(Provenance, table=True):
    """One line of a provider's invoice."""

    __tablename__ = "invoices"

    provider: str = Field(primary_key=True, description="API provider that issued the invoice.")
    invoice_id: str = Field(primary_key=True, description="Provider's invoice number.")
    line_id: str = Field(primary_key=True, description="Line within the invoice.")
    period_start: datetime = Field(sa_type=DateTime, nullable=False, description="Start of the billed period, UTC (inclusive).")
    period_end: datetime = Field(sa_type=DateTime, nullable=False, description="End of the billed period, UTC (exclusive).")
    line_type: str = Field(nullable=False, description="input_cache_hit, input_cache_miss, output, credit, tax or other.")
    model: str | None = Field(default=None, description="Model the line bills, if any.")
    quantity: Decimal | None = Field(default=None, sa_type=Numeric(38, 6), description="Billed quantity (tokens), if given.")
    unit_price_per_million: Decimal | None = Field(default=None, sa_type=PricePerMillion, description="Price per million units, if given.")
    amount: Decimal = Field(sa_type=Money, nullable=False, description="Line amount in currency; credits are negative.")
    currency: str = Field(nullable=False, description="ISO currency code (USD).")


class Price(Provenance, table=True):
    """A published per-token price, valid from effective_from (inclusive) to effective_to (exclusive)."""

    __tablename__ = "prices"

    provider: str = Field(primary_key=True, description="API provider.")
    model: str = Field(primary_key=True, description="Model name.")
    effective_from: datetime = Field(primary_key=True, sa_type=DateTime, description="First instant the price applies, UTC.")
    effective_to: datetime | None = Field(default=None, sa_type=DateTime, description="First instant it no longer applies (exclusive); empty = until the next price.")
    cache_hit_input_per_million: Decimal = Field(sa_type=PricePerMillion, nullable=False, description="USD per 1M cache-hit input tokens.")
    cache_miss_input_per_million: Decimal = Field(sa_type=PricePerMillion, nullable=False, description="USD per 1M cache-miss input tokens.")
    output_per_million: Decimal = Field(sa_type=PricePerMillion, nullable=False, description="USD per 1M output (and reasoning) tokens.")
    currency: str = Field(nullable=False, description="ISO currency code (USD).")


class ClusterCharge(Provenance, table=True):
    """One charge for a self-hosted cluster (on-demand, reserved, other)."""

    __tablename__ = "cluster_charges"

    charge_id: str = Field(primary_key=True, description="Unique id of the charge.")
    cluster_id: str = Field(nullable=False, description="Cluster the charge pays for.")
    charge_start: datetime = Field(sa_type=DateTime, nullable=False, description="Start of the charged period, UTC.")
    charge_end: datetime = Field(sa_type=DateTime, nullable=False, description="End of the charged period, UTC (exclusive).")
    kind: str = Field(nullable=False, description="on_demand, reserved or other.")
    quantity: Decimal | None = Field(default=None, sa_type=Numeric(38, 6), description="Charged quantity in unit, if given.")
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
    life_months: int = Field(sa_type=Integer, nullable=False, description="Useful life in months (amortisation period).")
    salvage_value: Decimal | None = Field(default=None, sa_type=Money, description="Value at end of life; amortised = purchase_price - salvage_value.")
    retired_date: date | None = Field(default=None, sa_type=Date, description="First day out of service, if retired.")
    currency: str = Field(nullable=False, description="ISO currency code (USD).")


class OpexLine(Provenance, table=True):
    """One operating cost for a month (the costs published analyses leave out)."""

    __tablename__ = "opex"

    month: date = Field(primary_key=True, sa_type=Date, description="Month the cost belongs to (first day of the month).")
    cluster_id: str = Field(primary_key=True, default="", description="Cluster the cost belongs to; '' = shared by all clusters.")
    category: str = Field(primary_key=True, description="platform_engineering, inference_operations, networking, storage, observability, security, on_call or other.")
    amount: Decimal = Field(sa_type=Money, nullable=False, description="Amount in currency.")
    currency: str = Field(nullable=False, description="ISO currency code (USD).")
    note: str | None = Field(default=None, description="Free-text note.")


#: ingest kind (CLI name) -> table class
KINDS: dict[str, type[SQLModel]] = {
    "requests": Request,
    "outcomes": Outcome,
    "invoices": InvoiceLine,
    "prices": Price,
    "cluster-charges": ClusterCharge,
    "hardware": HardwareAsset,
    "opex": OpexLine,
}
