"""The data-quality suite of every source, declared once: Great Expectations expectations.

Each ``Check`` is one GX expectation (type and arguments) plus the message a person
reads in the quarantine table. The suite is used two ways, which must agree:

* ``gx_suite(kind)`` builds the GX Core 1.x ``ExpectationSuite``; ingest validates
  each file's typed rows with it (a pandas batch: GX cannot validate DuckDB through
  duckdb_engine) before the file is committed;
* ``Check.sql_bad_when()`` compiles the same expectation to a DuckDB predicate, so
  every row of a file of any size is judged in one vectorised pass.

Ingest compares the two on the rows GX validated (all of them up to
``gx_max_rows``, a deterministic sample beyond): any disagreement, and any GX
``exception_info``, is a pipeline error, never "bad data".

Column-type checks (a value that does not parse as its column's type, a missing
required value) come from ``schemas.tables`` and run before these.
"""

from __future__ import annotations

import sys
import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from typing import Any

from schemas.ddl import sql_string
from schemas.focus import FOCUS_CHARGE_CATEGORIES
from schemas.meters import ENGINE_METRICS, GPU_METRICS, GPU_PERCENT_METRICS, GPU_SHARE_METRICS
from schemas.tables import (
    KINDS,
    CHARGE_KINDS,
    CHARGE_UNITS,
    LINE_TYPES,
    OPEX_CATEGORIES,
    ROUTES,
    SERVICE_TIERS,
    USAGE_TOKEN_TYPES,
    GATE_DRILLS,
)

#: A ``max_value`` meaning "the end of tomorrow, UTC": a timestamp later than that is in the future, bad input.
#: (A whole-day bound, so that SQL and GX, evaluated moments apart, use the very same instant.)
FUTURE = "__end_of_tomorrow__"

SUPPORTED = {
    "ExpectColumnValuesToBeInSet",
    "ExpectColumnValuesToBeBetween",
    "ExpectColumnValuesToNotBeNull",
    "ExpectColumnPairValuesAToBeGreaterThanB",
}


@dataclass(kw_only=True, frozen=True)
class Check:
    """One expectation on a canonical table, with the message quarantined rows carry."""

    name: str
    expectation: str
    kwargs: dict[str, Any]
    message: str
    when: tuple[str, str] | None = None
    """Applies only to rows where column == value (GX ``row_condition``)."""
    columns: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.expectation not in SUPPORTED:
            raise ValueError(f"{self.name}: expectation {self.expectation} has no SQL compilation")
        cols = (
            (self.kwargs["column_A"], self.kwargs["column_B"])
            if "column_A" in self.kwargs
            else (self.kwargs["column"],)
        )
        object.__setattr__(self, "columns", cols)

    @property
    def column(self) -> str:
        return self.columns[0]

    def sql_bad_when(self) -> str:
        """A DuckDB predicate over the typed columns, TRUE for a row that fails the expectation."""
        k = self.kwargs
        if self.expectation == "ExpectColumnValuesToBeInSet":
            values = ", ".join(sql_string(str(v)) for v in k["value_set"])
            bad = f'"{k["column"]}" NOT IN ({values})'
        elif self.expectation == "ExpectColumnValuesToBeBetween":
            parts = []
            if k.get("min_value") is not None:
                op = "<=" if k.get("strict_min") else "<"
                parts.append(f'"{k["column"]}" {op} {_sql_value(k["min_value"])}')
            if k.get("max_value") is not None:
                parts.append(f'"{k["column"]}" > {_sql_value(k["max_value"])}')
            bad = " OR ".join(parts)
        elif self.expectation == "ExpectColumnValuesToNotBeNull":
            bad = f'"{k["column"]}" IS NULL'
        else:
            op = "<" if k.get("or_equal") else "<="
            bad = f'"{k["column_A"]}" {op} "{k["column_B"]}"'
        if self.when:
            col, value = self.when
            bad = f"\"{col}\" = '{value}' AND ({bad})"
        return f"coalesce(({bad}), false)"

    def gx_expectation(self, end_of_tomorrow: Any) -> Any:
        gxe = import_gx().expectations

        kwargs = {k: (end_of_tomorrow if v == FUTURE else v) for k, v in self.kwargs.items()}
        if self.expectation == "ExpectColumnPairValuesAToBeGreaterThanB":
            kwargs["ignore_row_if"] = "either_value_is_missing"
        if self.when:
            col, value = self.when
            kwargs["row_condition"] = f'{col}=="{value}"'
            kwargs["condition_parser"] = "pandas"
        kwargs["meta"] = {"check": self.name}
        return getattr(gxe, self.expectation)(**kwargs)


def _sql_value(v: Any) -> str:
    if v == FUTURE:
        return "(CAST(current_date AS TIMESTAMP) + INTERVAL 2 DAY)"
    if isinstance(v, dt.datetime):
        return f"TIMESTAMP '{v.isoformat(sep=' ')}'"
    if isinstance(v, dt.date):
        return f"DATE '{v.isoformat()}'"
    return str(v)


def _non_negative(*cols: str) -> list[Check]:
    return [
        Check(
            name=f"{c}_non_negative",
            expectation="ExpectColumnValuesToBeBetween",
            kwargs={"column": c, "min_value": 0},
            message=f"{c} is negative",
        )
        for c in cols
    ]


def _at_least_one(column: str) -> Check:
    return Check(
        name=f"{column}_positive",
        expectation="ExpectColumnValuesToBeBetween",
        kwargs={"column": column, "min_value": 1},
        message=f"{column} is less than 1",
    )


def _in_set(name: str, column: str, values: tuple[str, ...]) -> Check:
    return Check(
        name=name,
        expectation="ExpectColumnValuesToBeInSet",
        kwargs={"column": column, "value_set": list(values)},
        message=f"{column} is not one of {', '.join(values)}",
    )


def _not_future(column: str) -> Check:
    return Check(
        name=f"{column}_not_in_future",
        expectation="ExpectColumnValuesToBeBetween",
        kwargs={"column": column, "max_value": FUTURE},
        message=f"{column} is in the future",
    )


def _after(name: str, a: str, b: str, or_equal: bool, message: str) -> Check:
    return Check(
        name=name,
        expectation="ExpectColumnPairValuesAToBeGreaterThanB",
        kwargs={"column_A": a, "column_B": b, "or_equal": or_equal},
        message=message,
    )


SUITES: dict[str, list[Check]] = {
    "requests": [
        _in_set("route_known", "route", ROUTES),
        _in_set("service_tier_known", "service_tier", SERVICE_TIERS),
        *_non_negative(
            "cache_hit_input_tokens",
            "cache_miss_input_tokens",
            "cache_write_5m_input_tokens",
            "cache_write_1h_input_tokens",
            "output_tokens",
            "reasoning_tokens",
            "web_search_calls",
            "latency_ms",
        ),
        Check(
            name="attempt_positive",
            expectation="ExpectColumnValuesToBeBetween",
            kwargs={"column": "attempt", "min_value": 1},
            message="attempt is less than 1",
        ),
        Check(
            name="api_has_provider",
            expectation="ExpectColumnValuesToNotBeNull",
            kwargs={"column": "provider"},
            message="an api request has no provider",
            when=("route", "api"),
        ),
        Check(
            name="self_hosted_has_cluster",
            expectation="ExpectColumnValuesToNotBeNull",
            kwargs={"column": "cluster_id"},
            message="a self_hosted request has no cluster_id",
            when=("route", "self_hosted"),
        ),
        Check(
            name="self_hosted_has_latency",
            expectation="ExpectColumnValuesToNotBeNull",
            kwargs={"column": "latency_ms"},
            message="a self_hosted request has no latency_ms (the cluster's busy time needs it)",
            when=("route", "self_hosted"),
        ),
        _not_future("started_at"),
    ],
    "outcomes": [
        *_non_negative("review_minutes"),
        _not_future("decided_at"),
    ],
    "invoices": [
        _in_set("line_type_known", "line_type", LINE_TYPES),
        _after("period_ordered", "period_end", "period_start", False, "period_end is not after period_start"),
        *_non_negative("quantity", "unit_price_per_million"),
    ],
    "prices": [
        _in_set("service_tier_known", "service_tier", SERVICE_TIERS),
        *_non_negative(
            "cache_hit_input_per_million",
            "cache_miss_input_per_million",
            "cache_write_5m_per_million",
            "cache_write_1h_per_million",
            "output_per_million",
            "web_search_per_call",
            "min_input_tokens",
        ),
        _after(
            "effective_ordered", "effective_to", "effective_from", False, "effective_to is not after effective_from"
        ),
    ],
    "cluster-charges": [
        _in_set("kind_known", "kind", CHARGE_KINDS),
        _in_set("unit_known", "unit", CHARGE_UNITS),
        _after("charge_ordered", "charge_end", "charge_start", False, "charge_end is not after charge_start"),
        *_non_negative("quantity", "unit_price"),
    ],
    "hardware": [
        *_non_negative("purchase_price", "salvage_value"),
        Check(
            name="life_positive",
            expectation="ExpectColumnValuesToBeBetween",
            kwargs={"column": "life_months", "min_value": 1},
            message="life_months is less than 1",
        ),
        _after("salvage_below_price", "purchase_price", "salvage_value", True, "salvage_value exceeds purchase_price"),
        _after(
            "retired_after_service", "retired_date", "in_service_date", True, "retired_date is before in_service_date"
        ),
        _at_least_one("nodes"),
    ],
    "opex": [
        _in_set("category_known", "category", OPEX_CATEGORIES),
    ],
    "usage": [
        _in_set("token_type_known", "token_type", USAGE_TOKEN_TYPES),
        *_non_negative("quantity"),
        _after("bucket_ordered", "bucket_end", "bucket_start", False, "bucket_end is not after bucket_start"),
    ],
    "fx": [
        Check(
            name="usd_per_unit_positive",
            expectation="ExpectColumnValuesToBeBetween",
            kwargs={"column": "usd_per_unit", "min_value": 0, "strict_min": True},
            message="usd_per_unit is not above 0",
        ),
    ],
    # an evaluation case's columns are names: the table's NOT NULL and key say all there is to check
    "eval-tasks": [],
    "gate-checks": [
        Check(
            name="drill_known",
            expectation="ExpectColumnValuesToBeInSet",
            kwargs={"column": "drill", "value_set": list(GATE_DRILLS)},
            message=f"check (the drill) is not one of {', '.join(GATE_DRILLS)}",
        ),
        *_non_negative("recovery_minutes"),
        _not_future("run_at"),
    ],
    "engine-metrics": [
        Check(
            name="metric_known",
            expectation="ExpectColumnValuesToBeInSet",
            kwargs={"column": "metric", "value_set": list(ENGINE_METRICS)},
            message=f"metric is not one the ledger reads ({', '.join(ENGINE_METRICS)})",
        ),
        *_non_negative("value"),
        _not_future("sampled_at"),
    ],
    "gpu-metrics": [
        Check(
            name="metric_known",
            expectation="ExpectColumnValuesToBeInSet",
            kwargs={"column": "metric", "value_set": list(GPU_METRICS)},
            message=f"metric is not one the ledger reads ({', '.join(GPU_METRICS)})",
        ),
        *_non_negative("value"),
        *(
            Check(
                name=f"{name}_{metric}",
                expectation="ExpectColumnValuesToBeBetween",
                kwargs={"column": "value", "max_value": top},
                message=f"value is above {top}: {metric} is a {what} of time, from 0 to {top}",
                when=("metric", metric),
            )
            for name, top, what, metrics in (
                ("share", 1, "share", GPU_SHARE_METRICS),
                ("percent", 100, "percentage", GPU_PERCENT_METRICS),
            )
            for metric in metrics
        ),
        _not_future("sampled_at"),
    ],
    "load-tests": [
        Check(
            name="concurrency_positive",
            expectation="ExpectColumnValuesToBeBetween",
            kwargs={"column": "concurrency", "min_value": 1},
            message="concurrency is less than 1",
        ),
        Check(
            name="tokens_per_second_positive",
            expectation="ExpectColumnValuesToBeBetween",
            kwargs={"column": "tokens_per_second", "min_value": 0, "strict_min": True},
            message="tokens_per_second is not above 0",
        ),
        *_non_negative("p50_latency_ms", "output_tokens_per_second"),
        _after("p95_not_below_p50", "p95_latency_ms", "p50_latency_ms", True, "p95_latency_ms is below p50_latency_ms"),
        _not_future("measured_at"),
        _at_least_one("nodes"),
    ],
    "focus": [
        _in_set("charge_category_known", "charge_category", FOCUS_CHARGE_CATEGORIES),
        _in_set("charge_class_known", "charge_class", ("correction",)),
        _after(
            "charge_period_ordered",
            "charge_period_end",
            "charge_period_start",
            True,
            "charge_period_end is before charge_period_start",
        ),
    ],
}

#: Columns parsed with a special format: (kind, column) -> format name understood by ingest.
SPECIAL_FORMATS: dict[tuple[str, str], str] = {("opex", "month"): "year_month"}

#: Kinds whose files are snapshots of a billing period: a newer file replaces the
#: older one's lines for the same (provider, month) instead of adding to them.
SNAPSHOT_KINDS: frozenset[str] = frozenset({"invoices", "focus", "usage"})

#: Kinds whose rows are restated by key: a later-loaded row with the same natural key replaces the
#: earlier one (not a conflict), and a file of the same name with new content is a correction, not a conflict.
RESTATING_KINDS: frozenset[str] = frozenset({"prices", "fx"})


@dataclass(frozen=True, kw_only=True)
class Bounds:
    """Plausibility bounds (settings ``[validation]``): a value beyond them is quarantined at ingest, so that the
    models' arithmetic on loaded values stays inside its types (docs/reliability.md lists each kind of figure, its
    type and its bound): a count x a price per million is at most 1e12 x 1e6 / 1e6 = 1e12 dollars a token class, an
    amount at most 1e12, a month's token sums are HUGEINT, and no interval runs past 2100."""

    max_count: int = 10**12
    """Tokens per request (each token column)."""
    max_other_count: int = 10**12
    """Every other count: web searches, a usage export's quantity (a provider's tokens in a bucket, so not held to the
    per-request bound)."""
    max_latency_ms: int = 7 * 24 * 3600 * 1000
    """A request's latency: 7 days (a load test's latencies too)."""
    earliest: dt.date = dt.date(2000, 1, 1)
    """No timestamp or date before this."""
    latest: dt.date = dt.date(2100, 1, 1)
    """No timestamp or date from this on (period ends, prices announced ahead); event times also not after tomorrow."""
    max_amount: Decimal = Decimal(10**12)
    """Money amounts and other decimals, either sign."""
    max_price: Decimal = Decimal(10**6)
    """A price per million tokens (or per web search call), either sign: a dollar a token."""
    max_usd_per_unit: Decimal = Decimal(10)
    """An exchange rate, dollars a unit of another currency (the dearest currency, the Kuwaiti dinar, is about 3.3):
    a price at its bound in the dearest currency, times a token count at its bound, stays inside a request's cost."""
    max_minutes: Decimal = Decimal(10**6)
    """Minutes of review or of recovery from a drill (about two years)."""
    max_rate: Decimal = Decimal(10**9)
    """A load test's tokens a second."""
    max_meter_value: Decimal = Decimal(10**15)
    """An engine's or a GPU's metric sample: a counter runs since its engine or driver started (a GPU's energy
    counter passes 1e12 mJ within weeks and reaches about 1.3e14 in four years at 1 kW); a power gauge x the
    longest interval stays below DECIMAL(38,12)'s 1e26."""


#: The kinds whose samples are bounded by ``Bounds.max_meter_value``
METER_KINDS = ("engine-metrics", "gpu-metrics")


def _bound(c_name: str, t: str, kind: str, b: Bounds) -> int | Decimal | None:
    """The bound of a numeric column (either sign for decimals), or None for a column the bounds do not cover."""
    if t == "BIGINT":
        if c_name == "latency_ms":
            return b.max_latency_ms
        return b.max_count if c_name.endswith("_tokens") else b.max_other_count
    if c_name == "usd_per_unit":
        return b.max_usd_per_unit
    if t.startswith("DECIMAL(38,"):  # money, quantities and meter samples
        return int(b.max_meter_value if kind in METER_KINDS else b.max_amount)
    if t.startswith("DECIMAL(24,"):  # prices per million tokens, per call
        return b.max_price
    if t.startswith("DECIMAL(18,"):
        if c_name.endswith("_minutes"):
            return b.max_minutes
        if c_name.endswith("_latency_ms"):
            return b.max_latency_ms
        return b.max_rate
    return None


def _bound_checks(kind: str, b: Bounds) -> list[Check]:
    from schemas.ddl import canonical_columns

    checks = []
    for c in canonical_columns(KINDS[kind]):
        t = c.duckdb_type
        if t in ("TIMESTAMP", "DATE"):
            # datetimes for DATE columns too: GX sees them as pandas Timestamps, DuckDB compares a DATE with a TIMESTAMP
            lo, hi = dt.datetime.combine(b.earliest, dt.time()), dt.datetime.combine(b.latest, dt.time())
            checks.append(
                Check(
                    name=f"{c.name}_plausible",
                    expectation="ExpectColumnValuesToBeBetween",
                    kwargs={"column": c.name, "min_value": lo, "max_value": hi},
                    message=f"{c.name} is not between {b.earliest} and {b.latest} (plausibility bound)",
                )
            )
            continue
        top = _bound(c.name, t, kind, b)
        if top is None:
            continue
        if t == "BIGINT":
            checks.append(
                Check(
                    name=f"{c.name}_plausible",
                    expectation="ExpectColumnValuesToBeBetween",
                    kwargs={"column": c.name, "max_value": top},
                    message=f"{c.name} is above {top:,} (plausibility bound)",
                )
            )
        else:
            checks.append(
                Check(
                    name=f"{c.name}_plausible",
                    expectation="ExpectColumnValuesToBeBetween",
                    kwargs={"column": c.name, "min_value": -top, "max_value": top},
                    message=f"{c.name} is beyond +/-{top:,} (plausibility bound)",
                )
            )
    return checks


@lru_cache(maxsize=8)
def suites(bounds: Bounds = Bounds()) -> dict[str, list[Check]]:
    """Every kind's checks: its rules above plus the plausibility bounds on every typed column."""
    return {kind: [*checks, *_bound_checks(kind, bounds)] for kind, checks in SUITES.items()}


def import_gx() -> Any:
    """great_expectations, imported as if pyspark were not installed. GX validates pandas batches only, but imports
    pyspark when it finds it (the Spark engine's extra): slower to start, and pyspark 4.1+ exits a process whose main
    module has no file (a spawned process, a pytest-xdist worker), taking it for a doctest run. Hidden during GX's
    import, pyspark stays usable for the Spark engine afterwards."""
    if "great_expectations" in sys.modules:
        return sys.modules["great_expectations"]
    hidden = {n: m for n, m in sys.modules.items() if n == "pyspark" or n.startswith("pyspark.")}
    for name in hidden:
        del sys.modules[name]
    sys.modules["pyspark"] = None  # type: ignore[assignment]  # `import pyspark` raises ImportError
    try:
        import great_expectations
        import great_expectations.data_context.types.base  # noqa: F401
        import great_expectations.expectations  # noqa: F401
    finally:
        del sys.modules["pyspark"]
        sys.modules.update(hidden)
    return great_expectations


def gx_suite(kind: str, end_of_tomorrow: Any, bounds: Bounds = Bounds()) -> Any:
    """The GX ExpectationSuite of a kind (not registered in any context)."""
    gx = import_gx()

    suite = gx.ExpectationSuite(name=f"costledger.{kind}")
    for check in suites(bounds)[kind]:
        suite.add_expectation(check.gx_expectation(end_of_tomorrow))
    return suite
