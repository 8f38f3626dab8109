"""The report's typed records: one class a mart the report reads, its fields the mart's declared columns (the
``-- column NAME TYPE`` lines of its model file), each typed from its declared SQL type. The build holds a mart to its
declaration, so a record always matches the rows it is made from; a column added to a mart is a field here with no
edit of this module."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from dataclasses import asdict, dataclass, fields
from decimal import Decimal
from typing import Any, ClassVar, Self

from pipeline.base.models import SQL_DIR, parse_model


@dataclass(frozen=True, kw_only=True)
class Record:
    """A row of the mart ``MART``, one field per declared column."""

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


_SCALARS: dict[str, Any] = {
    "BOOLEAN": bool,
    "DATE": dt.date,
    "TIMESTAMP": dt.datetime,
    "VARCHAR": str,
    "DOUBLE": float,
    "INTEGER": int,
    "BIGINT": int,
    # the published file is written through Arrow, which carries a 128-bit integer as DECIMAL(38,0)
    "HUGEINT": Decimal,
}


def python_type(sql_type: str) -> Any:
    """The Python type the published file hands a value of ``sql_type`` as: DECIMAL a Decimal, a list ``X[]`` a
    list, a STRUCT a dict; an unknown type is an error naming it (a record field is never untyped)."""
    if sql_type.endswith("[]"):
        return list[python_type(sql_type[:-2])]  # type: ignore[misc]
    if sql_type.startswith("STRUCT("):
        return dict[str, Any]
    if re.fullmatch(r"DECIMAL\(\d+,\d+\)", sql_type):
        return Decimal
    if sql_type not in _SCALARS:
        raise TypeError(f"no Python type for the SQL type {sql_type}")
    return _SCALARS[sql_type]


def record(name: str, mart: str, doc: str) -> type[Record]:
    """The record class of ``mart`` (``marts.NAME``): a frozen dataclass with a field per declared column, in the
    mart's order, each ``TYPE | None``."""
    model = parse_model("marts", SQL_DIR / "marts" / f"{mart.split('.', 1)[1]}.sql")
    columns = [(c.name, python_type(c.type) | None) for c in model.columns]
    cls = dataclasses.make_dataclass(
        name, columns, bases=(Record,), frozen=True, kw_only=True, namespace={"MART": mart, "__doc__": doc}
    )
    cls.__module__ = __name__
    return cls


BreakEvenMonth = record(
    "BreakEvenMonth",
    "marts.monthly_break_even",
    "One month of marts.monthly_break_even: the verdict, break-even and the figures behind them.",
)

RouteMonth = record(
    "RouteMonth",
    "marts.monthly_route_cost",
    "One route's month of marts.monthly_route_cost: what it served and what it cost, as billed.",
)

CurvePoint = record(
    "CurvePoint",
    "marts.monthly_break_even_curve",
    "One utilisation of marts.monthly_break_even_curve: what an accepted task would cost on the cluster there.",
)

WorkloadMove = record(
    "WorkloadMove",
    "marts.monthly_workload_moves",
    "One team's kind of API work in marts.monthly_workload_moves: its saving on the cluster and whether it fits.",
)

ForecastMonth = record(
    "ForecastMonth",
    "marts.monthly_forecast",
    "The month's row of marts.monthly_forecast: when the cluster's volume reaches break-even if its trend holds.",
)

PlanRow = record(
    "PlanRow",
    "marts.monthly_hybrid_plan",
    "One row of marts.monthly_hybrid_plan: the month at one cluster size (scenario ``plan``), "
    "or the month as it ran (scenario ``today``).",
)

GateVerdict = record(
    "GateVerdict",
    "marts.gate_verdict",
    "One evaluation set's row of marts.gate_verdict: passed, failed or incomplete, and the criteria behind it.",
)

GateCriterion = record(
    "GateCriterion",
    "marts.gate_criteria",
    "One criterion of an evaluation set's gate in marts.gate_criteria: its value against its threshold.",
)

ProviderReconciliation = record(
    "ProviderReconciliation",
    "marts.monthly_reconciliation",
    "One provider's month in marts.monthly_reconciliation: its invoices against the request log's metered cost.",
)

EngineReconciliation = record(
    "EngineReconciliation",
    "marts.monthly_engine_reconciliation",
    "One cluster's month in marts.monthly_engine_reconciliation: its logged tokens against its engines' counts.",
)

ClusterTelemetry = record(
    "ClusterTelemetry",
    "marts.monthly_cluster_telemetry",
    "One cluster's month in marts.monthly_cluster_telemetry: what its GPUs' and engines' own meters say.",
)

PhaseCost = record(
    "PhaseCost",
    "marts.monthly_phase_cost",
    "One phase of one cluster's month in marts.monthly_phase_cost: its part of the fixed cost and per million.",
)

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
