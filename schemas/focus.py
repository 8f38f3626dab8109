"""The FOCUS billing export as the ledger keeps it: the columns it reads from a FOCUS 1.0-1.2 file and their
names in the ledger (``focus_charges``)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from sqlalchemy import BigInteger, DateTime
from sqlmodel import Field, SQLModel

from schemas.money import Money


class FocusCharge(SQLModel, table=True):
    """One row of a FOCUS 1.0-1.2 cloud billing export (a subset of its columns, snake_cased).

    FOCUS rows have no natural key, so a row is identified by where it came from
    (file, line). A FOCUS file is a snapshot of its billing period: the latest file
    loaded for a (billing account, billing period) replaces earlier ones.
    """

    __tablename__ = "focus_charges"

    billing_account_id: str | None = Field(default=None, description="FOCUS BillingAccountId.")
    sub_account_id: str | None = Field(default=None, description="FOCUS SubAccountId.")
    provider_name: str | None = Field(default=None, description="FOCUS ProviderName (AWS, Microsoft, ...).")
    billing_period_start: datetime | None = Field(
        default=None, sa_type=DateTime, description="FOCUS BillingPeriodStart, UTC."
    )
    billing_period_end: datetime | None = Field(
        default=None, sa_type=DateTime, description="FOCUS BillingPeriodEnd, UTC (exclusive)."
    )
    charge_period_start: datetime = Field(sa_type=DateTime, nullable=False, description="FOCUS ChargePeriodStart, UTC.")
    charge_period_end: datetime = Field(
        sa_type=DateTime, nullable=False, description="FOCUS ChargePeriodEnd, UTC (exclusive)."
    )
    charge_category: str = Field(
        nullable=False, description="FOCUS ChargeCategory, lower-cased: usage, purchase, tax, credit, adjustment."
    )
    charge_class: str | None = Field(
        default=None, description="FOCUS ChargeClass, lower-cased: 'correction' for corrections of earlier periods."
    )
    charge_frequency: str | None = Field(
        default=None, description="FOCUS ChargeFrequency, lower-cased (one-time, recurring, usage-based)."
    )
    pricing_category: str | None = Field(
        default=None,
        description="FOCUS PricingCategory, lower-cased (standard, dynamic, committed, other): 'committed' rows are a "
        "committed self-hosted cost, the others avoidable.",
    )
    charge_description: str | None = Field(default=None, description="FOCUS ChargeDescription.")
    resource_id: str | None = Field(
        default=None, description="FOCUS ResourceId (used to allocate the row to a cluster)."
    )
    resource_name: str | None = Field(default=None, description="FOCUS ResourceName.")
    service_name: str | None = Field(default=None, description="FOCUS ServiceName.")
    service_category: str | None = Field(default=None, description="FOCUS ServiceCategory.")
    sku_id: str | None = Field(default=None, description="FOCUS SkuId.")
    billed_cost: Decimal = Field(
        sa_type=Money, nullable=False, description="FOCUS BilledCost: the cash cost, what reconciles to invoices."
    )
    effective_cost: Decimal | None = Field(
        default=None,
        sa_type=Money,
        description="FOCUS EffectiveCost: amortised cost after commitments (kept for the amortised view).",
    )
    list_cost: Decimal | None = Field(default=None, sa_type=Money, description="FOCUS ListCost.")
    consumed_quantity: Decimal | None = Field(default=None, sa_type=Money, description="FOCUS ConsumedQuantity.")
    consumed_unit: str | None = Field(default=None, description="FOCUS ConsumedUnit.")
    pricing_quantity: Decimal | None = Field(default=None, sa_type=Money, description="FOCUS PricingQuantity.")
    pricing_unit: str | None = Field(default=None, description="FOCUS PricingUnit.")
    currency: str = Field(
        nullable=False, default="USD", description="FOCUS BillingCurrency (USD when the file has no such column)."
    )
    tags: str | None = Field(
        default=None, description="FOCUS Tags, as JSON text (used to allocate the row to a cluster)."
    )
    source_file_hash: str = Field(primary_key=True, description="SHA-256 of the landing file this row was loaded from.")
    source_line: int = Field(primary_key=True, sa_type=BigInteger, description="Line of the row in its landing file.")


#: FOCUS column name (any case) -> FocusCharge field
FOCUS_COLUMNS: dict[str, str] = {
    "billingaccountid": "billing_account_id",
    "subaccountid": "sub_account_id",
    "providername": "provider_name",
    "billingperiodstart": "billing_period_start",
    "billingperiodend": "billing_period_end",
    "chargeperiodstart": "charge_period_start",
    "chargeperiodend": "charge_period_end",
    "chargecategory": "charge_category",
    "chargeclass": "charge_class",
    "chargefrequency": "charge_frequency",
    "pricingcategory": "pricing_category",
    "chargedescription": "charge_description",
    "resourceid": "resource_id",
    "resourcename": "resource_name",
    "servicename": "service_name",
    "servicecategory": "service_category",
    "skuid": "sku_id",
    "billedcost": "billed_cost",
    "effectivecost": "effective_cost",
    "listcost": "list_cost",
    "consumedquantity": "consumed_quantity",
    "consumedunit": "consumed_unit",
    "pricingquantity": "pricing_quantity",
    "pricingunit": "pricing_unit",
    "billingcurrency": "currency",
    "tags": "tags",
}
FOCUS_CHARGE_CATEGORIES: tuple[str, ...] = ("usage", "purchase", "tax", "credit", "adjustment")
