"""Report charts: Vega-Lite specs (altair) rendered to inline SVG by vl-convert, offline.

The rows come from the marts as they are; this module only draws them. Money and
rates become floats here for plotting only (never for a figure anyone reads as a
number: the tables carry those).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import altair as alt

from pipeline.serve.planning import as_run_words, size_marks
from pipeline.serve.records import PlanRow

WIDTH, HEIGHT = 460, 220
ROUTE_COLOURS = alt.Scale(domain=["api", "self_hosted"], range=["#1f77b4", "#d62728"])


def _plain(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in rows:
        out.append(
            {k: (float(v) if isinstance(v, Decimal) else (str(v)[:7] if k == "month" else v)) for k, v in r.items()}
        )
    return out


def _configured(chart: alt.TopLevelMixin) -> str:
    """The chart's Vega-Lite JSON: axis and legend text of at least 11 px, legends that tell the series apart."""
    return (
        chart.configure_axis(labelFontSize=11, titleFontSize=12)
        .configure_legend(labelFontSize=11, titleFontSize=12, orient="bottom", labelLimit=420)
        .configure_title(fontSize=13)
        .to_json()
    )


#: the process that draws the charts: vl-convert's V8 engine reserves more than 64 GB of address space at start, and
#: ends its process with SIGTRAP when a lower limit (``ulimit -v``) refuses it; drawn in a process of its own, a
#: renderer that cannot start leaves the report without charts, never without a report. It takes the limit's hard
#: value where only the soft one is lower.
_RENDERER = """
import json, resource, sys
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
if soft != hard:
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
import vl_convert
out = {}
for name, spec in json.load(sys.stdin).items():
    svg = vl_convert.vegalite_to_svg(spec)
    out[name] = svg[svg.index("<svg"):]  # no XML prolog: the SVG sits inline in HTML
json.dump(out, sys.stdout)
"""


def render_all(charts: dict[str, alt.TopLevelMixin]) -> tuple[dict[str, str], str | None]:
    """Each chart as inline SVG, all drawn in one process of their own (``_RENDERER``): (the SVGs by name, or none
    and why they were left out)."""
    import json
    import resource
    import signal
    import subprocess
    import sys

    if not charts:
        return {}, None
    specs = json.dumps({name: _configured(chart) for name, chart in charts.items()})
    done = subprocess.run(
        [sys.executable, "-c", _RENDERER], input=specs, capture_output=True, text=True, timeout=600, check=False
    )
    if done.returncode == 0:
        return json.loads(done.stdout), None
    how = f"signal {signal.Signals(-done.returncode).name}" if done.returncode < 0 else f"exit {done.returncode}"
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    limit = (
        f"; its engine reserves more address space than the {hard / 2**30:,.0f} GiB this process may use (ulimit -v)"
        if hard != resource.RLIM_INFINITY
        else ""
    )
    return {}, f"The charts were left out: the chart renderer ended with {how}{limit}"


def saving(rows: list[dict[str, Any]]) -> alt.Chart:
    """What self-hosting saved (above zero) or cost (below) each month against sending the same tasks to the API."""
    data = [
        {"month": r["month"], "saving": r["saving_usd"], "side": "saved" if r["saving_usd"] >= 0 else "cost"}
        for r in _plain(rows)
        if r.get("saving_usd") is not None
    ]
    return (
        alt.Chart(alt.Data(values=data), title="What self-hosting saved (+) or cost (-) each month, USD")
        .mark_bar()
        .encode(
            x=alt.X("month:O", title="month"),
            y=alt.Y("saving:Q", title="USD against the API"),
            color=alt.Color(
                "side:N", scale=alt.Scale(domain=["saved", "cost"], range=["#1b7f3b", "#b42318"]), title=None
            ),
            tooltip=["month:O", "saving:Q"],
        )
        .properties(width=WIDTH * 2, height=140)
    )


def cost_per_task(rows: list[dict[str, Any]]) -> alt.Chart:
    data = [r for r in _plain(rows) if r["cost_per_accepted_task_usd"] is not None]
    # a linear axis: a log scale would flatten a 200x gap between the routes without saying so
    return (
        alt.Chart(alt.Data(values=data), title="Cost per accepted task (USD)")
        .mark_line(point=True)
        .encode(
            x=alt.X("month:O", title="month"),
            y=alt.Y("cost_per_accepted_task_usd:Q", title="USD per accepted task"),
            color=alt.Color("route:N", scale=ROUTE_COLOURS, title="route"),
            tooltip=["month:O", "route:N", "cost_per_accepted_task_usd:Q"],
        )
        .properties(width=WIDTH, height=HEIGHT)
    )


def utilisation(rows: list[dict[str, Any]]) -> alt.Chart:
    """Two shares of the month's token capacity: the tokens served (token utilisation, the duty cycle) and the
    break-even volume. Hours-based productive utilisation is another measure and stays in the table."""
    long = []
    for r in _plain(rows):
        for key, label in (
            ("token_utilisation", "tokens served (token utilisation)"),
            ("break_even_share_of_capacity", "break-even volume"),
        ):
            if r.get(key) is not None:
                long.append({"month": r["month"], "series": label, "value": r[key]})
    return (
        alt.Chart(alt.Data(values=long), title="Share of the cluster's token capacity at the latency target")
        .mark_line(point=True)
        .encode(
            x=alt.X("month:O"),
            y=alt.Y("value:Q", title="share of token capacity", axis=alt.Axis(format="%")),
            color=alt.Color("series:N", scale=alt.Scale(range=["#2ca02c", "#d62728"]), title=None),
            strokeDash=alt.StrokeDash("series:N", title=None),
            shape=alt.Shape("series:N", title=None),
        )
        .properties(width=WIDTH, height=HEIGHT)
    )


def self_hosted_categories(rows: list[dict[str, Any]]) -> alt.Chart:
    data = _plain(rows)
    return (
        alt.Chart(alt.Data(values=data), title="Self-hosted cost by category (USD)")
        .mark_bar()
        .encode(
            x=alt.X("month:O"),
            y=alt.Y("sum(amount_usd):Q", title="USD", stack="zero"),
            color=alt.Color(
                "category:N", scale=alt.Scale(scheme="tableau20"), legend=alt.Legend(orient="right", labelLimit=320)
            ),
            tooltip=["month:O", "category:N", "sum(amount_usd):Q"],
        )
        .properties(width=WIDTH, height=HEIGHT)
    )


def rates(rows: list[dict[str, Any]]) -> alt.HConcatChart:
    """Acceptance and cache-hit rates as percentages; retries per task as a number (0.19 retries per task, not 19 %)."""
    data = _plain(rows)

    def panel(key: str, title: str, fmt: str) -> alt.Chart:
        values = [{"month": r["month"], "route": r["route"], "value": r[key]} for r in data if r[key] is not None]
        return (
            alt.Chart(alt.Data(values=values), title=title)
            .mark_line(point=True)
            .encode(
                x=alt.X("month:O"),
                y=alt.Y("value:Q", title=None, axis=alt.Axis(format=fmt)),
                color=alt.Color("route:N", scale=ROUTE_COLOURS, title="route"),
            )
            .properties(width=200, height=160)
        )

    return alt.hconcat(
        panel("acceptance_rate", "Acceptance rate", "%"),
        panel("cache_hit_rate", "Cache-hit rate (of input tokens)", "%"),
        panel("retry_rate", "Retries per task", ".2f"),
    ).properties(title="Acceptance, cache hits and retries per route")


def latency(rows: list[dict[str, Any]], slo_ms: dict[str, int | None] | None = None) -> alt.HConcatChart:
    long = []
    for r in _plain(rows):
        for key in ("p50_latency_ms", "p95_latency_ms"):
            if r[key] is not None:
                long.append({"month": r["month"], "route": r["route"], "percentile": key[:3], "seconds": r[key] / 1000})
    lines = (
        alt.Chart(alt.Data(values=long), title="Latency (s); dotted: the latency target")
        .mark_line(point=True)
        .encode(
            x="month:O",
            y=alt.Y("seconds:Q"),
            color=alt.Color("route:N", scale=ROUTE_COLOURS, title="route"),
            # one line per route and percentile, told apart by their points' shape (one legend, not two)
            detail="percentile:N",
            shape=alt.Shape("percentile:N", title="percentile", scale=alt.Scale(range=["circle", "square"])),
        )
        .properties(width=300, height=HEIGHT)
    )
    slos = [{"route": route, "seconds": v / 1000} for route, v in (slo_ms or {}).items() if v]
    if slos:
        rule = (
            alt.Chart(alt.Data(values=slos))
            .mark_rule(strokeDash=[2, 3], strokeWidth=2)
            .encode(y="seconds:Q", color=alt.Color("route:N", scale=ROUTE_COLOURS))
        )
        lines = alt.layer(lines, rule)
    bars = (
        alt.Chart(alt.Data(values=_plain(rows)), title="Accepted attempts over the latency target")
        .mark_bar()
        .encode(
            x=alt.X("month:O"),
            xOffset="route:N",
            y=alt.Y("latency_violations:Q", title="tasks"),
            color=alt.Color("route:N", scale=ROUTE_COLOURS),
        )
        .properties(width=240, height=HEIGHT)
    )
    return alt.hconcat(lines, bars)


HYBRID_PARTS = (
    ("cluster_cost_usd", "nodes"),
    ("operating_cost_usd", "operating cost"),
    ("api_run_rate_usd", "the API's own work"),
    ("api_overflow_cost_usd", "the cluster's tasks on the API"),
    ("review_usd", "human review"),
)


def hybrid_plan(plan: list[PlanRow]) -> alt.LayerChart:
    """The month's cost at each cluster size, in its parts, beside the month as it was (its bar first, named
    'today, as run'), the cheapest size and today's named above their bars."""
    data = _plain([r.as_row() for r in plan])
    marked = {r.nodes: size_marks(r) for r in plan if r.scenario == "plan"}

    def size(r: dict[str, Any]) -> str:
        return "today, as run" if r["scenario"] == "today" else str(r["nodes"])

    order = [size(r) for r in data if r["scenario"] == "today"] + [size(r) for r in data if r["scenario"] == "plan"]
    parts = [
        {"nodes": size(r), "part": label, "usd": r[key], "order": i}
        for r in data
        for i, (key, label) in enumerate(HYBRID_PARTS)
        if r[key] is not None
    ]
    marks = [
        {
            "nodes": size(r),
            "total": r["total_usd"],
            "mark": (
                as_run_words(r["nodes"], r["self_hosted_token_share"])
                if r["scenario"] == "today"
                else marked[r["nodes"]]
            ),
        }
        for r in data
        if r["total_usd"] is not None
    ]
    bars = (
        alt.Chart(alt.Data(values=parts), title="The month's cost at each cluster size, USD")
        .mark_bar()
        .encode(
            x=alt.X("nodes:O", title="nodes (0 = everything on the API)", sort=order, axis=alt.Axis(labelAngle=0)),
            y=alt.Y("usd:Q", title="USD for the month", stack="zero"),
            color=alt.Color(
                "part:N",
                scale=alt.Scale(
                    domain=[label for _, label in HYBRID_PARTS],
                    range=["#d62728", "#ff9896", "#1f77b4", "#aec7e8", "#c7c7c7"],
                ),
                title=None,
            ),
            order=alt.Order("order:Q"),
            tooltip=["nodes:O", "part:N", "usd:Q"],
        )
    )
    labels = (
        alt.Chart(alt.Data(values=marks))
        .mark_text(dy=-8, fontSize=12, fontWeight="bold")
        .encode(x=alt.X("nodes:O", sort=order), y=alt.Y("total:Q", stack=None), text="mark:N")
    )
    return alt.layer(bars, labels).properties(width=WIDTH, height=HEIGHT)


def break_even_curve(rows: list[dict[str, Any]]) -> alt.LayerChart:
    """What one accepted task costs on the cluster at each token utilisation (one line), the API's cost (a
    horizontal line), and three marks: today's utilisation, the break-even utilisation and the ceiling the busiest
    hour sets."""
    data = [{**r, "u": r["token_utilisation"]} for r in _plain(rows)]
    first = data[0]
    marks = [
        {"u": first[key], "mark": label}
        for key, label in (
            ("today_token_utilisation", "today"),
            ("break_even_token_utilisation", "break-even"),
            ("ceiling_token_utilisation", "ceiling at the busiest hour"),
        )
        if first[key] is not None and first[key] <= 1
    ]
    x = alt.X("u:Q", title="share of the cluster's token capacity used", axis=alt.Axis(format="%"),
              scale=alt.Scale(domain=[0, 1]))  # fmt: skip
    line = (
        alt.Chart(alt.Data(values=data), title="What one accepted task costs at each utilisation, USD")
        .mark_line(color="#d62728", point=True)
        .encode(
            x=x,
            y=alt.Y(
                "self_hosted_cost_per_accepted_task_usd:Q", title="USD per accepted task", scale=alt.Scale(type="log")
            ),
            tooltip=["u:Q", "self_hosted_cost_per_accepted_task_usd:Q", "accepted_tasks:Q"],
        )
    )
    api = (
        alt.Chart(alt.Data(values=[{"c": first["api_cost_per_accepted_task_usd"], "label": "the API"}]))
        .mark_rule(color="#1f77b4", strokeWidth=2)
        .encode(y="c:Q", tooltip=["label:N", "c:Q"])
    )
    rules = (
        alt.Chart(alt.Data(values=marks))
        .mark_rule(strokeDash=[4, 3], color="#555")
        .encode(x="u:Q", tooltip=["mark:N", alt.Tooltip("u:Q", format=".1%")])
    )
    # one label per mark, each on its own line at the top, so that marks close together stay readable
    labels = [
        alt.Chart(alt.Data(values=[m]))
        .mark_text(align="left", dx=3, dy=4 + 14 * i, fontSize=11, baseline="top")
        .encode(x="u:Q", y=alt.value(0), text="mark:N")
        for i, m in enumerate(marks)
    ]
    return alt.layer(line, api, rules, *labels).properties(width=WIDTH, height=HEIGHT)
