"""The providers' side of the sample: their invoices (the providers' own arithmetic, in ``Decimal``) and their
usage and cost exports, each in the provider's own format."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path


from pipeline.sample.world import MODEL, PRICES, COMETAPI_INVOICE_MARKUP, price_at


def _json_with_exact_numbers(obj: object) -> str:
    """JSON with Decimal values written as exact numbers (the readers parse numbers as decimal text)."""
    marks: dict[str, str] = {}

    def mark(value: object) -> str:
        key = f"__decimal_{len(marks)}__"
        marks[key] = format(value, "f")
        return key

    text = json.dumps(obj, default=mark, indent=1)
    for key, number in marks.items():
        text = text.replace(f'"{key}"', number)
    return text


def _moonshot_days(requests: list[dict], dropped: int) -> dict[datetime, dict[str, Decimal]]:
    """Moonshot's tokens, requests and amounts per day, as its usage and costs exports count them."""
    days: dict[datetime, dict[str, Decimal]] = {}
    for r in requests:
        if r["provider"] != "moonshot":
            continue
        day = r["started_at"].replace(hour=0, minute=0, second=0, microsecond=0)
        d = days.setdefault(
            day, dict.fromkeys(("hit", "miss", "out", "n", "hit_usd", "miss_usd", "out_usd"), Decimal(0))
        )
        p = price_at("moonshot", r["started_at"])
        out_tokens = r["output_tokens"] + r["reasoning_tokens"]
        d["hit"] += r["cache_hit_input_tokens"]
        d["miss"] += r["cache_miss_input_tokens"]
        d["out"] += out_tokens
        d["n"] += 1
        d["hit_usd"] += Decimal(r["cache_hit_input_tokens"]) * p.hit / Decimal(1_000_000)
        d["miss_usd"] += Decimal(r["cache_miss_input_tokens"]) * p.miss / Decimal(1_000_000)
        d["out_usd"] += Decimal(out_tokens) * p.out / Decimal(1_000_000)
    ordered = sorted(days)
    if dropped and ordered:
        # the provider counts and bills them at its list price of that day
        last, p = days[ordered[-1]], price_at("moonshot", ordered[-1])
        last["miss"] += 10_000 * dropped
        last["out"] += 2_000 * dropped
        last["n"] += dropped
        last["miss_usd"] += Decimal(10_000 * dropped) * p.miss / Decimal(1_000_000)
        last["out_usd"] += Decimal(2_000 * dropped) * p.out / Decimal(1_000_000)

    return days


def write_provider_exports(out: Path, requests: list[dict], month: datetime, dropped: int, costs: bool) -> None:
    """Moonshot's usage export for the month (daily buckets; ``dropped`` requests of 10,000 input and 2,000 output
    tokens on the last day are counted by the provider but were never logged), and if ``costs`` its Costs export
    (daily amounts per line item at list price: the logged requests' metered cost, and the dropped ones billed too)."""
    days = _moonshot_days(requests, dropped)

    def bucket(day: datetime, results: list[dict]) -> dict:
        start = int(day.replace(tzinfo=timezone.utc).timestamp())
        return {"object": "bucket", "start_time": start, "end_time": start + 86_400, "results": results}

    usage = [
        bucket(
            day,
            [
                {
                    "object": "organization.usage.completions.result",
                    "model": MODEL,
                    "input_tokens": int(d["hit"] + d["miss"]),
                    "input_cached_tokens": int(d["hit"]),
                    "output_tokens": int(d["out"]),
                    "num_model_requests": int(d["n"]),
                }
            ],
        )  # fmt: skip
        for day, d in sorted(days.items())
    ]
    page = {"object": "page", "data": usage, "has_more": False, "next_page": None}
    (out / "usage").mkdir(parents=True, exist_ok=True)
    (out / "usage" / f"moonshot-usage-{month:%Y-%m}.json").write_text(_json_with_exact_numbers(page) + "\n")
    if not costs:
        return
    results = [
        bucket(day, [{"object": "organization.costs.result", "amount": {"value": d[key], "currency": "usd"},
                      "line_item": f"{MODEL}, {item}", "project_id": None}
                     for key, item in (("miss_usd", "input"), ("hit_usd", "cached input"), ("out_usd", "output"))])
        for day, d in sorted(days.items())
    ]  # fmt: skip
    page = {"object": "page", "data": results, "has_more": False, "next_page": None}
    (out / "invoices").mkdir(parents=True, exist_ok=True)
    (out / "invoices" / f"moonshot-costs-{month:%Y-%m}.json").write_text(_json_with_exact_numbers(page) + "\n")


def invoice_lines(requests: list[dict], month: datetime, next_month: datetime, credit: bool, tax: bool) -> list[dict]:
    """The providers' billing: usage per (provider, price period, token type)."""
    usage: dict[tuple[str, datetime, str], int] = {}
    for r in requests:
        if r["route"] != "api":
            continue
        p = price_at(r["provider"], r["started_at"])
        for line_type, n in (
            ("input_cache_hit", r["cache_hit_input_tokens"]),
            ("input_cache_miss", r["cache_miss_input_tokens"]),
            ("output", r["output_tokens"] + r["reasoning_tokens"]),
        ):
            key = (r["provider"], p.effective_from, line_type)
            usage[key] = usage.get(key, 0) + n
    lines = []
    for i, ((provider, eff, line_type), qty) in enumerate(sorted(usage.items()), start=1):
        p = next(x for x in PRICES if x.provider == provider and x.effective_from == eff)
        unit = {"input_cache_hit": p.hit, "input_cache_miss": p.miss, "output": p.out}[line_type]
        amount = Decimal(qty) * unit / Decimal(1_000_000)
        if provider == "cometapi":
            amount = (amount * COMETAPI_INVOICE_MARKUP).quantize(Decimal("0.01"))
        lines.append(
            {
                "provider": provider,
                "invoice_id": f"{provider}-{month:%Y%m}",
                "line_id": f"{i:03d}",
                "period_start": f"{month:%Y-%m-%d}",
                "period_end": f"{next_month:%Y-%m-%d}",
                "line_type": line_type,
                "model": MODEL,
                "quantity": qty,
                "unit_price_per_million": unit,
                "amount": amount,
                "currency": "USD",
            }
        )
    header = {"period_start": f"{month:%Y-%m-%d}", "period_end": f"{next_month:%Y-%m-%d}"}
    if credit:
        lines.append(_moonshot_line(month, "900", "credit", Decimal("-25.00"), header))
    if tax:
        # 8 % sales tax on moonshot's usage, on a line of its own (recoverable: not part of the run-rate)
        usage_usd = sum(
            (line["amount"] for line in lines if line["provider"] == "moonshot" and line["line_type"] != "credit"),
            Decimal(0),
        )
        lines.append(
            _moonshot_line(month, "950", "tax", (usage_usd * Decimal("0.08")).quantize(Decimal("0.01")), header)
        )
    return lines


def _moonshot_line(month: datetime, line_id: str, line_type: str, amount: Decimal, period: dict[str, str]) -> dict:
    """A line of Moonshot's invoice that is not usage: a credit or a tax."""
    return {
        "provider": "moonshot",
        "invoice_id": f"moonshot-{month:%Y%m}",
        "line_id": line_id,
        **period,
        "line_type": line_type,
        "model": None,
        "quantity": None,
        "unit_price_per_million": None,
        "amount": amount,
        "currency": "USD",
    }
