"""The monthly break-even report: the marts' figures for one month, formatted, never recomputed.

Every figure comes from a mart or a query in ``sql/queries/``; rounding happens here
and only here, for display. Three renderings of the same content: a self-contained
HTML file (inline CSS and SVG charts: opens offline), Markdown for chat and email,
and plain text for the terminal.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from pipeline.models import define_macros
from pipeline.errors import CostledgerError, UsageError
from pipeline.serve.planning import (
    Gate,
    gate as read_gate,
    gate_headline,
    gate_sentence,
    hybrid_plan,
    plan_sentences,
    size_marks,
)
from pipeline.query import run_query
from pipeline.text import count, ms, pct, usd  # noqa: F401 (the report's formatters, also read from here)

TEMPLATES = Path(__file__).resolve().parent / "templates"


class NoMonths(CostledgerError):
    """The ledger has no month to report yet (exit 1)."""


class ReportError(UsageError, ValueError):
    pass


# ------------------------------------------------------------------ display formatting (rounding for display only)


# ------------------------------------------------------------------ data


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def query(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Run ``sql/queries/<name>.sql`` with bound named parameters, rows as dicts."""
    names, rows = run_query(con, name, params)
    return [dict(zip(names, r)) for r in rows]


def with_macros(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    define_macros(con)
    return con


def planning_table(
    con: duckdb.DuckDBPyConnection, rates: list[Decimal], hours: Decimal, api_costs: list[Decimal]
) -> list[dict[str, Any]]:
    return query(with_macros(con), "planning_table", {"rates": rates, "hours": hours, "api_costs": api_costs})


def resolve_month(con: duckdb.DuckDBPyConnection, month: str | None) -> str:
    months = [
        str(r[0])[:7] for r in con.execute("SELECT month FROM marts.monthly_break_even ORDER BY month").fetchall()
    ]
    if not months:
        raise NoMonths("the ledger has no months yet: load data and run `costledger build`")
    if month is not None and not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", month):
        raise ReportError(f"--month {month!r} is not a month: give YYYY-MM, e.g. {months[-1]}")
    if month is None:
        # the latest month that has begun: a charge or invoice period reaching into next month never makes
        # a month that has not started the default
        current = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m")
        begun = [m for m in months if m <= current]
        return begun[-1] if begun else months[0]
    if month not in months:
        raise ReportError(f"month {month} is not in the ledger (months: {', '.join(months)})")
    return month


@dataclass(kw_only=True)
class ReportData:
    month: str
    generated_at: str
    publication: dict[str, Any]
    be: dict[str, Any]
    routes: list[dict[str, Any]]
    trend_routes: list[dict[str, Any]]
    trend_be: list[dict[str, Any]]
    trend_costs: list[dict[str, Any]]
    month_costs: list[dict[str, Any]]
    utilisation: list[dict[str, Any]]
    sensitivity: list[dict[str, Any]]
    measured_plan: list[dict[str, Any]]
    measured_inputs: dict[str, Any]
    reconciliation: list[dict[str, Any]]
    invoices: list[dict[str, Any]]
    usage: list[dict[str, Any]]
    """Provider usage exports against the logs (marts.monthly_usage_reconciliation), for this month."""
    data_quality: list[dict[str, Any]]
    rejected_files: list[dict[str, Any]]
    restated: list[dict[str, Any]]
    settings: list[dict[str, Any]]
    license: list[dict[str, Any]]
    teams: list[dict[str, Any]]
    forecast: dict[str, Any] | None = None
    """The month's row of marts.monthly_forecast (when the ledger has the mart)."""
    previous: dict[str, Any] | None = None
    """The month before's break-even row, when the ledger has it."""
    movements: list[dict[str, Any]] = field(default_factory=list)
    """The three largest cost movements since the month before, with their causes (sql/queries/month_movements.sql)."""
    hybrid: list[dict[str, Any]] = field(default_factory=list)
    """The month's rows of marts.monthly_hybrid_plan: its cost at each cluster size."""
    gate: Gate | None = None
    """The latest evaluation set's deployment gate, when the ledger has one."""
    charts: dict[str, str] = field(default_factory=dict)

    def setting(self, key: str) -> str | None:
        return next((r["value"] or None for r in self.settings if r["key"] == key), None)


#: files and rows per kind, for the trust section
DATA_QUALITY = """SELECT kind, count(*) AS files, sum(rows_in) AS rows_in, sum(rows_loaded) AS rows_loaded,
       sum(rows_quarantined) AS rows_quarantined
FROM meta.loaded_files GROUP BY kind ORDER BY kind"""


def gather(con: duckdb.DuckDBPyConnection, month: str | None) -> ReportData:
    m = resolve_month(con, month)
    first = dt.date.fromisoformat(f"{m}-01")
    with_macros(con)
    settings = _rows(con, "SELECT key, value FROM meta.settings ORDER BY key")
    s = {r["key"]: r["value"] for r in settings}
    inputs = query(con, "measured_planning_inputs", {"month": first})
    measured_plan = inputs  # the month's break-even in the planning table's terms: one row, or none without one

    def business(key: str) -> Any:
        return s.get(key) or None

    publication = (
        _rows(con, "SELECT run_id, published_at FROM meta.publication") if _has(con, "meta", "publication") else []
    )
    return ReportData(
        month=m,
        generated_at=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        publication=publication[0] if publication else {"run_id": "n/a", "published_at": None},
        be=_rows(con, "SELECT * FROM marts.monthly_break_even WHERE month = ?", [first])[0],
        routes=_rows(con, "SELECT * FROM marts.monthly_route_cost WHERE month = ? ORDER BY route", [first]),
        trend_routes=_rows(
            con, "SELECT * FROM marts.monthly_route_cost WHERE month <= ? ORDER BY month, route", [first]
        ),
        trend_be=_rows(con, "SELECT * FROM marts.monthly_break_even WHERE month <= ? ORDER BY month", [first]),
        trend_costs=_rows(
            con, "SELECT * FROM marts.monthly_self_hosted_cost WHERE month <= ? ORDER BY month, category", [first]
        ),
        month_costs=_rows(
            con,
            "SELECT coalesce(cluster_id, '(shared)') AS cluster_id, category, amount_usd "
            "FROM marts.monthly_self_hosted_cost WHERE month = ? ORDER BY amount_usd DESC",
            [first],
        ),
        utilisation=_rows(con, "SELECT * FROM marts.monthly_utilisation WHERE month = ? ORDER BY cluster_id", [first]),
        sensitivity=_rows(
            con,
            "SELECT * FROM marts.monthly_sensitivity WHERE month = ? "
            "ORDER BY scenario_group, is_measured, share_of_capacity, api_cache_hit_rate",
            [first],
        ),
        measured_plan=measured_plan,
        measured_inputs=inputs[0] if inputs else {},
        reconciliation=_rows(
            con, "SELECT * FROM marts.monthly_reconciliation WHERE month = ? ORDER BY provider", [first]
        ),
        invoices=query(con, "invoices_of_month", {"month": first}),
        usage=_rows(
            con,
            "SELECT * FROM marts.monthly_usage_reconciliation WHERE month = ? ORDER BY provider, token_type",
            [first],
        )
        if _has(con, "marts", "monthly_usage_reconciliation")
        else [],
        data_quality=_rows(con, DATA_QUALITY),
        rejected_files=_rows(
            con, "SELECT kind, path, reason FROM meta.rejected_files ORDER BY rejected_at DESC LIMIT 20"
        ),
        restated=query(con, "restated_months"),
        settings=settings,
        license=query(
            con,
            "license_checks",
            {
                "maas_revenue_12m_usd": business("business_maas_revenue_12m_usd"),
                "monthly_active_users": business("business_monthly_active_users"),
                "monthly_revenue_usd": business("business_monthly_revenue_usd"),
            },
        ),
        teams=_rows(con, "SELECT * FROM marts.monthly_team_usage WHERE month = ? ORDER BY route, team", [first]),
        previous=_first_row(
            con, "SELECT * FROM marts.monthly_break_even WHERE month = CAST(? AS DATE) - INTERVAL 1 MONTH", [first]
        ),
        forecast=_first_row(con, "SELECT * FROM marts.monthly_forecast WHERE month = ?", [first])
        if _has(con, "marts", "monthly_forecast")
        else None,
        movements=query(con, "month_movements", {"month": first}),
        hybrid=hybrid_plan(con, m) if _has(con, "marts", "monthly_hybrid_plan") else [],
        gate=read_gate(con) if _has(con, "marts", "gate_verdict") else None,
    )


def _first_row(con: duckdb.DuckDBPyConnection, sql: str, params: Any) -> dict[str, Any] | None:
    """The query's first row, or None when it has none."""
    rows = _rows(con, sql, params)
    return rows[0] if rows else None


def _has(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> bool:
    return bool(
        con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?", [schema, table]
        ).fetchall()[0][0]
    )


def add_charts(data: ReportData) -> None:
    from pipeline.serve import charts

    data.charts = {
        # a chart without a figure to draw is left out, not drawn empty
        "saving": charts.to_svg(charts.saving(data.trend_be))
        if any(r["saving_usd"] is not None for r in data.trend_be)
        else "",
        "cost_per_task": charts.to_svg(charts.cost_per_task(data.trend_routes)),
        "utilisation": charts.to_svg(charts.utilisation(data.trend_be))
        if any(
            r["token_utilisation"] is not None or r["break_even_share_of_capacity"] is not None for r in data.trend_be
        )
        else "",
        "categories": charts.to_svg(
            charts.self_hosted_categories([{**r, "category": category_label(r["category"])} for r in data.trend_costs])
        )
        if data.trend_costs
        else "",
        "hybrid": charts.to_svg(charts.hybrid_plan(data.hybrid)) if len(data.hybrid) > 1 else "",
        "rates": charts.to_svg(charts.rates(data.trend_routes)),
        "latency": charts.to_svg(
            charts.latency(
                data.trend_routes,
                {
                    route: int(v)
                    for route, v in (
                        ("api", data.setting("slo_ms_api")),
                        ("self_hosted", data.setting("slo_ms_self_hosted")),
                    )
                    if v
                },
            )
        ),
    }


# ------------------------------------------------------------------ rendering

VERDICTS = {
    "api_cheaper": "The API was cheaper",
    "self_hosting_cheaper": "Self-hosting was cheaper",
    "never_breaks_even": "Self-hosting never breaks even",
    "no_api_price": "No verdict: there is no API price to compare with",
    "no_self_hosted_route": "No self-hosted route",
}


#: how a route's cost was found, in words (monthly_route_cost.cost_basis)
BASIS_WORDS = {"invoice": "invoices", "metered": "logs x prices", "cluster_billing": "cluster bills + review"}

#: where the API cost per accepted task used for break-even comes from, in words (api_cost_source)
BASIS_OF_C = {"equivalent": "priced from the cluster's own tasks", "measured": "the API route's own tasks"}
#: where capacity comes from, in words (capacity_source)
SOURCE_WORDS = {
    "sweep": "load tests",
    "observed": "the request log (a lower bound)",
    "mixed": "the request log, then load tests",
}

#: the verdict inside a sentence
VERDICT_NOUNS = {
    "api_cheaper": "the API cheaper",
    "self_hosting_cheaper": "self-hosting cheaper",
    "never_breaks_even": "self-hosting never breaking even",
    "no_api_price": "no API price to compare with",
    "no_self_hosted_route": "no self-hosted route",
}


def verdict(be: dict[str, Any]) -> str:
    return VERDICTS.get(be["verdict"], "No verdict")


def _slo(d: "ReportData") -> str:
    v = d.setting("slo_ms_self_hosted")
    return f"the {int(v) / 1000:g} s latency target" if v else "no latency target"


def unpriced_sentence(d: "ReportData") -> str | None:
    """The month's API requests priced at nothing, named as such (they are missing from the metered cost)."""
    rows = [r for r in d.reconciliation if r["unpriced_requests"]]
    if not rows:
        return None
    which = ", ".join(f"{count(r['unpriced_requests'])} of {r['provider']}" for r in rows)
    return (
        f"Unpriced: {which} API request(s) have no price for their provider, model and time; they are left out of "
        "the metered cost, so the API figures are understated until a price is loaded."
    )


def latency_sentence(d: "ReportData") -> str | None:
    """The share of the API's accepted tasks whose latency is unknown: the SLO could not be checked for them."""
    share = d.be.get("api_latency_unknown_share")
    if not share:
        return None
    return (
        f"The latency target could not be checked for {pct(share, 0)} of the tasks the API delivered: their responses "
        "carry no latency, so they count as delivered on their outcome alone."
    )


def headline(d: "ReportData") -> list[str]:
    """The first screen, in words a CFO can act on: the same sentences in HTML, Markdown and text."""
    extra = (
        saving_sentence(d),
        robustness_sentence(d),
        forecast_sentence(d),
        unpriced_sentence(d),
        latency_sentence(d),
    )
    return _headline(d) + [line for line in extra if line] + caveat_sentences(d)


#: one sentence per caveat the verdict carries (monthly_break_even.verdict_caveats)
CAVEATS = {
    "invoice_unreconciled": "The reference provider's invoice does not match its request logs this month, so the "
    "API price used here carries that gap (see 'How far to trust these numbers').",
    "api_waste_assumed": "Too few tasks went to the API to measure what it spends on failures and retries; it is "
    "assumed to spend nothing on them, which makes the API look cheaper than it may be.",
    "capacity_mix_warning": "The load test that measured the cluster's capacity ran a different mix of input and "
    "output tokens from production's, so the capacity may not hold for this traffic.",
    "sweep_nodes_assumed": "A load test does not say how many nodes it ran on; it is taken as one node.",
}


def caveat_sentences(d: "ReportData") -> list[str]:
    return [CAVEATS.get(c, c) for c in d.be.get("verdict_caveats") or []]


def forecast_sentence(d: "ReportData", already_above: bool = False) -> str | None:
    """When the cluster's volume reaches break-even if its trend holds (marts.monthly_forecast); with
    ``already_above``, also a sentence for a month already at or above it (the first screen's verdict says so)."""
    f = d.forecast
    if f is None or f["forecast_status"] in ("too_few_months", "no_break_even"):
        return None
    if f["forecast_status"] == "already_above":
        if not already_above:
            return None
        if f["trend_monthly_growth"] is None:  # above with fewer than 3 months: no trend to state
            return "The cluster already delivers its break-even volume."
        growth = f"{f['trend_monthly_growth']:+.0%} a month over the last {f['months_fitted']} months"
        return f"The cluster already delivers its break-even volume; its volume grew {growth}."
    trend = f"its trend of the last {f['months_fitted']} months ({f['trend_monthly_growth']:+.0%} a month)"
    if f["forecast_status"] == "not_growing":
        return f"The cluster's volume is not growing ({trend}): at this trend it does not reach break-even."
    if f["forecast_status"] == "beyond_12_months":
        return f"At {trend}, the cluster's volume would take more than 12 months to reach break-even."
    when, low, high = (
        str(f[k])[:7] if f[k] is not None else None
        for k in ("projected_month", "projected_month_low", "projected_month_high")
    )
    span = "" if low == high == when else f" (range {low} to {high})" if high else f" (range {low} to beyond 12 months)"
    return f"If the cluster's volume keeps {trend}, it reaches break-even in {when}{span}."


def saving_sentence(d: "ReportData") -> str | None:
    """The month's saving (or cost) in dollars against sending the same accepted work to the API."""
    be = d.be
    if be["saving_usd"] is None or be["verdict"] in ("no_self_hosted_route", "no_api_price"):
        return None
    saved = be["saving_usd"]
    what = "saved" if saved >= 0 else "cost"
    return (
        f"Self-hosting {what} {usd(abs(saved), 0)} this month against sending the same accepted tasks to the API, "
        f"which would have charged {usd(be['api_would_have_cost_usd'], 0)} for them."
    )


#: what each named assumption of marts.monthly_verdict_sensitivity means, for a reader
ASSUMPTIONS = {
    "api_waste_factor": "the API's spend on failures and retries at either end of its 95 % interval",
    "hardware_life": "hardware lasting two thirds or four thirds as long",
    "compute_hour_price": "node-hour and GPU-hour prices 20 % lower or higher",
    "api_cache_hit_rate": "the cluster's requests at the API's own cache-hit rate",
}


def _assumption(name: str) -> str:
    if name.startswith("reference_provider:"):
        return f"{name.split(':', 1)[1]}'s price list instead of the reference provider's"
    return ASSUMPTIONS.get(name, name)


def _value(name: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    if name == "api_cache_hit_rate":
        return pct(value)
    if name == "hardware_life":
        return f"x {value:.2f} life"
    return f"x {value:.3f}"


def robustness_rows(d: "ReportData") -> list[dict[str, Any]]:
    """The verdict under each named assumption (monthly_break_even.verdict_sensitivity), in the reader's words."""
    words = {"api_cheaper": "API cheaper", "self_hosting_cheaper": "self-hosting cheaper", "never_breaks_even": "never"}
    return [
        {
            "assumption": _assumption(r["assumption"]),
            "low": _value(r["assumption"], r["value_low"]),
            "high": _value(r["assumption"], r["value_high"]),
            "break_even_low": r["break_even_low"],
            "break_even_high": r["break_even_high"],
            "verdict_low": words.get(r["verdict_low"], r["verdict_low"]),
            "verdict_high": words.get(r["verdict_high"], r["verdict_high"]),
            "flips": r["flips"],
        }
        for r in d.be["verdict_sensitivity"] or []
    ]


def robustness_sentence(d: "ReportData") -> str | None:
    """How far the month is from break-even, and which named assumptions would turn the verdict."""
    be = d.be
    if be["verdict_confidence"] is None or be["verdict_margin"] is None:
        return None
    side = "above" if be["verdict_margin"] >= 0 else "below"
    margin = f"The month is {pct(abs(be['verdict_margin']), 1)} {side} break-even"
    flipped = be["verdict_flipped_by"] or []
    if not flipped:
        return f"{margin}; the verdict holds under every assumption tested (robust)."
    names = [_assumption(a) for a in flipped]
    listed = names[0] if len(names) == 1 else "; ".join(names[:-1]) + "; or " + names[-1]
    return f"{margin}: a marginal verdict. It turns with {listed}."


def _headline(d: "ReportData") -> list[str]:
    be, m = d.be, d.month
    v = be["verdict"]
    out = [f"{verdict(be)} in {m}."]
    if v == "no_self_hosted_route":
        out.append(
            f"The ledger has no cluster cost and no self-hosted requests for {m}; an accepted task cost "
            f"{usd(be['api_measured_cost_per_accepted_task_usd'], 4)} on the API."
        )
        return out
    if v == "no_api_price":
        out.append(
            "Neither the API route accepted a task nor could the cluster's accepted attempts be priced at the "
            "reference API, so break-even cannot be computed (load a price list or API request logs)."
        )
        return out
    if v == "never_breaks_even":
        out.append(
            f"An accepted task costs {usd(be['api_cost_per_accepted_task_usd'], 4)} on the API, no more than the "
            f"{usd(be['self_hosted_variable_cost_per_accepted_task_usd'], 4)} per task the cluster spends on review "
            "alone: no volume pays for the cluster."
        )
        return out
    out.append(
        f"Self-hosting breaks even at {count(be['break_even_accepted_tasks'])} accepted tasks a month "
        f"(you delivered {count(be['self_hosted_accepted_tasks'])})."
    )
    share = be["break_even_share_of_capacity"]
    if share is None:
        out.append(
            f"The cluster's capacity at {_slo(d)} is unknown (no load-test sweep and no window of the request "
            "log within the latency target), so whether that volume fits is not known."
        )
    else:
        lower = (
            " (capacity observed in the request log: a lower bound, so this share is at most this)"
            if be["capacity_source"] == "observed"
            else ""
        )
        reach = "reachable" if be["break_even_reachable"] else "out of reach on this cluster"
        out.append(f"That needs {pct(share, 0)} of the cluster's measured capacity at {_slo(d)}: {reach}{lower}.")
    return out


def views(d: "ReportData") -> list[dict[str, Any]]:
    """The break-even under each question, side by side (figures from the mart): fully loaded, infrastructure only,
    shutdown (hardware and reservations committed either way) and marginal (only the capacity one can cancel)."""
    be = d.be
    return [
        {
            "view": "fully loaded",
            "cost": be["fixed_cost_usd"],
            "includes": "hardware, cluster charges, operating costs",
            "break_even": be["break_even_accepted_tasks"],
        },
        {
            "view": "infrastructure only",
            "cost": be["infrastructure_cost_usd"],
            "includes": "hardware and cluster charges; operating costs left out, as published planning tables do",
            "break_even": be["infrastructure_break_even_accepted_tasks"],
        },
        {
            "view": "shutdown",
            "cost": _add(be["avoidable_cost_usd"], be["operating_cost_usd"]),
            "includes": "cancellable capacity and operating costs: does running the service pay, with the hardware "
            "and reservations committed either way?",
            "break_even": be["shutdown_break_even_accepted_tasks"],
        },
        {
            "view": "marginal",
            "cost": be["avoidable_cost_usd"],
            "includes": "cancellable capacity only: does the capacity we can cancel this month pay for itself?",
            "break_even": be["marginal_break_even_accepted_tasks"],
        },
    ]


def _add(*amounts: Any) -> Any:
    return None if any(a is None for a in amounts) else sum(amounts)


#: a cost category as a reader names it (marts.monthly_self_hosted_cost.category)
CATEGORY_LABELS = {
    "hardware_amortisation": "Owned hardware (written off over its life)",
    "cluster_on_demand": "On-demand nodes",
    "cluster_reserved": "Reserved nodes",
    "cluster_other": "Other cluster charges",
    "platform_engineering": "Platform engineering",
    "inference_operations": "Inference operations",
    "networking": "Networking",
    "storage": "Storage",
    "observability": "Observability",
    "security": "Security",
    "on_call": "On-call",
    "other": "Other operating costs",
    "focus_correction": "Cloud bill corrections",
}


def category_label(category: str) -> str:
    if category.startswith("focus_") and category not in CATEGORY_LABELS:
        return "Cloud bill: " + category.removeprefix("focus_").replace("_", " ")
    return CATEGORY_LABELS.get(category, category.replace("_", " "))


#: the terms the report uses, for its glossary
GLOSSARY = [
    ("Task", "One piece of business work (an answer, a code change, a ticket). It may take several attempts."),
    ("Attempt", "One request to a model for a task. Failed and retried attempts cost money too."),
    (
        "Accepted task",
        "A task whose final outcome was accepted, within the latency target. Only accepted tasks count as delivered.",
    ),
    ("Latency target (SLO)", "The longest an accepted attempt may take; a slower one does not count as delivered."),
    (
        "Break-even",
        "The number of accepted tasks a month at which running your own cluster costs the same as sending them to "
        "the API.",
    ),
    ("Margin", "How far this month's delivered tasks are above (or below) break-even, as a share of break-even."),
    (
        "Robust / marginal",
        "Robust: no reasonable change to the assumptions the figures rest on turns the verdict. Marginal: one does.",
    ),
    (
        "Fixed cost",
        "What the cluster costs whatever it serves: hardware, reserved and on-demand capacity, operating costs.",
    ),
    ("Operating costs", "Platform engineering, operations, on-call and the like: they stop when the service stops."),
    (
        "Cash view",
        "What a route cost as billed, with credits, tax and human review; break-even leaves credits and tax out.",
    ),
    (
        "Waste factor",
        "What the API spends on failed attempts, retries and rejected tasks for each dollar of delivered work.",
    ),
    ("Invoice uplift", "What the reference provider's invoices add on top of its list prices (fees, surcharges)."),
    (
        "Capacity at the latency target",
        "The tokens per second a node serves while meeting the latency target, from load tests (else from the "
        "request log).",
    ),
    ("Token utilisation", "The tokens the cluster served as a share of what its nodes could have served."),
    ("Node-hour", "One server (node) provisioned for one hour."),
    ("Duty cycle", "How much of its capacity the cluster used: its token utilisation."),
    (
        "Productive utilisation",
        "The share of provisioned hours the cluster spent on delivered tasks (hours, not tokens: not a duty cycle).",
    ),
    ("Peak-to-average", "Requests in the busiest hour over the average hour: how much capacity a peak needs."),
    ("Cancellable capacity", "On-demand and other charges the team can stop paying for within the month."),
]


def _saving_words(saving: Any) -> str:
    return f"saving {usd(saving, 0)}" if saving >= 0 else f"costing {usd(-saving, 0)}"


def changes(d: "ReportData") -> list[str]:
    """What changed since the month before: the saving, break-even, the verdict, and the largest cost movements."""
    be, before = d.be, d.previous
    if before is None:
        return []
    out = []
    if be["saving_usd"] is not None and before["saving_usd"] is not None:
        out.append(
            f"Self-hosting went from {_saving_words(before['saving_usd'])} in {str(before['month'])[:7]} to "
            f"{_saving_words(be['saving_usd'])} in {d.month}."
        )
    if be["break_even_accepted_tasks"] is not None and before["break_even_accepted_tasks"] is not None:
        out.append(
            f"Break-even moved from {count(before['break_even_accepted_tasks'])} to "
            f"{count(be['break_even_accepted_tasks'])} accepted tasks; the cluster delivered "
            f"{count(before['self_hosted_accepted_tasks'])}, then {count(be['self_hosted_accepted_tasks'])}."
        )
    if be["verdict"] != before["verdict"]:
        out.append(
            f"The verdict changed: {VERDICT_NOUNS[before['verdict']]} before, {VERDICT_NOUNS[be['verdict']]} now."
        )
    for m in d.movements:
        name = category_label(m["item"]) if m["kind"] == "self-hosted" else f"the API at {m['item']}"
        out.append(
            f"{name[0].upper() + name[1:]}: {usd(m['last_usd'], 0)}, then {usd(m['this_usd'], 0)} "
            f"({'+' if m['change_usd'] >= 0 else '-'}{usd(abs(m['change_usd']), 0)}; {m['cause']})."
        )
    return out


def surcharges(d: "ReportData") -> list[str]:
    """One sentence per provider whose invoice lines are above their own quantity x unit price (line_price_mismatch)."""
    out = []
    for r in d.reconciliation:
        if r["line_price_mismatches"]:
            share = r["line_price_mismatch_share"]
            above = f"{pct(share, 1)} above" if share is not None else "not equal to"
            lines = "line is" if r["line_price_mismatches"] == 1 else "lines are"
            out.append(
                f"{r['provider']}: {r['line_price_mismatches']} invoice {lines} {above} quantity x unit price "
                f"({usd(r['line_price_mismatch_usd'])} this month): a fee or surcharge its price list lacks, so its "
                "invoice does not match the logs priced at that list."
            )
    return out


def comparator_how(d: "ReportData") -> str:
    """How the API cost per accepted task used for break-even was found, with the two factors it multiplies by."""
    be = d.be
    if be["api_cost_source"] != "equivalent":
        return "the API route's run-rate plus review, per accepted task"
    waste = {
        "month": "measured this month",
        "pooled": "pooled with earlier months to reach enough accepted API tasks",
        "assumed": "assumed: too few accepted API tasks to measure it",
    }[be["api_waste_basis"]]
    interval = (
        f", 95 % interval {be['api_waste_factor_low']:.3f} to {be['api_waste_factor_high']:.3f}"
        if be["api_waste_basis"] != "assumed"
        else ""
    )
    unreconciled = (
        " (the reference provider's invoice and logs do not reconcile this month: this figure carries the gap)"
        if "invoice_unreconciled" in (be["verdict_caveats"] or [])
        else ""
    )
    return (
        "the cluster's own accepted attempts at the reference API price, times the API's spend on failures and "
        f"retries per accepted dollar ({be['api_waste_factor']:.3f}x, {waste}{interval}) and times what the "
        f"reference provider's invoices add to its list prices ({be['api_invoice_uplift']:.3f}x{unreconciled}), "
        "plus review"
    )


def marginal_sentence(d: "ReportData") -> str:
    be = d.be
    if be["marginal_break_even_accepted_tasks"] is None:
        return "No shutdown or marginal view: there is no break-even this month."
    return (
        "With the hardware and reservations committed either way, running the service pays from "
        f"{count(be['shutdown_break_even_accepted_tasks'])} accepted tasks a month; the capacity that can be "
        f"cancelled this month ({usd(be['avoidable_cost_usd'], 0)}) pays for itself from "
        f"{count(be['marginal_break_even_accepted_tasks'])}."
    )


def steps(d: "ReportData") -> list[tuple[str, str, str]]:
    """The five steps from capacity to cost per token, computed from the data: (step, figure, how it was found)."""
    be = d.be
    source = {
        "sweep": "the load-test sweeps in force over the month, weighted by node-hours",
        "observed": "observed in the request log (best 5-minute window within the latency target; a lower bound)",
        "mixed": "the request log before the first sweep, the sweeps after it",
    }.get(be["capacity_source"] or "", "unknown")
    per_node = be["capacity_per_node_tokens_per_second"]
    return [
        (
            "1. Capacity at the latency target",
            f"{count(per_node)} tokens/s per node" if per_node is not None else "unknown",
            f"aggregate tokens per second one node serves within {_slo(d)}: {source}",
        ),
        (
            "2. Duty cycle, measured",
            f"{pct(be['token_utilisation'])} of token capacity used",
            "tokens served / the tokens the provisioned nodes could serve at the latency target; not assumed "
            f"(in hours, {pct(be['productive_utilisation'])} of provisioned time went to accepted work)",
        ),
        (
            "3. Cost per million tokens",
            f"{usd(be['self_hosted_cost_per_million_tokens_served'], 2)} per million served",
            f"fixed cost / the tokens served; at full capacity ({count(be['monthly_token_capacity'])} tokens from "
            f"{count(be['provisioned_node_hours'])} node-hours) it would be "
            f"{usd(be['self_hosted_cost_per_million_tokens_at_capacity'], 2)}",
        ),
        (
            "4. The API at your mix",
            f"{usd(be['api_cost_per_million_tokens_at_mix'], 2)} per million tokens",
            "the cluster's own requests priced at the reference API, times the API's waste and invoice factors, / "
            "their tokens: compare with step 3's served figure"
            if be["api_cost_source"] == "equivalent"
            else "the API route's run-rate / its tokens: compare with step 3's served figure",
        ),
        (
            "5. Operations",
            f"{usd(be['operating_cost_usd'], 0)} a month",
            "platform engineering, on-call, ...: included in the fully loaded view, left out of the "
            "infrastructure-only one",
        ),
    ]


#: the gate's criteria in words (marts.gate_criteria.criterion; drill_<name> are the drills)
CRITERION_WORDS = {
    "cases": "cases in the evaluation set",
    "categories_covered": "categories with cases on both routes",
    "every_case_on_both_routes": "cases missing a route",
    "hosted_days": "days of API measurements",
    "accepted_share_gap_points": "the cluster's accepted share against the API's, in points",
    "self_hosted_p95_ms": "the cluster's p95 latency, ms",
}


def criterion_words(name: str) -> str:
    if name.startswith("drill_"):
        return f"the {name[6:].replace('_', ' ')} drill (1 = passed)"
    return CRITERION_WORDS.get(name, name)


def decisions(d: "ReportData") -> dict[str, Any]:
    """The "Decisions ahead" section: the plan in sentences, the gate verdict and what it lacks, the forecast."""
    return {
        "plan": plan_sentences(d.hybrid),
        "gate": gate_sentence(d.gate) if d.gate else None,
        "gate_headline": gate_headline(d.gate) if d.gate else None,
        "gate_open": [c for c in d.gate.criteria if c["status"] != "passed"] if d.gate else [],
        "forecast": forecast_sentence(d, already_above=True),
    }


def _env():
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(["html", "j2"], default_for_string=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(usd=usd, pct=pct, count=count, ms=ms)
    env.globals.update(
        verdict=verdict,
        headline=headline,
        views=views,
        steps=steps,
        marginal_sentence=marginal_sentence,
        comparator_how=comparator_how,
        surcharges=surcharges,
        robustness_rows=robustness_rows,
        category_label=category_label,
        glossary=GLOSSARY,
        changes=changes,
        basis_words=BASIS_WORDS,
        basis_of_c=BASIS_OF_C,
        source_words=SOURCE_WORDS,
        decisions=decisions,
        criterion_words=criterion_words,
        size_marks=size_marks,
    )
    return env


def render_html(data: ReportData) -> str:
    if not data.charts:
        add_charts(data)
    return _env().get_template("report.html.j2").render(d=data)


def render_markdown(data: ReportData) -> str:
    env = _env()
    env.autoescape = False  # Markdown: escaped by the md_cell filter instead
    env.filters["md"] = md_cell
    return env.get_template("report.md.j2").render(d=data)


def md_cell(value: Any) -> str:
    """Text safe in a Markdown table cell: no pipes, no raw HTML."""
    text = str(value)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|").replace("\n", " ")


def plain_report(con: duckdb.DuckDBPyConnection, month: str | None) -> str:
    d = gather(con, month)
    be = d.be
    lines = [f"costledger report for {d.month}", "=" * 40, *headline(d), ""]
    if be["break_even_accepted_tasks"] is not None:
        lines.append("Break-even, four questions:")
        for v in views(d):
            lines.append(
                f"  {v['view']:20} fixed cost {usd(v['cost'], 0):>12}  break-even {count(v['break_even']):>10} "
                f"accepted tasks  ({v['includes']})"
            )
        lines += [f"  {marginal_sentence(d)}", ""]
    lines += [
        "What an accepted task costs on the API:",
        f"  used ({be['api_cost_source'] or 'n/a'})      {usd(be['api_cost_per_accepted_task_usd'], 4)}",
        f"  measured on the API route  {usd(be['api_measured_cost_per_accepted_task_usd'], 4)}"
        f"  (gap {usd(be['api_comparator_gap_usd'], 4)})",
        f"  self-hosted variable (V)   {usd(be['self_hosted_variable_cost_per_accepted_task_usd'], 4)}",
        f"  API credits this month     {usd(be['api_credits_usd'])} (left out of the run-rate)",
        f"  API tax this month         {usd(be['api_tax_usd'])} (left out of the run-rate)",
        "",
        "From capacity to cost per token: five steps, from the data:",
        *(f"  {step}: {figure} ({how})" for step, figure, how in steps(d)),
        "",
        "Routes (the cash view: as billed, credits and tax included; break-even uses the run-rate):",
    ]
    for r in d.routes:
        lines.append(
            f"  {r['route']:12} {r['requests']:>7,} requests  {r['tasks']:>6,} tasks  {r['accepted_tasks']:>6,} "
            f"accepted  cost {usd(r['cost_usd'])} ({r['cost_basis']})  "
            f"per accepted task {usd(r['cost_per_accepted_task_usd'], 4)}  "
            f"cache hits {pct(r['cache_hit_rate'])}  p95 {ms(r['p95_latency_ms'])}  over the latency target "
            f"{r['latency_violations']}"
        )
    ahead = decisions(d)
    if ahead["plan"] or ahead["gate"] or ahead["forecast"]:
        lines += ["", "Decisions ahead:"]
        lines += [f"  {s}" for s in [*ahead["plan"], ahead["gate"], ahead["forecast"]] if s]
    if d.reconciliation:
        lines += ["", "Invoice reconciliation:"]
        for r in d.reconciliation:
            lines.append(
                f"  {r['provider']:12} invoiced {usd(r['invoiced_usd'])}  metered {usd(r['metered_usd'])}  "
                f"difference {usd(r['difference_usd'])}  {r['status']}"
            )
        lines += [f"  {s}" for s in surcharges(d)]
        for i in d.invoices:
            lines.append(
                f"    {i['provider']} invoice {i['invoice_id']}: usage {usd(i['usage_usd'])}  credits "
                f"{usd(i['credits_usd'])}  tax {usd(i['tax_usd'])}  total {usd(i['total_usd'])}{i['note']}"
            )
    if d.usage:
        lines += ["", "Provider usage exports vs request logs:"]
        for u in d.usage:
            reported = "not in export" if u["reported"] is None else count(u["reported"])
            lines.append(
                f"  {u['provider']:12} {u['token_type']:22} reported {reported}  logged {count(u['logged'])}  "
                f"{u['status']}"
            )
    return "\n".join(lines)
