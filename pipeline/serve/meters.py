"""What each cluster's own meters say, in the report's words: its serving engines' token counts against its request
log, how busy its GPUs were, the energy they drew and what it cost, requests queueing below capacity, and its fixed
cost split between prompt and generation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.base.text import count, counted, pct, usd

if TYPE_CHECKING:
    from pipeline.serve.records import ClusterTelemetry, PhaseCost
    from pipeline.serve.reportdata import ReportData

ENGINE_STATUS_WORDS = {
    "ok": "they agree within the tolerance",
    "logs_missing": "the log is missing requests the engines served (a log shipper or a gateway lost them)",
    "logs_extra": "the log holds more than the engines counted (an engine that restarted between two samples loses "
    "what it counted since the last one)",
    "no_metrics": "no engine counters this month",
}


def engine_sentences(d: ReportData) -> list[str]:
    """One sentence per cluster: the tokens its engines counted against its request log's."""
    out = []
    for e in d.engines:
        if e.engine_tokens is None:
            out.append(
                f"{e.cluster_id}: its request log holds {count(e.logged_tokens)} tokens; "
                f"{ENGINE_STATUS_WORDS['no_metrics']}."
            )
            continue
        out.append(
            f"{e.cluster_id}: its serving engines counted {count(e.engine_tokens)} tokens and its request log holds "
            f"{count(e.logged_tokens)} ({_signed(e.difference)}, {pct(_pct_share(e.difference_pct))}); "
            f"{ENGINE_STATUS_WORDS.get(e.status, e.status)}."
        )
    return out


def _signed(value) -> str:  # noqa: ANN001 - a Decimal or None
    if value is None:
        return "n/a"
    return ("+" if value > 0 else "-" if value < 0 else "") + count(abs(value))


def _pct_share(percent) -> float | None:  # noqa: ANN001 - a Decimal percentage or None
    """The mart's difference_pct (a percentage) as the share pct() prints."""
    return None if percent is None else float(percent / 100)


def meter_sentences(d: ReportData) -> list[str]:
    """What the GPUs and the engines say of each cluster's month beside the request log."""
    out: list[str] = []
    for t in d.telemetry:
        out += [s for s in (_busy(t), _prefix_cache(t), _energy(t, d), _queue(t)) if s]
    clusters = dict.fromkeys(p.cluster_id for p in d.phases)
    out += [s for c in clusters if (s := _phases([p for p in d.phases if p.cluster_id == c]))]
    return out


#: how a cluster's fixed cost was split between its phases (marts.monthly_phase_cost.allocation_method)
PHASE_METHOD_WORDS = {
    "engine_phase_time": "by the seconds its engines' requests spent reading prompts (prefill) and writing output "
    "(decode); each of the requests decoding at once counts its own seconds, so the rule leans toward generation",
    "token_share": "by tokens, its engines reporting no time per phase: a million of either costs the same",
}


def _phases(rows: list[PhaseCost]) -> str | None:
    """A cluster's fixed cost in its prompt and generation parts, each per million beside the API's list price."""
    by = {p.phase: p for p in rows}
    prompt, generation = by.get("prompt"), by.get("generation")
    if prompt is None or generation is None or prompt.cost_usd is None or generation.cost_usd is None:
        return None

    def part(p: PhaseCost, what: str, api: str) -> str:
        beside = f", beside the reference API's {usd(p.api_list_per_million)} {api}" if p.api_list_per_million else ""
        per = f"{usd(p.cost_per_million_tokens)} a million {what} tokens" if p.tokens else f"no {what} tokens"
        return f"{usd(p.cost_usd)} to {what} ({per}{beside})"

    total = prompt.cost_usd + generation.cost_usd
    prompt_api = "list price at the cluster's cache-hit share"
    return (
        f"{prompt.cluster_id}'s fixed cost of {usd(total)}, split "
        f"{PHASE_METHOD_WORDS.get(prompt.allocation_method, prompt.allocation_method)}: "
        f"{part(prompt, 'prompt', prompt_api)}; "
        f"{part(generation, 'generation', 'output list price')}."
    )


#: what the GPUs' busy share rests on (marts.monthly_cluster_telemetry.busy_source)
BUSY_SOURCE_WORDS = {
    "engine_active": "the time their graphics engines were active, as NVIDIA's DCGM exporter reports it",
    "gpu_util": "the time a kernel ran, DCGM's GPU utilisation, which counts a GPU running one small kernel as busy: "
    "an upper bound",
    "mixed": "the time their graphics engines were active where DCGM reports it, else the time a kernel ran (DCGM's "
    "GPU utilisation, an upper bound)",
}


def _busy(t: ClusterTelemetry) -> str | None:
    if t.engine_active_share is None:
        return None
    beside = (
        f", beside a token utilisation of {pct(t.token_utilisation)} (the tokens it served over what its nodes "
        "serve at the latency target)"
        if t.token_utilisation is not None
        else ""
    )
    return (
        f"{t.cluster_id}'s GPUs were busy {pct(t.engine_active_share)} of their {count(t.provisioned_gpu_hours)} "
        f"provisioned GPU-hours by their own meters ({BUSY_SOURCE_WORDS.get(t.busy_source or '', t.busy_source)})"
        f"{beside}."
    )


def _prefix_cache(t: ClusterTelemetry) -> str | None:
    if t.prefix_cache_hit_share is None:
        return None
    beside = (
        f", beside {pct(t.api_cache_hit_share)} of the API route's input tokens read from its provider's cache"
        if t.api_cache_hit_share is not None
        else ""
    )
    worth = (
        f"; on the reference API those hits would have saved {usd(t.prefix_cache_saved_usd)} (a cache-miss input "
        "token's price less a cache hit's)"
        if t.prefix_cache_saved_usd is not None
        else ""
    )
    return (
        f"{t.cluster_id}'s serving engines found {pct(t.prefix_cache_hit_share)} of the prompt tokens they looked up "
        f"in their prefix cache ({count(t.prefix_cache_hit_tokens)} of {count(t.prefix_cache_queried_tokens)}: "
        f"prefill not computed again){beside}{worth}."
    )


def _energy(t: ClusterTelemetry, d: ReportData) -> str | None:
    if t.energy_kwh is None:
        return None
    drew = f"{t.cluster_id}'s GPUs drew {count(t.energy_kwh)} kWh"
    if t.energy_line == "added":
        price, pue = d.setting("energy_usd_per_kwh"), d.setting("energy_pue")
        return (
            f"{drew}; at ${price} a kWh, with the site drawing {pue} times what the GPUs draw (cooling and power "
            f"delivery), the owned hardware's share of it (by node-hours; a rented node's energy is in its price) "
            f"adds {usd(t.energy_usd)} to the month's operating costs as energy."
        )
    return drew + {
        "opex_row": "; the month's operating costs have an energy line of their own, which stands: the metered "
        "energy adds nothing.",
        "no_price": ", not priced: set [energy] usd_per_kwh to count the owned hardware's energy as an operating cost.",
        "no_owned_hardware": ", all on rented nodes, whose energy is in their price.",
    }.get(t.energy_line or "", ".")


def _queue(t: ClusterTelemetry) -> str | None:
    if not t.waiting_hours:
        return None
    hours = counted(t.waiting_hours, "clock hour")
    if t.queue_pressure:
        return (
            f"{t.cluster_id}'s serving engines had requests waiting in {hours}, in one of them while serving "
            f"{count(t.least_waiting_hour_tokens_per_second)} tokens per second, under half the "
            f"{count(t.capacity_tokens_per_second)} its nodes serve at the latency target by the load test: the load "
            "test looks optimistic for this traffic."
        )
    return (
        f"{t.cluster_id}'s serving engines had requests waiting in {hours}, each while serving at least half of what "
        "its nodes serve at the latency target."
    )
