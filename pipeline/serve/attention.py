"""The report's first-screen alerts: the month's budgets at risk or over and its anomalies, in sentences."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.base.text import BUDGET_COLUMNS, budget_line

if TYPE_CHECKING:
    from pipeline.serve.reportdata import ReportData

#: the anomalies named on the first screen, the largest spend moved first (the rest are counted)
SHOWN = 5


def attention_lines(d: ReportData) -> list[str]:
    """What needs attention this month: each budget at risk or over, then the anomalies moving the most spend; a
    sentence saying all is well when budgets are set and none is at risk, or when no anomaly was found."""
    lines = [
        _sentence(budget_line((str(b["month"])[:7], *(b[k] for k in BUDGET_COLUMNS[1:]))))
        for b in d.budgets
        if b["status"] != "ok"
    ]
    if d.budgets and not lines:
        lines.append(f"Every budget is on track: {len(d.budgets)} set, none projected over.")
    ranked = sorted(d.anomalies, key=lambda a: -abs(a["spend_effect_usd"] or 0))
    lines += [f"Anomaly: {a['cause']}." for a in ranked[:SHOWN]]
    if len(ranked) > SHOWN:
        more = len(ranked) - SHOWN
        lines.append(f"And {more} more anomalies this month (all of them: the ledger's marts.daily_anomalies).")
    if not d.anomalies:
        lines.append(
            "No anomaly in the month's API spend or cache-hit rates, and no invoice price outside the catalogue."
        )
    return lines


def anomaly_note(d: ReportData) -> str:
    """How an anomaly is told, for a reader who has not met a robust score."""
    threshold = d.setting("anomalies_threshold") or "3.5"
    least = d.setting("anomalies_min_usd") or "25"
    return (
        "An anomaly is a day whose API spend or cache-hit rate, for one provider and team, lies far from the 28 days "
        "before it. The robust score measures how far: the distance from those days' median in units of their "
        f"typical spread (1.4826 times the median absolute deviation). A day is flagged at a score of {threshold} or "
        f"more that moved at least ${least} of spend."
    )


def _sentence(text: str) -> str:
    return f"{text[:1].upper()}{text[1:]}."
