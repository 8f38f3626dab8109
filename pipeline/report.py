"""The plain-text monthly report: the marts' figures for one month, formatted, never recomputed.

Rounding happens here and only here, for display.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import duckdb


class ReportError(ValueError):
    pass


def usd(value: Decimal | None, places: int = 2) -> str:
    if value is None:
        return "n/a"
    q = Decimal(1).scaleb(-places)
    return f"${value.quantize(q, rounding=ROUND_HALF_UP):,}"


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def count(value: Decimal | int | None) -> str:
    if value is None:
        return "n/a"
    return f"{Decimal(value).quantize(Decimal(1), rounding=ROUND_HALF_UP):,}"


def resolve_month(con: duckdb.DuckDBPyConnection, month: str | None) -> str:
    months = [str(r[0])[:7] for r in con.execute("SELECT month FROM marts.monthly_break_even ORDER BY month").fetchall()]
    if not months:
        raise ReportError("the ledger has no months yet: load data and run `costledger build`")
    if month is None:
        return months[-1]
    if month not in months:
        raise ReportError(f"month {month} is not in the ledger (months: {', '.join(months)})")
    return month


def plain_report(con: duckdb.DuckDBPyConnection, month: str | None) -> str:
    m = resolve_month(con, month)
    first = f"{m}-01"
    be = con.execute(
        """SELECT self_hosted_cost_usd, api_cost_per_accepted_task_usd, api_cost_source, break_even_accepted_tasks,
                  self_hosted_accepted_tasks, self_hosting_cheaper, productive_utilisation, break_even_utilisation
           FROM marts.monthly_break_even WHERE month = CAST(? AS DATE)""",
        [first],
    ).fetchone()
    assert be is not None
    (sh_cost, api_cpt, api_src, be_tasks, sh_acc, cheaper, util, be_util) = be
    routes = con.execute(
        """SELECT route, requests, tasks, accepted_tasks, cost_usd, cost_basis, cost_per_accepted_task_usd,
                  cache_hit_rate, p95_latency_ms, latency_violations
           FROM marts.monthly_route_cost WHERE month = CAST(? AS DATE) ORDER BY route""",
        [first],
    ).fetchall()
    recon = con.execute(
        "SELECT provider, invoiced_usd, metered_usd, difference_usd, status FROM marts.monthly_reconciliation "
        "WHERE month = CAST(? AS DATE) ORDER BY provider",
        [first],
    ).fetchall()
    verdict = {True: "self-hosting was CHEAPER", False: "the API was CHEAPER", None: "no verdict (missing figures)"}[cheaper]
    lines = [
        f"costledger report for {m}",
        "=" * 40,
        f"Verdict: {verdict}.",
        f"  self-hosted monthly cost      {usd(sh_cost)}",
        f"  API cost per accepted task    {usd(api_cpt, 4)} ({api_src or 'n/a'})",
        f"  break-even accepted tasks     {count(be_tasks)}",
        f"  self-hosted accepted tasks    {count(sh_acc)}",
        f"  productive utilisation        {pct(util)}",
        f"  break-even utilisation        {pct(be_util)}",
        "",
        "Routes:",
    ]
    for route, req, tasks, acc, cost, basis, cpt, hit, p95, viol in routes:
        lines.append(
            f"  {route:12} {req:>7,} requests  {tasks:>6,} tasks  {acc:>6,} accepted  cost {usd(cost)} ({basis})  "
            f"per accepted task {usd(cpt, 4)}  cache hits {pct(hit)}  p95 {p95 if p95 is not None else 'n/a'} ms  "
            f"SLO violations {viol}"
        )
    if recon:
        lines += ["", "Invoice reconciliation:"]
        for provider, inv, met, diff, status in recon:
            lines.append(f"  {provider:12} invoiced {usd(inv)}  metered {usd(met)}  difference {usd(diff)}  {status}")
    return "\n".join(lines)
