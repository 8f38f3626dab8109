"""What the verdict rests on and what it leaves aside, in the report's words: one sentence per caveat of
``marts.monthly_break_even.verdict_caveats`` (its meaning as ``staging.stg_ledger__caveats`` declares it; two with
the figures of the clusters they name), the data a month without an API price lacks, the clusters that sat idle, and
the control requirements that make self-hosting a requirement whatever the cost."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.base.text import count, counted, ms, pct, usd
from pipeline.serve.records import BreakEvenMonth

if TYPE_CHECKING:
    from pipeline.serve.reportdata import ReportData


def caveat_sentences(d: "ReportData") -> list[str]:
    named = {"sweep_optimistic": _sweep_optimistic, "cluster_logs_incomplete": _logs_incomplete}
    return [named[c](d) if c in named else d.caveat_meanings.get(c, c) for c in d.be.verdict_caveats or []]


def _logs_incomplete(d: "ReportData") -> str:
    """The cluster_logs_incomplete caveat with each short cluster's tokens (marts.monthly_engine_reconciliation)."""
    parts = [
        f"cluster {e.cluster_id}'s request log holds {count(e.logged_tokens)} tokens of the "
        f"{count(e.engine_tokens)} its engines counted ({count(-e.difference)} fewer, "  # type: ignore[operator]
        f"{pct(-e.difference_pct / 100 if e.difference_pct is not None else None, 1)})"
        for e in d.engines
        if e.status == "logs_missing"
    ]
    if not parts:
        return d.caveat_meanings.get("cluster_logs_incomplete", "cluster_logs_incomplete")
    return (
        f"Requests went unlogged: {'; '.join(parts)}. The cluster did more work than these figures show, and its "
        "cost per accepted task is overstated until the missing logs are loaded."
    )


def _sweep_optimistic(d: "ReportData") -> str:
    """The sweep_optimistic caveat with each flagged cluster's figures (marts.monthly_utilisation): production near its
    latency limit, or requests queueing in the engines, while the cluster served under half its tested capacity."""
    parts = [_optimistic_part(d, u) for u in d.utilisation if u.get("sweep_optimistic")]
    if not parts:
        return d.caveat_meanings.get("sweep_optimistic", "sweep_optimistic")
    return (
        f"The load test overstates what the cluster serves: {'; '.join(parts)}. Production strains far below the "
        "tested capacity: load-test the cluster again at production's mix before trusting the utilisation figures."
    )


def _optimistic_part(d: "ReportData", u: dict) -> str:
    nodes = counted(u["nodes_in_service"], "node")
    slo = int(d.setting("slo_ms_self_hosted") or 0)
    headroom = float(d.setting("capacity_latency_headroom") or 0)
    near = bool(slo) and u["accepted_p95_latency_ms"] is not None and u["accepted_p95_latency_ms"] > headroom * slo
    said = []
    if near or not u.get("queue_pressure"):
        said.append(
            f"accepted tasks took {ms(u['accepted_p95_latency_ms'])} at the 95th percentile against a {ms(slo)} "
            f"target, while its busiest hour used {pct(u['peak_hour_share_of_capacity'])} of the capacity its load "
            f"test gives its {nodes}"
        )
    if u.get("queue_pressure"):
        said.append(
            f"serving engines queued requests in an hour in which it served under half the capacity its load test "
            f"gives its {nodes}"
        )
    return f"cluster {u['cluster_id']}'s " + ", and its ".join(said)


#: the control requirements a team may name (business.control_requirements), in the report's words
CONTROL_WORDS = {
    "data_residency": "data residency",
    "isolation": "isolation from other tenants",
    "fine_tuning": "fine-tuning the model",
    "latency_floor": "a latency floor the API cannot promise",
    "guaranteed_capacity": "guaranteed capacity",
    "version_control": "control over the model version",
}


def control_sentence(be: BreakEvenMonth) -> str | None:
    """Beside the verdict, when the settings name why the team must run the model itself: the verdict weighs cost
    alone, and a negative saving is the price of that control this month."""
    needs = be.control_requirements or []
    if not needs:
        return None
    named = [CONTROL_WORDS.get(n, n) for n in needs]
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    text = f"Self-hosting is required for {listed}; the verdict weighs cost alone."
    saving = be.saving_usd
    if saving is not None and saving < 0:
        text += (
            f" Strategic control can justify a higher price: the price of that control this month is {usd(-saving, 0)}."
        )
    return text


def idle_cluster_sentences(d: "ReportData") -> list[str]:
    """One sentence per cluster that used less of its capacity than [clusters] idle_warning (marts.
    monthly_cluster_economics.is_idle), with the dollars its idle capacity cost: one idle cluster must not
    disappear into the month's total."""
    return [
        f"Cluster {u['cluster_id']} used {pct(u['token_utilisation'])} of its capacity: "
        f"{usd(u['idle_cost_usd'], 0)} of its {usd(u['fixed_cost_usd'], 0)} fixed cost bought capacity nothing used."
        for u in d.utilisation
        if u.get("is_idle")
    ]


def bursty_sentence(d: "ReportData") -> str | None:
    """One line when a cluster's busiest hour carried more than [planning] bursty_ratio times its average hour
    (marts.monthly_cluster_economics.is_bursty): a cluster is sized for its peak, and the rest of its capacity waits."""
    bursty = [u for u in d.utilisation if u.get("is_bursty")]
    if not bursty:
        return None
    parts = [
        f"cluster {u['cluster_id']}'s busiest hour carried {u['peak_to_average_tokens']:.1f} times its average hour's "
        f"tokens, so sized for that hour it can use at most {pct(u['max_token_utilisation_at_peak'], 0)} of its "
        "capacity"
        for u in bursty
    ]
    return (
        f"The month was bursty: {'; '.join(parts)}. A large model takes many minutes to load, so a cluster cannot "
        "scale up for an hour: the rest of its capacity waits for peaks."
    )


def no_api_price_cause(d: "ReportData") -> str:
    """Why a month has no API cost per accepted task to compare with, naming the cause the figures show."""
    be, m = d.be, d.month
    api_accepted = sum(r.accepted_tasks or 0 for r in d.routes if r.route == "api")
    if not any(r.requests for r in d.routes):  # outcomes cannot help a month without a request log
        return (
            f"No request was logged in {m} on either route: the ledger prices tasks from the request logs "
            "(requests/), and none holds a request of this month, so there is no cost per accepted task to compare."
        )
    if not api_accepted and not be.self_hosted_accepted_tasks:
        return (
            f"No task was accepted in {m} on either route: the ledger learns which tasks were accepted from "
            "outcomes files (outcomes/) or an accepted column in the request log, and none says so for this month, "
            "so there is no cost per accepted task to compare."
        )
    provider, model = d.setting("reference_api_provider"), d.setting("reference_api_model")
    unpriced = f"could not be priced at the reference API ({provider} {model}: no price of it in force)"
    if api_accepted:  # the API's own cost measures nothing when none of its requests has a price or an invoice
        cluster = (
            f"the cluster's accepted attempts {unpriced}"
            if be.self_hosted_accepted_tasks
            else "the cluster accepted no task to price at the reference API"
        )
        tasks = counted(api_accepted, "task")
        return (
            f"The API route accepted {tasks} in {m}, but none of its requests has a price in force and no invoice of "
            f"their providers covers the month, so what the API costs cannot be measured; and {cluster}, so "
            "break-even cannot be computed (load the prices, or the providers' invoices)."
        )
    return (
        f"The API route accepted no task in {m}, and the cluster's accepted attempts {unpriced}, so break-even "
        "cannot be computed (load its price, or set [reference_api] to a priced model)."
    )
