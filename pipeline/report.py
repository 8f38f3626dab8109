"""The monthly break-even report: the marts' figures for one month, formatted, never recomputed.

Every figure comes from a mart or a query in ``sql/queries/``; rounding happens here
and only here, for display. Three renderings of the same content: a self-contained
HTML file (inline CSS and SVG charts: opens offline), Markdown for chat and email,
and plain text for the terminal.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import duckdb

from pipeline.build import MACROS, SQL_DIR

TEMPLATES = Path(__file__).resolve().parent / "templates"
QUERIES = SQL_DIR / "queries"
SEEDS_RATES = [Decimal(80), Decimal(120), Decimal(160)]
SEEDS_HOURS = Decimal(730)
SEEDS_API_COSTS = [Decimal("1.35"), Decimal("0.54")]


class ReportError(ValueError):
    pass


# ------------------------------------------------------------------ display formatting (rounding for display only)

def usd(value: Decimal | None, places: int = 2) -> str:
    if value is None:
        return "n/a"
    q = Decimal(1).scaleb(-places)
    v = Decimal(value).quantize(q, rounding=ROUND_HALF_UP)
    return f"-${-v:,}" if v < 0 else f"${v:,}"


def pct(value: float | Decimal | None, places: int = 1) -> str:
    return "n/a" if value is None else f"{float(value) * 100:,.{places}f}%"


def count(value: Decimal | int | float | None) -> str:
    if value is None:
        return "n/a"
    return f"{Decimal(str(value)).quantize(Decimal(1), rounding=ROUND_HALF_UP):,}"


def ms(value: int | None) -> str:
    return "n/a" if value is None else f"{value / 1000:,.1f} s"


# ------------------------------------------------------------------ data

def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: Any = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def query(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Run ``sql/queries/<name>.sql`` with bound named parameters."""
    return _rows(con, (QUERIES / f"{name}.sql").read_text(encoding="utf-8"), params or {})


def with_macros(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    for stmt in MACROS:
        con.execute(stmt)
    return con


def planning_table(con: duckdb.DuckDBPyConnection, rates: list[Decimal], hours: Decimal,
                   api_costs: list[Decimal]) -> list[dict[str, Any]]:
    return query(with_macros(con), "planning_table", {"rates": rates, "hours": hours, "api_costs": api_costs})


def resolve_month(con: duckdb.DuckDBPyConnection, month: str | None) -> str:
    months = [str(r[0])[:7] for r in con.execute("SELECT month FROM marts.monthly_break_even ORDER BY month").fetchall()]
    if not months:
        raise ReportError("the ledger has no months yet: load data and run `costledger build`")
    if month is None:
        return months[-1]
    if month not in months:
        raise ReportError(f"month {month} is not in the ledger (months: {', '.join(months)})")
    return month


@dataclass
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
    seeds_plan: list[dict[str, Any]]
    measured_plan: list[dict[str, Any]]
    measured_inputs: dict[str, Any]
    reconciliation: list[dict[str, Any]]
    data_quality: list[dict[str, Any]]
    rejected_files: list[dict[str, Any]]
    restated: list[dict[str, Any]]
    settings: list[dict[str, Any]]
    license: list[dict[str, Any]]
    teams: list[dict[str, Any]]
    charts: dict[str, str] = field(default_factory=dict)


def gather(con: duckdb.DuckDBPyConnection, month: str | None) -> ReportData:
    m = resolve_month(con, month)
    first = dt.date.fromisoformat(f"{m}-01")
    with_macros(con)
    settings = _rows(con, "SELECT key, value FROM meta.settings ORDER BY key")
    s = {r["key"]: r["value"] for r in settings}
    inputs = query(con, "measured_planning_inputs", {"month": first})
    measured_plan: list[dict[str, Any]] = []
    if inputs and inputs[0]["rate_per_hour_usd"] is not None and inputs[0]["api_cost_per_accepted_task_usd"]:
        i = inputs[0]
        measured_plan = planning_table(con, [i["rate_per_hour_usd"]], i["hours"], [i["api_cost_per_accepted_task_usd"]])

    def business(key: str) -> Any:
        return s.get(key) or None

    publication = _rows(con, "SELECT run_id, published_at FROM meta.publication") if _has(con, "meta", "publication") else []
    return ReportData(
        month=m,
        generated_at=dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        publication=publication[0] if publication else {"run_id": "n/a", "published_at": None},
        be=_rows(con, "SELECT * FROM marts.monthly_break_even WHERE month = ?", [first])[0],
        routes=_rows(con, "SELECT * FROM marts.monthly_route_cost WHERE month = ? ORDER BY route", [first]),
        trend_routes=_rows(con, "SELECT * FROM marts.monthly_route_cost WHERE month <= ? ORDER BY month, route", [first]),
        trend_be=_rows(con, "SELECT * FROM marts.monthly_break_even WHERE month <= ? ORDER BY month", [first]),
        trend_costs=_rows(con, "SELECT * FROM marts.monthly_self_hosted_cost WHERE month <= ? ORDER BY month, category", [first]),
        month_costs=_rows(con, "SELECT coalesce(cluster_id, '(shared)') AS cluster_id, category, amount_usd "
                               "FROM marts.monthly_self_hosted_cost WHERE month = ? ORDER BY amount_usd DESC", [first]),
        utilisation=_rows(con, "SELECT * FROM marts.monthly_utilisation WHERE month = ? ORDER BY cluster_id", [first]),
        sensitivity=_rows(con, "SELECT * FROM marts.monthly_sensitivity WHERE month = ? "
                               "ORDER BY scenario_group DESC, is_measured, productive_utilisation, api_cache_hit_rate", [first]),
        seeds_plan=planning_table(con, SEEDS_RATES, SEEDS_HOURS, SEEDS_API_COSTS),
        measured_plan=measured_plan,
        measured_inputs=inputs[0] if inputs else {},
        reconciliation=_rows(con, "SELECT * FROM marts.monthly_reconciliation WHERE month = ? ORDER BY provider", [first]),
        data_quality=_rows(con, """SELECT kind, count(*) AS files, sum(rows_in) AS rows_in, sum(rows_loaded) AS rows_loaded,
                                          sum(rows_quarantined) AS rows_quarantined
                                   FROM meta.loaded_files GROUP BY kind ORDER BY kind"""),
        rejected_files=_rows(con, "SELECT kind, path, reason FROM meta.rejected_files ORDER BY rejected_at DESC LIMIT 20"),
        restated=query(con, "restated_months"),
        settings=settings,
        license=query(con, "license_checks", {
            "maas_revenue_12m_usd": business("business_maas_revenue_12m_usd"),
            "monthly_active_users": business("business_monthly_active_users"),
            "monthly_revenue_usd": business("business_monthly_revenue_usd"),
        }),
        teams=_rows(con, "SELECT * FROM marts.monthly_team_usage WHERE month = ? ORDER BY route, team", [first]),
    )


def _has(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?",
                            [schema, table]).fetchall()[0][0])


def add_charts(data: ReportData) -> None:
    from pipeline import charts

    data.charts = {
        "cost_per_task": charts.to_svg(charts.cost_per_task(data.trend_routes)),
        "utilisation": charts.to_svg(charts.utilisation(data.trend_be)),
        "categories": charts.to_svg(charts.self_hosted_categories(data.trend_costs)),
        "rates": charts.to_svg(charts.rates(data.trend_routes)),
        "latency": charts.to_svg(charts.latency(data.trend_routes)),
    }


# ------------------------------------------------------------------ rendering

def verdict(be: dict[str, Any]) -> str:
    cheaper = be["self_hosting_cheaper"]
    if cheaper is None:
        return "No verdict: the month lacks an API cost per accepted task or self-hosted accepted tasks"
    return "Self-hosting was cheaper" if cheaper else "The API was cheaper"


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
    env.globals.update(verdict=verdict)
    return env


def render_html(data: ReportData) -> str:
    if not data.charts:
        add_charts(data)
    return _env().get_template("report.html.j2").render(d=data)


def render_markdown(data: ReportData) -> str:
    import jinja2

    env = _env()
    env.autoescape = False  # Markdown: escaped by the md_cell filter instead
    env.filters["md"] = md_cell
    return env.get_template("report.md.j2").render(d=data)


def md_cell(value: Any) -> str:
    """Text safe in a Markdown table cell: no pipes, no raw HTML."""
    text = str(value)
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
            .replace("\n", " "))


def plain_report(con: duckdb.DuckDBPyConnection, month: str | None) -> str:
    d = gather(con, month)
    be = d.be
    lines = [
        f"costledger report for {d.month}",
        "=" * 40,
        f"Verdict: {verdict(be)}.",
        f"  self-hosted monthly cost      {usd(be['self_hosted_cost_usd'])}",
        f"  self-hosted per accepted task {usd(be['self_hosted_cost_per_accepted_task_usd'], 4)}",
        f"  API cost per accepted task    {usd(be['api_cost_per_accepted_task_usd'], 4)} ({be['api_cost_source'] or 'n/a'})",
        f"  break-even accepted tasks     {count(be['break_even_accepted_tasks'])}",
        f"  self-hosted accepted tasks    {count(be['self_hosted_accepted_tasks'])}",
        f"  self-hosting saving           {usd(be['self_hosting_saving_usd'])}",
        f"  productive utilisation        {pct(be['productive_utilisation'])}",
        f"  break-even utilisation        {pct(be['break_even_utilisation'])}",
        "",
        "Routes:",
    ]
    for r in d.routes:
        lines.append(
            f"  {r['route']:12} {r['requests']:>7,} requests  {r['tasks']:>6,} tasks  {r['accepted_tasks']:>6,} accepted  "
            f"cost {usd(r['cost_usd'])} ({r['cost_basis']})  per accepted task {usd(r['cost_per_accepted_task_usd'], 4)}  "
            f"cache hits {pct(r['cache_hit_rate'])}  p95 {ms(r['p95_latency_ms'])}  SLO violations {r['latency_violations']}"
        )
    if d.reconciliation:
        lines += ["", "Invoice reconciliation:"]
        for r in d.reconciliation:
            lines.append(f"  {r['provider']:12} invoiced {usd(r['invoiced_usd'])}  metered {usd(r['metered_usd'])}  "
                         f"difference {usd(r['difference_usd'])}  {r['status']}")
    return "\n".join(lines)
