"""The month's cost figures tied together, step by step (sql/queries/cost_bridge.sql), in the report's words."""

from __future__ import annotations

from typing import Any

from pipeline.base.text import usd
from pipeline.serve.planning import nodes_words

#: each step of the bridge as the reader reads it
STEP_WORDS = {
    "cash": "As billed (the cash view): both routes, review included",
    "tax_and_credits": "less the API's tax and one-off credits (recoverable, or not recurring)",
    "today": "= the month as it ran: the cluster's fixed cost, the API's run-rate and review on both routes",
    "all_api": "everything on the API, no cluster",
    "saving": "The break-even's saving: everything on the API less the month as it ran (the API's price C for the "
    "cluster's accepted tasks, less the cluster's fixed cost and review)",
}


def bridge_rows(bridge: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The bridge's rows with their words; the step to everything on the API is left out when the cheapest plan is
    already no cluster (it would be a step of $0)."""
    out = []
    cheapest = next((r for r in bridge if r["step"] == "cheapest"), None)
    for r in bridge:
        if r["step"] == "all_api" and cheapest is not None and cheapest["nodes"] == 0:
            continue
        if r["step"] != "cheapest":
            words = STEP_WORDS[r["step"]]
        elif r["nodes"]:
            words = f"the cheapest plan for this demand: {nodes_words(r['nodes'])}"
        else:
            words = "the cheapest plan for this demand: no cluster, everything on the API"
        out.append({**r, "words": words})
    return out


def billed_sentences(bridge: list[dict[str, Any]]) -> list[str]:
    """The month as run (the plan's 'today' row) and as billed, with the step between them (the bridge's first
    three steps, sql/queries/cost_bridge.sql): a plan is compared with the month as run, never labelled as billed."""
    steps = {r["step"]: r for r in bridge}
    if "today" not in steps or "cash" not in steps:
        return []
    tax_and_credits = -steps["tax_and_credits"]["change_usd"]
    return [
        f"The month as run: {usd(steps['today']['total_usd'], 0)} (the cluster's fixed cost, the API's run-rate and "
        f"review on both routes). As billed: {usd(steps['cash']['total_usd'], 0)}, with the API invoices' tax and "
        f"one-off credits ({usd(tax_and_credits, 0)})."
    ]
