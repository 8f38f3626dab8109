"""The monthly break-even report: the marts' figures for one month, formatted, never recomputed.

Every figure comes from a mart or a query in ``sql/queries/``; rounding happens here
and only here, for display. Three renderings of the same content: a self-contained
HTML file (inline CSS and SVG charts: opens offline), Markdown for chat and email,
and plain text for the terminal.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from pipeline.base.models import define_macros
from pipeline.base.errors import CostledgerError, UsageError
from pipeline.serve.bridge import bridge_rows
from pipeline.serve.decisions import counterfactual_rows
from pipeline.serve.planning import gate as read_gate, hybrid_plan, plan_rows, size_marks, workload_name
from pipeline.serve.records import (
    BreakEvenMonth,
    ClusterTelemetry,
    PhaseCost,
    EngineReconciliation,
    CurvePoint,
    ForecastMonth,
    ProviderReconciliation,
    RouteMonth,
    WorkloadMove,
)
from pipeline.serve.reportdata import ReportData
from pipeline.serve.glossary import GLOSSARY
from pipeline.serve.attention import anomaly_note, attention_lines
from pipeline.serve.explain import report_definitions
from pipeline.serve.meters import engine_sentences, meter_sentences
from pipeline.serve.words import (
    BASIS_OF_C,
    BASIS_WORDS,
    SOURCE_WORDS,
    category_label,
    changes,
    comparator_how,
    criterion_words,
    decisions,
    headline,
    horizon_sentences,
    robustness_rows,
    steps,
    too_close_to_call,
    surcharges,
    views,
)
from pipeline.base.query import dict_rows, run_query, table_exists
from pipeline.base.text import count, ms, pct, usd

TEMPLATES = Path(__file__).resolve().parent / "templates"


class NoMonths(CostledgerError):
    """The ledger has no month to report yet (exit 1)."""


class ReportError(UsageError, ValueError):
    pass


# ------------------------------------------------------------------ display formatting (rounding for display only)


# ------------------------------------------------------------------ data


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
        # the latest month that has begun and has work in it (requests logged, or tokens and GPU time the cluster's
        # own meters counted): a charge or invoice period reaching into next month, or a bill (a FOCUS export of an
        # earlier year) with no work of the ledger's in it, never makes the default
        current = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m")
        begun = [m for m in months if m <= current] or months[:1]
        worked = {
            str(r[0])[:7]
            for r in con.execute(
                "SELECT month FROM marts.monthly_route_cost WHERE requests > 0 UNION SELECT month FROM "
                "marts.monthly_engine_reconciliation WHERE engine_tokens > 0 UNION SELECT month FROM "
                "marts.monthly_cluster_telemetry WHERE metered_gpu_hours > 0"
            ).fetchall()
        }
        return next((m for m in reversed(begun) if m in worked), begun[-1])
    if month not in months:
        raise ReportError(f"month {month} is not in the ledger (months: {', '.join(months)})")
    return month


#: files and rows per kind, for the trust section
DATA_QUALITY = """SELECT kind, count(*) AS files, sum(rows_in) AS rows_in, sum(rows_loaded) AS rows_loaded,
       sum(rows_quarantined) AS rows_quarantined
FROM meta.loaded_files GROUP BY kind ORDER BY kind"""


def gather(con: duckdb.DuckDBPyConnection, month: str | None) -> ReportData:
    m = resolve_month(con, month)
    first = dt.date.fromisoformat(f"{m}-01")
    with_macros(con)
    settings = dict_rows(con, "SELECT key, value FROM meta.settings ORDER BY key")
    s = {r["key"]: r["value"] for r in settings}
    inputs = query(con, "measured_planning_inputs", {"month": first})
    measured_plan = inputs  # the month's break-even in the planning table's terms: one row, or none without one

    def business(key: str) -> Any:
        return s.get(key) or None

    be_row = dict_rows(con, "SELECT * FROM marts.monthly_break_even WHERE month = ?", [first])[0]
    publication = (
        dict_rows(con, "SELECT run_id, published_at FROM meta.publication")
        if table_exists(con, "meta", "publication")
        else []
    )
    return ReportData(
        month=m,
        generated_at=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        publication=publication[0] if publication else {"run_id": "n/a", "published_at": None},
        be=BreakEvenMonth.from_row(be_row),
        be_row=be_row,
        **_month_marts(con, first),
        routes=RouteMonth.from_rows(
            dict_rows(con, "SELECT * FROM marts.monthly_route_cost WHERE month = ? ORDER BY route", [first])
        ),
        measured_plan=measured_plan,
        measured_inputs=inputs[0] if inputs else {},
        data_quality=dict_rows(con, DATA_QUALITY),
        rejected_files=dict_rows(
            con, "SELECT kind, path, reason FROM meta.rejected_files ORDER BY rejected_at DESC LIMIT 20"
        ),
        restated=query(con, "restated_months"),
        settings=settings,
        license=query(
            con,
            "license_checks",
            {
                "model_as_a_service": s.get("business_model_as_a_service") == "True",
                "maas_revenue_12m_usd": business("business_maas_revenue_12m_usd"),
                "monthly_active_users": business("business_monthly_active_users"),
                "monthly_revenue_usd": business("business_monthly_revenue_usd"),
            },
        ),
        previous=_previous_break_even(con, first),
        forecast=_forecast(con, first),
        movements=query(con, "month_movements", {"month": first}),
        caveat_meanings={r["caveat"]: r["meaning"] for r in declared(con, "stg_ledger__caveats")},
        verdict_words={r["verdict"]: r for r in declared(con, "stg_ledger__verdicts")},
        **_decision_marts(con, m, first),
    )


#: the declared enumerations the report's words come from
_DECLARED = {
    "stg_ledger__caveats": "SELECT * FROM staging.stg_ledger__caveats ORDER BY position",
    "stg_ledger__verdicts": "SELECT * FROM staging.stg_ledger__verdicts ORDER BY position",
}


def declared(con: duckdb.DuckDBPyConnection, view: str) -> list[dict[str, Any]]:
    """The rows of a declared enumeration (a staging view), none in a ledger built before it was declared."""
    return dict_rows(con, _DECLARED[view]) if table_exists(con, "staging", view, "VIEW") else []


def _decision_marts(con: duckdb.DuckDBPyConnection, month: str, first: dt.date) -> dict[str, Any]:
    """The month's rows of the decision layer: the plan, the curve, the traffic to move, the bridge and the gate (each
    when the ledger has its mart)."""
    has = {name: table_exists(con, "marts", name) for name in
           ("monthly_hybrid_plan", "monthly_break_even_curve", "monthly_workload_moves", "gate_verdict")}  # fmt: skip
    return {
        "counterfactual": counterfactual_rows(con, month),
        "hybrid": hybrid_plan(con, month) if has["monthly_hybrid_plan"] else [],
        "curve": CurvePoint.from_rows(
            dict_rows(
                con, "SELECT * FROM marts.monthly_break_even_curve WHERE month = ? ORDER BY token_utilisation", [first]
            )
        )
        if has["monthly_break_even_curve"]
        else [],
        "moves": WorkloadMove.from_rows(
            dict_rows(
                con,
                "SELECT * FROM marts.monthly_workload_moves WHERE month = ? "
                "ORDER BY move_rank ASC NULLS LAST, team, workload",
                [first],
            )
        )
        if has["monthly_workload_moves"]
        else [],
        "bridge": query(con, "cost_bridge", {"month": first}) if has["monthly_hybrid_plan"] else [],
        "gate": read_gate(con) if has["gate_verdict"] else None,
    }


def _forecast(con: duckdb.DuckDBPyConnection, first: dt.date) -> ForecastMonth | None:
    """The month's row of marts.monthly_forecast, when the ledger has the mart and the month."""
    if not table_exists(con, "marts", "monthly_forecast"):
        return None
    row = _first_row(con, "SELECT * FROM marts.monthly_forecast WHERE month = ?", [first])
    return ForecastMonth.from_row(row) if row else None


def _month_marts(con: duckdb.DuckDBPyConnection, first: dt.date) -> dict[str, Any]:
    """The month's rows of the marts the report shows as they are (and the trend to the month)."""
    return {
        "trend_routes": dict_rows(
            con, "SELECT * FROM marts.monthly_route_cost WHERE month <= ? ORDER BY month, route", [first]
        ),
        "trend_be": dict_rows(con, "SELECT * FROM marts.monthly_break_even WHERE month <= ? ORDER BY month", [first]),
        "trend_costs": dict_rows(
            con, "SELECT * FROM marts.monthly_self_hosted_cost WHERE month <= ? ORDER BY month, category", [first]
        ),
        "month_costs": dict_rows(
            con,
            "SELECT coalesce(cluster_id, '(shared)') AS cluster_id, category, amount_usd "
            "FROM marts.monthly_self_hosted_cost WHERE month = ? ORDER BY amount_usd DESC",
            [first],
        ),
        "utilisation": dict_rows(
            con,
            "SELECT u.*, e.is_idle, e.is_bursty FROM marts.monthly_utilisation AS u "
            "LEFT JOIN marts.monthly_cluster_economics AS e USING (month, cluster_id) WHERE u.month = ? "
            "ORDER BY u.cluster_id",
            [first],
        ),
        "sensitivity": dict_rows(
            con,
            "SELECT * FROM marts.monthly_sensitivity WHERE month = ? "
            "ORDER BY scenario_group, is_measured, share_of_capacity, api_cache_hit_rate",
            [first],
        ),
        "reconciliation": ProviderReconciliation.from_rows(
            dict_rows(con, "SELECT * FROM marts.monthly_reconciliation WHERE month = ? ORDER BY provider", [first])
        ),
        "invoices": query(con, "invoices_of_month", {"month": first}),
        "usage": dict_rows(
            con,
            "SELECT * FROM marts.monthly_usage_reconciliation WHERE month = ? ORDER BY provider, token_type",
            [first],
        )
        if table_exists(con, "marts", "monthly_usage_reconciliation")
        else [],
        "teams": dict_rows(con, "SELECT * FROM marts.monthly_team_usage WHERE month = ? ORDER BY route, team", [first]),
        **_later_marts(con, first),
    }


def _later_marts(con: duckdb.DuckDBPyConnection, first: dt.date) -> dict[str, Any]:
    """The month's rows of the marts a ledger built by an earlier version may not have (empty then)."""

    def rows(mart: str, order: str) -> list[dict[str, Any]]:
        if not table_exists(con, "marts", mart):
            return []
        # the mart's name and order are this module's own constants, never input
        return dict_rows(con, f"SELECT * FROM marts.{mart} WHERE month = ? ORDER BY {order}", [first])

    return {
        "engines": EngineReconciliation.from_rows(rows("monthly_engine_reconciliation", "cluster_id")),
        "chargeback": rows("monthly_chargeback", "route, amount_usd DESC, team, cost_class"),
        "telemetry": ClusterTelemetry.from_rows(rows("monthly_cluster_telemetry", "cluster_id")),
        "phases": PhaseCost.from_rows(rows("monthly_phase_cost", "cluster_id, phase DESC")),
        "budgets": rows("budget_status", "status DESC, team, route"),
        "anomalies": rows("daily_anomalies", "day, kind, provider, team, subject"),
    }


def _previous_break_even(con: duckdb.DuckDBPyConnection, first: dt.date) -> BreakEvenMonth | None:
    """The month before's break-even, typed, when the ledger has that month."""
    row = _first_row(
        con, "SELECT * FROM marts.monthly_break_even WHERE month = CAST(? AS DATE) - INTERVAL 1 MONTH", [first]
    )
    return None if row is None else BreakEvenMonth.from_row(row)


def _first_row(con: duckdb.DuckDBPyConnection, sql: str, params: Any) -> dict[str, Any] | None:
    """The query's first row, or None when it has none."""
    rows = dict_rows(con, sql, params)
    return rows[0] if rows else None


def _drawn(rows: list[dict[str, Any]], *keys: str) -> bool:
    """Whether any row has a figure under one of ``keys``: a chart without one is left out, not drawn empty."""
    return any(r[k] is not None for r in rows for k in keys)


def add_charts(data: ReportData) -> None:
    from pipeline.serve import charts

    drawn = {
        "saving": charts.saving(data.trend_be) if _drawn(data.trend_be, "saving_usd") else None,
        "cost_per_task": (charts.cost_per_task(data.trend_routes))
        if _drawn(data.trend_routes, "cost_per_accepted_task_usd")
        else None,
        "utilisation": (charts.utilisation(data.trend_be))
        if _drawn(data.trend_be, "token_utilisation", "break_even_share_of_capacity")
        else None,
        "categories": (
            charts.self_hosted_categories([{**r, "category": category_label(r["category"])} for r in data.trend_costs])
        )
        if data.trend_costs
        else None,
        "hybrid": (charts.hybrid_plan(data.hybrid)) if len(plan_rows(data.hybrid)) > 1 else None,
        "curve": (charts.break_even_curve([p.as_row() for p in data.curve])) if data.curve else None,
        "rates": (charts.rates(data.trend_routes))
        if _drawn(data.trend_routes, "acceptance_rate", "cache_hit_rate", "retry_rate")
        else None,
        "latency": (
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
        )
        if _drawn(data.trend_routes, "p50_latency_ms", "p95_latency_ms")
        else None,
    }
    svgs, data.charts_note = charts.render_all({k: v for k, v in drawn.items() if v is not None})
    data.charts = {k: svgs.get(k, "") for k in drawn}


# ------------------------------------------------------------------ rendering


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
        headline=headline,
        views=views,
        steps=steps,
        horizon_sentences=horizon_sentences,
        too_close_to_call=too_close_to_call,
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
        workload_name=workload_name,
        bridge_rows=bridge_rows,
        size_marks=size_marks,
        plan_rows=plan_rows,
        engine_sentences=engine_sentences,
        meter_sentences=meter_sentences,
        attention_lines=attention_lines,
        explained=report_definitions(),
        anomaly_note=anomaly_note,
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


#: Markdown's characters that make links, images and code spans, escaped in text that comes from data: a name such as
#: ``[x](javascript:...)`` or ``![x](http://...)`` is shown as written, never made a link or an image (raw HTML and
#: autolinks are escaped as ``&lt;``)
_MD_ESCAPES = str.maketrans({c: "\\" + c for c in "\\`[]"})


def md_cell(value: Any) -> str:
    """Text safe in a Markdown table cell: no pipes, no raw HTML, no link, image or other Markdown."""
    text = str(value).translate(_MD_ESCAPES)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|").replace("\n", " ")


def plain_report(con: duckdb.DuckDBPyConnection, month: str | None) -> str:
    d = gather(con, month)
    be = d.be
    lines = [f"costledger report for {d.month}", "=" * 40, *headline(d), ""]
    lines += ["Needs attention:", *(f"  {s}" for s in attention_lines(d)), ""]
    if be.break_even_accepted_tasks is not None:
        lines.append("Break-even, three questions:")
        for v in views(d):
            lines.append(
                f"  {v['view']:20} fixed cost {usd(v['cost'], 0):>12}  break-even {count(v['break_even']):>10} "
                f"accepted tasks  ({v['includes']})"
            )
        lines += [f"  {line}" for line in horizon_sentences(d)] + [""]
    lines += [
        "What an accepted task costs on the API:",
        f"  used for break-even ({BASIS_OF_C.get(be.api_cost_source or '', 'none to compare with')})  "
        f"{usd(be.api_cost_per_accepted_task_usd, 4)}",
        f"  measured on the API route  {usd(be.api_measured_cost_per_accepted_task_usd, 4)}"
        f"  (gap {usd(be.api_comparator_gap_usd, 4)})",
        f"  self-hosted variable (V)   {usd(be.self_hosted_variable_cost_per_accepted_task_usd, 4)}",
        f"  API credits this month     {usd(be.api_credits_usd)} (left out of the run-rate)",
        f"  API tax this month         {usd(be.api_tax_usd)} (left out of the run-rate)",
        "",
        "From capacity to cost per token: five steps, from the data:",
        *(f"  {step}: {figure} ({how})" for step, figure, how in steps(d)),
        "",
        "Routes (the cash view: as billed, credits and tax included; break-even uses the run-rate):",
    ]
    for r in d.routes:
        lines.append(
            f"  {r.route:12} {r.requests:>7,} requests  {r.tasks:>6,} tasks  {r.accepted_tasks:>6,} "
            f"accepted  cost {usd(r.cost_usd)} ({r.cost_basis})  "
            f"per accepted task {usd(r.cost_per_accepted_task_usd, 4)}  "
            f"cache hits {pct(r.cache_hit_rate)}  p95 {ms(r.p95_latency_ms)}  over the latency target "
            f"{r.latency_violations}"
        )
    lines += _decision_lines(d)
    if d.reconciliation:
        lines += ["", "Invoice reconciliation:"]
        for r in d.reconciliation:
            lines.append(
                f"  {r.provider:12} invoiced {usd(r.invoiced_usd)}  metered {usd(r.metered_usd)}  "
                f"difference {usd(r.difference_usd)}  {r.status}"
            )
        lines += [f"  {s}" for s in surcharges(d)]
        for i in d.invoices:
            lines.append(
                f"    {i['provider']} invoice {i['invoice_id']}: usage {usd(i['usage_usd'])}  credits "
                f"{usd(i['credits_usd'])}  tax {usd(i['tax_usd'])}  total {usd(i['total_usd'])}{i['note']}"
            )
    lines += _meter_lines(d)
    if d.usage:
        lines += ["", "Provider usage exports vs request logs:"]
        for u in d.usage:
            reported = "not in export" if u["reported"] is None else count(u["reported"])
            lines.append(
                f"  {u['provider']:12} {u['token_type']:22} reported {reported}  logged {count(u['logged'])}  "
                f"{u['status']}"
            )
    return "\n".join([*lines, "", "Glossary:", *(f"  {term}: {meaning}" for term, meaning in GLOSSARY)])


def _meter_lines(d: ReportData) -> list[str]:
    """The text report's cluster request logs against their engines, and what the clusters' own meters say."""
    lines: list[str] = []
    if d.engines:
        lines += ["", "Cluster request logs vs serving engines:", *(f"  {s}" for s in engine_sentences(d))]
    said = meter_sentences(d)
    if said:
        lines += ["", "The clusters' own meters:", *(f"  {s}" for s in said)]
    return lines


def _decision_lines(d: ReportData) -> list[str]:
    """The text report's "Decisions ahead" and the bridge between the month's totals."""
    lines: list[str] = []
    ahead = decisions(d)
    said = [ahead["curve"], *ahead["plan"], ahead["moves"], ahead["gate"], ahead["forecast"]]
    if any(said):
        lines += ["", "Decisions ahead:", *(f"  {s}" for s in said if s)]
    bridge = bridge_rows(d.bridge)
    if bridge:
        lines += ["", "How this month's cost figures tie together:"]
        for r in bridge:
            change = "" if r["change_usd"] is None else usd(r["change_usd"])
            lines.append(f"  {r['words']}: {change:>14}  {usd(r['total_usd']):>14}")
    return lines
