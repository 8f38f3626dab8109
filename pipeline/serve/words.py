"""What the report says in words: the verdict, the headline, the four break-even questions, the
steps from capacity to cost, the glossary and the decisions ahead, each from the figures ``gather`` read.

Nothing here computes a figure: a sentence takes the marts' values and formats them (``pipeline.base.text``), once,
for display.
"""

from __future__ import annotations

from decimal import Decimal

from typing import TYPE_CHECKING, Any

from pipeline.serve.decisions import actions, cheapest_size, scenario_row
from pipeline.serve.caveats import (
    bursty_sentence,
    caveat_sentences,
    control_sentence,
    idle_cluster_sentences,
    no_api_price_cause,
)
from pipeline.serve.planning import curve_sentence, gate_headline, gate_sentence, moves_sentence, plan_sentences
from pipeline.base.text import count, counted, pct, usd
from pipeline.serve.records import BreakEvenMonth

if TYPE_CHECKING:
    from pipeline.serve.reportdata import ReportData


#: how a route's cost was found, in words (monthly_route_cost.cost_basis)
BASIS_WORDS = {"invoice": "invoices", "metered": "logs x prices", "cluster_billing": "cluster bills + review"}

#: where the API cost per accepted task used for break-even comes from, in words (api_cost_source)
BASIS_OF_C = {"equivalent": "priced from the cluster's own tasks", "measured": "the API route's own tasks"}
#: where capacity comes from, in words (capacity_source)
SOURCE_WORDS = {
    "sweep": "load tests",
    "observed": "the request log (a lower bound)",
    "mixed": "the request log, then load tests",
    "observed_above_sweep": "the request log, where production beat the load tests",
}


def _verdict_said(d: "ReportData", name: str | None, form: str, otherwise: str) -> str:
    """A verdict in one of the report's forms (``headline``, ``in_a_sentence``, ``in_a_table``: the columns of
    staging.stg_ledger__verdicts); ``otherwise`` where the ledger does not declare it."""
    return d.verdict_words.get(name or "", {}).get(form, otherwise)


def verdict(d: "ReportData") -> str:
    """The month's verdict as the headline says it."""
    return _verdict_said(d, d.be.verdict, "headline", "No verdict")


def _verdict_in_a_sentence(d: "ReportData", name: str | None) -> str:
    """A verdict inside a sentence; its name where the ledger does not declare it."""
    return _verdict_said(d, name, "in_a_sentence", name or "no verdict")


def _slo(d: "ReportData", word: str) -> str:
    """' at the 300 s latency target' (``word`` before it), or nothing when no latency target is set."""
    v = d.setting("slo_ms_self_hosted")
    return f" {word} the {int(v) / 1000:g} s latency target" if v else ""


def unpriced_sentence(d: "ReportData") -> str | None:
    """The month's API requests priced at nothing, named as such (they are missing from the metered cost)."""
    rows = [r for r in d.reconciliation if r.unpriced_requests]
    if not rows:
        return None
    which = ", ".join(f"{count(r.unpriced_requests)} of {r.provider}" for r in rows)
    return (
        f"Unpriced API requests (no price for their provider, model and time): {which}. They are left out of the "
        "metered cost, so the API figures are understated until a price is loaded."
    )


def latency_sentence(d: "ReportData") -> str | None:
    """The share of the API's accepted tasks whose latency is unknown: the SLO could not be checked for them."""
    share = d.be.api_latency_unknown_share
    if not share:
        return None
    return (
        f"The latency target could not be checked for {pct(share, 0)} of the tasks the API delivered: their responses "
        "carry no latency, so they count as delivered on their outcome alone."
    )


def headline(d: "ReportData") -> list[str]:
    """The first screen, in words a CFO can act on: the same sentences in HTML, Markdown and text."""
    extra = (
        control_sentence(d.be),
        saving_sentence(d),
        fixed_cost_sentence(d.be),
        *idle_cluster_sentences(d),
        *actions(d.counterfactual, too_close_to_call(d.be), d.be.nodes_in_service, gate_state(d)),
        bursty_sentence(d),
        robustness_sentence(d),
        forecast_sentence(d),
        unpriced_sentence(d),
        latency_sentence(d),
    )
    return _headline(d) + [line for line in extra if line] + caveat_sentences(d)


def forecast_sentence(d: "ReportData", already_above: bool = False) -> str | None:
    """When the cluster's volume reaches break-even if its trend holds (marts.monthly_forecast); with
    ``already_above``, also a sentence for a month already at or above it (the first screen's verdict says so)."""
    f = d.forecast
    if f is None or f.forecast_status in ("too_few_months", "no_break_even"):
        return None
    if f.forecast_status == "already_above":
        if not already_above:
            return None
        if f.trend_monthly_growth is None:  # above with fewer than 4 months: no trend to state
            return "The cluster already delivers its break-even volume."
        growth = f"{f.trend_monthly_growth:+.0%} a month over the last {f.months_fitted} months"
        return f"The cluster already delivers its break-even volume; its volume grew {growth}."
    trend = (
        f"{f.trend_monthly_growth:+.0%} a month over the last {f.months_fitted} months; 95 % interval "
        f"{f.trend_monthly_growth_low:+.0%} to {f.trend_monthly_growth_high:+.0%}"
    )
    earliest, latest = (str(m)[:7] if m is not None else None for m in (f.earliest_month, f.latest_month))
    span = ""
    if earliest is not None and earliest != latest:
        span = f" The soonest it could is {earliest}; " + (
            f"by {latest} it is likely." if latest else "within 12 months it is not likely."
        )
    if f.forecast_status == "not_growing":
        return f"The cluster's volume is not growing ({trend}): if the trend continues, it does not reach break-even."
    if f.forecast_status == "beyond_12_months":
        more = "the cluster's volume takes more than 12 months to reach break-even."
        return f"If the trend continues ({trend}), {more}{span}"
    when = str(f.projected_month)[:7]
    return f"If the trend continues ({trend}), the cluster's volume reaches break-even in {when}.{span}"


def saving_sentence(d: "ReportData") -> str | None:
    """The month's saving (or cost) in dollars against sending the same accepted work to the API."""
    be = d.be
    if be.saving_usd is None or be.verdict in ("no_self_hosted_route", "no_api_price"):
        return None
    if too_close_to_call(be):  # the first line gave the saving and its range
        return f"Sending the same accepted tasks to the API would have cost {usd(be.api_would_have_cost_usd, 0)}."
    saved = be.saving_usd
    what = "saved" if saved >= 0 else "cost"
    low, high = be.saving_range_low_usd, be.saving_range_high_usd
    # a verdict that an assumption turns never gets a bare figure: the range under the named assumptions with it
    ranged = (
        f" (between {_signed(low)} and {_signed(high)} under the named assumptions taken together)"
        if low is not None and high is not None and be.verdict_confidence in ("marginal", "fragile")
        else ""
    )
    return (
        f"Self-hosting {what} {usd(abs(saved), 0)} this month{ranged} against sending the same accepted tasks to the "
        f"API, which would have charged {usd(be.api_would_have_cost_usd, 0)} for them."
    )


def _signed(amount: Any) -> str:
    """A saving with its sign: +$4,700 saved, -$6,700 a cost."""
    return ("+" if amount >= 0 else "-") + usd(abs(amount), 0)


#: what each named assumption of marts.monthly_verdict_sensitivity means, for a reader
ASSUMPTIONS = {
    "api_waste_factor": "the API's spend on failures and retries at either end of its 95 % interval",
    "hardware_life": "hardware lasting two thirds or four thirds as long",
    "compute_hour_price": "node-hour and GPU-hour prices 20 % lower or higher",
    "api_cache_hit_rate": "the cluster's requests at the API's own cache-hit rate",
    "review_rate": "the review rate 20 % lower or higher on both routes",
}


def _assumption(name: str, d: "ReportData") -> str:
    if name.startswith("reference_provider:"):
        return f"{name.split(':', 1)[1]}'s price list instead of the reference provider's"
    if name == "operating_cost":
        share = Decimal(d.setting("robustness_operating_cost_share") or "0.20")
        return f"operating costs {share * 100:.0f} % lower or higher"  # written as the other assumptions are
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
    return [
        {
            "assumption": _assumption(r["assumption"], d),
            "low": _value(r["assumption"], r["value_low"]),
            "high": _value(r["assumption"], r["value_high"]),
            "break_even_low": r["break_even_at_low_value"],
            "break_even_high": r["break_even_at_high_value"],
            "verdict_low": _verdict_said(d, r["verdict_at_low_value"], "in_a_table", r["verdict_at_low_value"]),
            "verdict_high": _verdict_said(d, r["verdict_at_high_value"], "in_a_table", r["verdict_at_high_value"]),
            "flips": r["flips"],
        }
        for r in d.be.verdict_sensitivity or []
    ]


def robustness_sentence(d: "ReportData") -> str | None:
    """How far the month is from break-even, and which named assumptions would turn the verdict."""
    be = d.be
    if be.verdict_confidence is None or be.verdict_margin is None:
        return None
    side = "above" if be.verdict_margin >= 0 else "below"
    margin = f"The month is {pct(abs(be.verdict_margin), 1)} {side} break-even"
    flipped = be.verdict_flipped_by or []
    if be.verdict_confidence == "robust":
        return f"{margin}; the verdict holds under every assumption tested, alone and together (robust)."
    if not flipped:
        return (
            f"{margin}: a marginal verdict. No assumption alone turns it, but the named assumptions taken together "
            "at their worst ends do."
        )
    names = [_assumption(a, d) for a in flipped]
    listed = names[0] if len(names) == 1 else "; ".join(names[:-1]) + "; or " + names[-1]
    return f"{margin}: a fragile verdict. It turns with {listed}."


#: what would settle a verdict that a named assumption turns: the measurement that replaces the assumption
SETTLES = {
    "api_waste_factor": "more accepted API tasks, to measure what the API spends on retries",
    "hardware_life": "the hardware's expected service life",
    "compute_hour_price": "the node-hour price of the next term",
    "operating_cost": "the operating costs as billed",
    "review_rate": "the review time measured on both routes",
    "api_cache_hit_rate": "the cache-hit rate this traffic would get on the API",
    "invoice_uplift": "the invoice's token quantities or the provider's usage export",
}


def gate_state(d: "ReportData") -> tuple[str, str] | None:
    """The latest deployment gate's evaluation set and verdict, when the ledger has one."""
    return (d.gate.verdict.eval_set, d.gate.verdict.verdict) if d.gate is not None else None


def too_close_to_call(be: Any) -> bool:
    """The month's verdict is stated as too close to call (marts.monthly_break_even.verdict_stated, set in SQL: one
    named assumption turns it and the saving's range runs from a cost to a saving)."""
    return be.verdict_stated == "too_close_to_call"


def _too_close(d: "ReportData") -> list[str]:
    be = d.be
    what = "saved" if be.saving_usd >= 0 else "cost"
    settles = list(
        dict.fromkeys(
            "which API provider the work would go to" if a.startswith("reference_provider:") else SETTLES.get(a, a)
            for a in be.verdict_flipped_by or []
        )
    )
    return [
        f"Too close to call in {d.month}: self-hosting {what} {usd(abs(be.saving_usd), 0)} against the API, but "
        f"under the named assumptions the figure runs from {_signed(be.saving_range_low_usd)} to "
        f"{_signed(be.saving_range_high_usd)}.",
        f"What would settle it: {'; '.join(settles)}.",
    ]


def _api_only(d: "ReportData") -> str:
    """A month without a cluster: what the API cost, or what the ledger lacks to say what an accepted task cost."""
    m, per_task = d.month, d.be.api_measured_cost_per_accepted_task_usd
    api = next((r for r in d.routes if r.route == "api"), None)
    spent = (
        f"; the API cost {usd(api.cost_usd)} for {count(api.requests)} requests"
        if api is not None and api.cost_usd is not None and api.requests
        else ""
    )
    if per_task is None and (api is None or not api.requests):  # invoices or usage exports alone
        return (
            f"The ledger has no cluster cost and no self-hosted requests for {m}{spent}, and no API request is "
            "logged either, so what an accepted task cost is not known: load the request logs (requests/) and "
            "the tasks' outcomes."
        )
    if per_task is None:  # no outcomes (a gateway's logs alone): the spend is what is known, said first
        return (
            f"The ledger has no cluster cost and no self-hosted requests for {m}{spent}. No task is known to be "
            "accepted, so what an accepted task cost is not known: load the tasks' outcomes (an outcomes/ "
            "folder, or an accepted column in the request log)."
        )
    return (
        f"The ledger has no cluster cost and no self-hosted requests for {m}{spent}; an accepted task cost "
        f"{usd(per_task, 4)} on the API."
    )


def _headline(d: "ReportData") -> list[str]:
    be, m = d.be, d.month
    v = be.verdict
    out = _too_close(d) if too_close_to_call(be) else [f"{verdict(d)} in {m}."]
    if v == "no_self_hosted_route":
        return out + [_api_only(d)]
    if v == "no_api_price":
        out.append(no_api_price_cause(d))
        return out
    if v == "never_breaks_even":
        out.append(
            f"An accepted task costs {usd(be.api_cost_per_accepted_task_usd, 4)} on the API, no more than the "
            f"{usd(be.self_hosted_variable_cost_per_accepted_task_usd, 4)} per task the cluster spends on review "
            "alone: no volume pays for the cluster."
        )
        return out
    out.append(
        f"Self-hosting breaks even at {count(be.break_even_accepted_tasks)} accepted tasks a month "
        f"(you delivered {count(be.self_hosted_accepted_tasks)})."
    )
    share = be.break_even_share_of_capacity
    if share is None:
        why = (
            "no load-test sweep and no window of the request log within the latency target"
            if be.provisioned_node_hours
            else "no node-hours are billed to give it a capacity per node"
        )
        out.append(
            f"The cluster's capacity{_slo(d, 'at')} is unknown ({why}), so whether that volume fits is not known."
        )
    else:
        lower = (
            " (capacity observed in the request log: a lower bound, so this share is at most this)"
            if be.capacity_source == "observed"
            else ""
        )
        out.append(
            f"That volume is {pct(share, 0)} of the cluster's measured capacity{_slo(d, 'at')} spread evenly{lower}."
        )
        out.append(peak_sentence(be))
    return out


def peak_sentence(be: BreakEvenMonth) -> str:
    """Whether the break-even volume fits the nodes in service at the busiest hour (a cluster cannot scale up for
    an hour: it is sized for its peak)."""
    need, have = be.break_even_nodes_at_peak, be.nodes_in_service
    if need is None or have is None:
        return "Whether it fits at the busiest hour is not known (no accepted self-hosted tasks or no capacity)."
    verdict = "it fits" if need <= have else "it does not fit"
    return (
        f"At the month's busiest hour, the break-even volume would need {counted(need, 'node')} "
        f"with {count(have)} in service: {verdict}."
    )


def fixed_cost_sentence(be: BreakEvenMonth) -> str | None:
    """Where the month's fixed cost went: accepted work, failed work, idle capacity, in dollars (None without a
    capacity to measure them by)."""
    if be.idle_cost_usd is None:
        return None
    return (
        f"Of the {usd(be.fixed_cost_usd, 0)} fixed cost, {usd(be.accepted_work_usd, 0)} bought accepted work, "
        f"{usd(be.failed_work_usd, 0)} went to failed or retried attempts and {usd(be.idle_cost_usd, 0)} went "
        f"to idle capacity ({pct(be.productive_utilisation)} of the capacity went to accepted work)."
    )


def views(d: "ReportData") -> list[dict[str, Any]]:
    """The break-even under each question, side by side (figures from the mart): fully loaded, infrastructure only,
    shutdown (hardware and reservations committed either way) and marginal (only the capacity one can cancel)."""
    be = d.be
    return [
        {
            "view": "fully loaded",
            "cost": be.fixed_cost_usd,
            "includes": "hardware, cluster charges, operating costs",
            "break_even": be.break_even_accepted_tasks,
        },
        {
            "view": "infrastructure only",
            "cost": be.infrastructure_cost_usd,
            "includes": "hardware and cluster charges; operating costs left out, as published planning tables do",
            "break_even": be.infrastructure_break_even_accepted_tasks,
        },
        {
            "view": "shutdown",
            "cost": _add(be.avoidable_cost_usd, be.operating_cost_usd),
            "includes": "cancellable capacity and operating costs: does running the service pay, with the hardware "
            "and reservations committed either way?",
            "break_even": be.shutdown_break_even_accepted_tasks,
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
    "energy": "Energy",
    "other": "Other operating costs",
    "focus_correction": "Cloud bill corrections",
}


def category_label(category: str) -> str:
    if category.startswith("focus_") and category not in CATEGORY_LABELS:
        return "Cloud bill: " + category.removeprefix("focus_").replace("_", " ")
    return CATEGORY_LABELS.get(category, category.replace("_", " "))


def _saving_words(saving: Any) -> str:
    return f"saving {usd(saving, 0)}" if saving >= 0 else f"costing {usd(-saving, 0)}"


def changes(d: "ReportData") -> list[str]:
    """What changed since the month before: the saving, break-even, the verdict, and the largest cost movements."""
    be, before = d.be, d.previous
    if before is None:
        return []
    out = []
    if be.saving_usd is not None and before.saving_usd is not None:
        out.append(
            f"Self-hosting went from {_saving_words(before.saving_usd)} in {str(before.month)[:7]} to "
            f"{_saving_words(be.saving_usd)} in {d.month}."
        )
    if be.break_even_accepted_tasks is not None and before.break_even_accepted_tasks is not None:
        was, now = count(before.break_even_accepted_tasks), count(be.break_even_accepted_tasks)
        out.append(
            (f"Break-even stayed at {now}" if was == now else f"Break-even moved from {was} to {now}")
            + f" accepted tasks; the cluster delivered {count(before.self_hosted_accepted_tasks)}, then "
            f"{count(be.self_hosted_accepted_tasks)}."
        )
    if be.verdict != before.verdict:
        now = "too close to call now" if too_close_to_call(be) else f"{_verdict_in_a_sentence(d, be.verdict)} now"
        out.append(f"The verdict changed: {_verdict_in_a_sentence(d, before.verdict)} before, {now}.")
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
        if r.line_price_mismatches:
            share = r.line_price_mismatch_share
            above = f"{pct(share, 1)} above" if share is not None else "not equal to"
            lines = "line is" if r.line_price_mismatches == 1 else "lines are"
            out.append(
                f"{r.provider}: {r.line_price_mismatches} invoice {lines} {above} quantity x unit price "
                f"({usd(r.line_price_mismatch_usd)} this month): a fee or surcharge its price list lacks, so its "
                "invoice does not match the logs priced at that list."
            )
    return out


def comparator_how(d: "ReportData") -> str:
    """How the API cost per accepted task used for break-even was found, with the two factors it multiplies by."""
    be = d.be
    if be.api_cost_source != "equivalent":
        return "the API route's run-rate plus review, per accepted task"
    waste = {
        "month": "measured this month",
        "pooled": "pooled with earlier months to reach enough accepted API tasks",
        "assumed": "assumed: too few accepted API tasks to measure it",
    }[be.api_waste_basis]
    interval = (
        f", 95 % interval {be.api_waste_factor_low:.3f} to {be.api_waste_factor_high:.3f}"
        if be.api_waste_basis != "assumed"
        else ""
    )
    unreconciled = (
        " (its invoice states no quantities and there is no usage export: this takes all it bills beyond the logs as "
        "price)"
        if "invoice_volume_unknown" in (be.verdict_caveats or [])
        else ""
    )
    return (
        "the cluster's own accepted attempts at the reference API price, times the API's spend on failures and "
        f"retries per accepted dollar ({be.api_waste_factor:.3f}x, {waste}{interval}) and times what the "
        f"reference provider's invoices charge beyond its list prices ({be.api_invoice_uplift:.3f}x{unreconciled}), "
        "plus review"
    )


def horizon_sentences(d: "ReportData") -> list[str]:
    """Beside the break-even's three views: why there is nothing to do when no scenario can be compared. The
    actions themselves are on the first screen (headline), said once."""
    said = actions(d.counterfactual, too_close_to_call(d.be), d.be.nodes_in_service, gate_state(d))
    if not said and d.be.break_even_accepted_tasks is None:
        return ["No scenario to compare: there is no API price or no cluster this month."]
    return []


def steps(d: "ReportData") -> list[tuple[str, str, str]]:
    """The five steps from capacity to cost per token, computed from the data: (step, figure, how it was found)."""
    be = d.be
    source = {
        "sweep": "the load-test sweeps in force over the month, weighted by node-hours",
        "observed": "observed in the request log (best 5-minute window within the latency target; a lower bound)",
        "mixed": "the request log before the first sweep, the sweeps after it",
    }.get(be.capacity_source or "", "unknown")
    per_node = be.capacity_per_node_tokens_per_second
    if per_node is None and be.capacity_source and not be.provisioned_node_hours:
        source += "; no node-hours are billed to give it per node"
    return [
        (
            "1. Capacity at the latency target",
            f"{count(per_node)} tokens/s per node" if per_node is not None else "unknown",
            f"aggregate tokens per second one node serves{_slo(d, 'within')}: {source}",
        ),
        (
            "2. Duty cycle, measured",
            f"{pct(be.token_utilisation)} of token capacity used",
            "tokens served / the tokens the provisioned nodes could serve at the latency target; not assumed "
            f"(accepted work alone: {pct(be.productive_utilisation)}, the productive utilisation)",
        ),
        (
            "3. Cost per million tokens",
            f"{usd(be.self_hosted_cost_per_million_tokens_served, 2)} per million served",
            f"fixed cost / the tokens served; at full capacity ({count(be.monthly_token_capacity)} tokens from "
            f"{count(be.provisioned_node_hours)} node-hours) it would be "
            f"{usd(be.self_hosted_cost_per_million_tokens_at_capacity, 2)}",
        ),
        (
            "4. The API at your mix",
            f"{usd(be.api_cost_per_million_tokens_at_mix, 2)} per million tokens",
            "the cluster's own requests priced at the reference API, times the API's waste and invoice factors, / "
            "their tokens: compare with step 3's served figure"
            if be.api_cost_source == "equivalent"
            else "the API route's run-rate / its tokens: compare with step 3's served figure",
        ),
        (
            "5. Operations",
            f"{usd(be.operating_cost_usd, 0)} a month",
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
    "acceptance_non_inferior": "the cluster's accepted share against the API's on the same cases (95 % lower bound, "
    "points)",
    "load_test": "load tests of the cluster within the evaluation's period or the 30 days before",
    "operating_costs_known": "operating costs recorded for the months the cluster ran the set",
    "self_hosted_p95_ms": "the cluster's p95 latency, ms",
    "representative": "the largest gap between a category's share of the cases and of production's accepted tasks, "
    "points",
}


def criterion_words(name: str) -> str:
    if name.startswith("drill_"):
        return f"the {name[6:].replace('_', ' ')} drill (1 = passed)"
    return CRITERION_WORDS.get(name, name)


def _no_cluster_saves(d: "ReportData") -> Any:
    """What no cluster saves a month at renewal (the counterfactual's everything on the API), when no cluster is the
    cheapest size there; None when a cluster of some size is cheaper than none."""
    best = cheapest_size(d.counterfactual)
    if best is not None and best["nodes"]:
        return None
    later = scenario_row(d.counterfactual, "at_renewal", "all_api")
    change = later["versus_as_run_usd"] if later else None
    return -change if change is not None and change < 0 else None


def decisions(d: "ReportData") -> dict[str, Any]:
    """The "Decisions ahead" section: the plan in sentences, the gate verdict and what it lacks, the forecast."""
    return {
        "plan": plan_sentences(d.hybrid),
        "curve": curve_sentence(d.be, d.curve),
        "moves": moves_sentence(d.moves, _no_cluster_saves(d)),
        "gate": gate_sentence(d.gate) if d.gate else None,
        "gate_headline": gate_headline(d.gate) if d.gate else None,
        "gate_open": [c for c in d.gate.criteria if c.status != "passed"] if d.gate else [],
        "forecast": forecast_sentence(d, already_above=True),
    }
