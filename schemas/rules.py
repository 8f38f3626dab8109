"""The rules a canonical row must keep, beyond its column types.

Each rule is a small, named record: the column it is about, a DuckDB predicate
that is TRUE for a *bad* row (evaluated over the typed columns of the incoming
file), and the message a person reads in the quarantine table. Ingest evaluates
all of them on every row and reports all failures, not just the first
(beancount's ``validation.py`` habit). The predicates are constants written here,
never built from user input.

Type rules (a value that does not parse as its column's type, a missing required
value) are derived from ``schemas.tables`` by ``pipeline.ingest`` and need no entry.
"""

from __future__ import annotations

from dataclasses import dataclass

from schemas.tables import CHARGE_KINDS, CHARGE_UNITS, CURRENCIES, LINE_TYPES, OPEX_CATEGORIES, ROUTES


@dataclass(frozen=True)
class Rule:
    """A row rule: ``bad_when`` is a SQL predicate over typed columns, TRUE for a bad row."""

    name: str
    column: str
    bad_when: str
    message: str


def _in(values: tuple[str, ...]) -> str:
    return "(" + ", ".join("'" + v + "'" for v in values) + ")"


def _non_negative(*cols: str) -> list[Rule]:
    return [Rule(f"{c}_non_negative", c, f"{c} < 0", f"{c} is negative") for c in cols]


def _currency() -> Rule:
    return Rule(
        "currency_known",
        "currency",
        f"upper(currency) NOT IN {_in(CURRENCIES)}",
        f"currency is not one of {', '.join(CURRENCIES)} (no exchange rate is loaded)",
    )


RULES: dict[str, list[Rule]] = {
    "requests": [
        Rule("route_known", "route", f"route NOT IN {_in(ROUTES)}", f"route is not one of {', '.join(ROUTES)}"),
        *_non_negative(
            "cache_hit_input_tokens", "cache_miss_input_tokens", "output_tokens", "reasoning_tokens", "latency_ms"
        ),
        Rule("attempt_positive", "attempt", "attempt < 1", "attempt is less than 1"),
        Rule("api_has_provider", "provider", "route = 'api' AND provider IS NULL", "an api request has no provider"),
        Rule(
            "self_hosted_has_cluster",
            "cluster_id",
            "route = 'self_hosted' AND cluster_id IS NULL",
            "a self_hosted request has no cluster_id",
        ),
        Rule(
            "started_not_in_future",
            "started_at",
            "started_at > current_localtimestamp() + INTERVAL 1 DAY",
            "started_at is in the future",
        ),
    ],
    "outcomes": [
        *_non_negative("review_minutes"),
        Rule(
            "decided_not_in_future",
            "decided_at",
            "decided_at > current_localtimestamp() + INTERVAL 1 DAY",
            "decided_at is in the future",
        ),
    ],
    "invoices": [
        Rule("line_type_known", "line_type", f"line_type NOT IN {_in(LINE_TYPES)}", f"line_type is not one of {', '.join(LINE_TYPES)}"),
        Rule("period_ordered", "period_end", "period_end <= period_start", "period_end is not after period_start"),
        *_non_negative("quantity", "unit_price_per_million"),
        _currency(),
    ],
    "prices": [
        *_non_negative("cache_hit_input_per_million", "cache_miss_input_per_million", "output_per_million"),
        Rule("effective_ordered", "effective_to", "effective_to <= effective_from", "effective_to is not after effective_from"),
        _currency(),
    ],
    "cluster-charges": [
        Rule("kind_known", "kind", f"kind NOT IN {_in(CHARGE_KINDS)}", f"kind is not one of {', '.join(CHARGE_KINDS)}"),
        Rule("unit_known", "unit", f"unit NOT IN {_in(CHARGE_UNITS)}", f"unit is not one of {', '.join(CHARGE_UNITS)}"),
        Rule("charge_ordered", "charge_end", "charge_end <= charge_start", "charge_end is not after charge_start"),
        *_non_negative("quantity", "unit_price"),
        _currency(),
    ],
    "hardware": [
        *_non_negative("purchase_price", "salvage_value"),
        Rule("life_positive", "life_months", "life_months < 1", "life_months is less than 1"),
        Rule("salvage_below_price", "salvage_value", "salvage_value > purchase_price", "salvage_value exceeds purchase_price"),
        Rule("retired_after_service", "retired_date", "retired_date < in_service_date", "retired_date is before in_service_date"),
        _currency(),
    ],
    "opex": [
        Rule(
            "category_known",
            "category",
            f"category NOT IN {_in(OPEX_CATEGORIES)}",
            f"category is not one of {', '.join(OPEX_CATEGORIES)}",
        ),
        _currency(),
    ],
}

#: Columns parsed with a special format: (kind, column) -> format name understood by ingest.
SPECIAL_FORMATS: dict[tuple[str, str], str] = {("opex", "month"): "year_month"}

#: Kinds whose files are snapshots of a billing period: a newer file replaces the
#: older one's lines for the same (provider, month) instead of adding to them.
SNAPSHOT_KINDS: frozenset[str] = frozenset({"invoices"})
