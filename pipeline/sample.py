"""A seeded generator of realistic landing data (``costledger sample``).

What it writes, per month (default 2026-07 .. 2026-09):

* two API providers serving ``kimi-k3`` at the seeds' prices: ``moonshot``
  ($0.30 cache-hit / $3.00 cache-miss / $15.00 output per 1M tokens, cut to
  $0.25 / $2.50 / $12.50 from 2026-08-16: a price change inside the period) and
  ``cometapi`` ($2.40 input with no cache discount / $12.00 output);
* one self-hosted 8-GPU cluster ``k3-b200-01``: an owned 8xB200 server bought for
  $395,048 and amortised over 36 months, weekly on-demand charges for a burst node
  at $60/hour (the weeks straddle month ends), and monthly operating costs;
* tasks with retries (errors, timeouts), rejected outcomes, human review minutes,
  cache hits, and accepted attempts slower than a 120 s SLO;
* invoices: moonshot's match its metered usage exactly (one line per token type
  and price period, a promotional credit in the last month); cometapi's are 3%
  above metered (a mismatch for the reconciliation to flag).

Request logs rotate formats to exercise every reader: CSV, then gzipped JSONL,
then Parquet. The invoices are the providers' own arithmetic, simulated here in
``Decimal``; the ledger's arithmetic lives in ``sql/`` and is never imported here.
"""

from __future__ import annotations

import csv
import gzip
import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl

MODEL = "kimi-k3"
CLUSTER = "k3-b200-01"


@dataclass(frozen=True)
class PriceRow:
    provider: str
    effective_from: datetime
    hit: Decimal
    miss: Decimal
    out: Decimal


PRICES = [
    PriceRow("moonshot", datetime(2026, 7, 1), Decimal("0.30"), Decimal("3.00"), Decimal("15.00")),
    PriceRow("moonshot", datetime(2026, 8, 16), Decimal("0.25"), Decimal("2.50"), Decimal("12.50")),
    PriceRow("cometapi", datetime(2026, 7, 1), Decimal("2.40"), Decimal("2.40"), Decimal("12.00")),
]
COMETAPI_INVOICE_MARKUP = Decimal("1.03")
OPEX = {
    "platform_engineering": Decimal("18000"),
    "inference_operations": Decimal("9000"),
    "networking": Decimal("800"),
    "storage": Decimal("600"),
    "observability": Decimal("1200"),
    "security": Decimal("500"),
    "on_call": Decimal("3000"),
}
REQUEST_COLUMNS = [
    "request_id", "task_id", "attempt", "started_at", "route", "provider", "cluster_id", "model",
    "cache_hit_input_tokens", "cache_miss_input_tokens", "output_tokens", "reasoning_tokens",
    "latency_ms", "status", "team",
]
TEAMS = ["search", "coding-agent", "support", "research"]


def _month_starts(start: str, months: int) -> list[datetime]:
    y, m = (int(x) for x in start.split("-"))
    out = []
    for _ in range(months):
        out.append(datetime(y, m, 1))
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def _price_at(provider: str, ts: datetime) -> PriceRow:
    rows = [p for p in PRICES if p.provider == provider and p.effective_from <= ts]
    return max(rows, key=lambda p: p.effective_from)


def _iso(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def _task_start(rng: random.Random, month: datetime, next_month: datetime) -> datetime:
    """Working-hours-heavy arrival times (peak-to-average above 1)."""
    span = (next_month - month).total_seconds()
    while True:
        ts = month + timedelta(seconds=rng.uniform(0, span - 4 * 3600))
        weight = 1.0 if 8 <= ts.hour < 19 and ts.weekday() < 5 else 0.25
        if rng.random() < weight:
            return ts.replace(microsecond=(ts.microsecond // 1000) * 1000)


def _requests_for_month(rng: random.Random, month: datetime, next_month: datetime, tasks_per_route: int,
                        counter: list[int]) -> tuple[list[dict], list[dict]]:
    requests: list[dict] = []
    outcomes: list[dict] = []
    for route in ("api", "self_hosted"):
        for _ in range(tasks_per_route):
            counter[0] += 1
            task_id = f"task-{counter[0]:07d}"
            provider = (rng.choices(["moonshot", "cometapi"], [0.6, 0.4])[0] if route == "api" else None)
            t = _task_start(rng, month, next_month)
            team = rng.choice(TEAMS)
            prompt = int(rng.lognormvariate(10.6, 0.6))  # median ~40k tokens: agentic contexts
            hit_share = {"moonshot": 0.6, "cometapi": 0.0, None: 0.5}[provider]
            n_attempts = rng.choices([1, 2, 3], [0.86, 0.10, 0.04])[0]
            last_ok = None
            for attempt in range(1, n_attempts + 1):
                final = attempt == n_attempts
                status = "ok" if final else rng.choice(["error", "timeout"])
                hit = int(prompt * hit_share * rng.uniform(0.7, 1.0)) if attempt > 1 or rng.random() < 0.8 else 0
                miss = prompt - hit
                if status == "error":
                    out, reasoning, latency = 0, 0, rng.randint(300, 4000)
                elif status == "timeout":
                    out, reasoning, latency = rng.randint(0, 400), rng.randint(200, 3000), 180_000
                else:
                    out = rng.randint(300, 3000)
                    reasoning = rng.randint(500, 9000)
                    base = 25_000 if route == "api" else 35_000
                    latency = int(base + (out + reasoning) * rng.uniform(6, 11))
                req_id = f"req-{month:%Y%m}-{len(requests) + 1:06d}-{route[0]}"
                requests.append({
                    "request_id": req_id, "task_id": task_id, "attempt": attempt, "started_at": t,
                    "route": route, "provider": provider, "cluster_id": CLUSTER if route == "self_hosted" else None,
                    "model": MODEL, "cache_hit_input_tokens": hit, "cache_miss_input_tokens": miss,
                    "output_tokens": out, "reasoning_tokens": reasoning, "latency_ms": latency,
                    "status": status, "team": team,
                })
                if status == "ok":
                    last_ok = (req_id, t + timedelta(milliseconds=latency))
                t = t + timedelta(milliseconds=latency + rng.randint(1000, 30_000))
            assert last_ok is not None
            decided = last_ok[1] + timedelta(minutes=rng.randint(1, 90))
            accepted = rng.random() < 0.85
            review = Decimal(rng.randint(2, 10)) if rng.random() < 0.03 else None
            if rng.random() < 0.03:
                # first rejected, then accepted on re-review: the latest decision counts
                outcomes.append({"task_id": task_id, "accepted": False, "decided_at": decided, "request_id": None,
                                 "review_minutes": None, "reason": "needs changes"})
                decided, accepted = decided + timedelta(hours=2), True
            outcomes.append({
                "task_id": task_id, "accepted": accepted, "decided_at": decided,
                # name the accepted attempt on a third of the rows; otherwise the last 'ok' attempt is meant
                "request_id": last_ok[0] if accepted and rng.random() < 0.33 else None,
                "review_minutes": review, "reason": None if accepted else rng.choice(["wrong answer", "tool call malformed", "incomplete"]),
            })
    requests.sort(key=lambda r: (r["started_at"], r["request_id"]))
    return requests, outcomes


def _invoice_lines(requests: list[dict], month: datetime, next_month: datetime, credit: bool) -> list[dict]:
    """The providers' billing: usage per (provider, price period, token type)."""
    usage: dict[tuple[str, datetime, str], int] = {}
    for r in requests:
        if r["route"] != "api":
            continue
        p = _price_at(r["provider"], r["started_at"])
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
        lines.append({
            "provider": provider, "invoice_id": f"{provider}-{month:%Y%m}", "line_id": f"{i:03d}",
            "period_start": f"{month:%Y-%m-%d}", "period_end": f"{next_month:%Y-%m-%d}", "line_type": line_type,
            "model": MODEL, "quantity": qty, "unit_price_per_million": unit, "amount": amount, "currency": "USD",
        })
    if credit:
        lines.append({
            "provider": "moonshot", "invoice_id": f"moonshot-{month:%Y%m}", "line_id": "900",
            "period_start": f"{month:%Y-%m-%d}", "period_end": f"{next_month:%Y-%m-%d}", "line_type": "credit",
            "model": None, "quantity": None, "unit_price_per_million": None, "amount": Decimal("-25.00"), "currency": "USD",
        })
    return lines


def _write_csv(path: Path, rows: list[dict], columns: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow({k: (_iso(v) if isinstance(v, datetime) else ("" if v is None else v)) for k, v in r.items() if k in columns})


def _write_requests(path_stem: Path, rows: list[dict], fmt: str) -> Path:
    path_stem.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        path = path_stem.with_suffix(".csv")
        _write_csv(path, rows, REQUEST_COLUMNS)
    elif fmt == "jsonl.gz":
        path = path_stem.with_suffix(".jsonl.gz")
        text = "".join(json.dumps({k: (_iso(v) if isinstance(v, datetime) else v) for k, v in r.items()}) + "\n"
                       for r in rows)
        # mtime=0: the same seed writes the same bytes
        path.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        path = path_stem.with_suffix(".parquet")
        pl.DataFrame(rows, schema={
            "request_id": pl.String, "task_id": pl.String, "attempt": pl.Int32, "started_at": pl.Datetime("ms"),
            "route": pl.String, "provider": pl.String, "cluster_id": pl.String, "model": pl.String,
            "cache_hit_input_tokens": pl.Int64, "cache_miss_input_tokens": pl.Int64, "output_tokens": pl.Int64,
            "reasoning_tokens": pl.Int64, "latency_ms": pl.Int64, "status": pl.String, "team": pl.String,
        }).write_parquet(path)
    return path


def write_sample(out: Path, seed: int = 7, start: str = "2026-07", months: int = 3,
                 tasks_per_month: int = 1200) -> dict[str, int]:
    """Write a landing folder under ``out``; returns rows written per kind."""
    rng = random.Random(seed)
    starts = _month_starts(start, months + 1)
    stats = {k: 0 for k in ("prices", "hardware", "cluster-charges", "opex", "invoices", "requests", "outcomes")}

    prices = [{
        "provider": p.provider, "model": MODEL, "effective_from": _iso(p.effective_from),
        "cache_hit_input_per_million": p.hit, "cache_miss_input_per_million": p.miss,
        "output_per_million": p.out, "currency": "USD",
    } for p in PRICES]
    _write_csv(out / "prices" / "prices.csv", prices, list(prices[0]))
    stats["prices"] = len(prices)

    hardware = [{"asset_id": "b200-server-01", "cluster_id": CLUSTER, "purchase_price": "395048.00",
                 "in_service_date": f"{starts[0]:%Y-%m-%d}", "life_months": 36, "salvage_value": "0",
                 "currency": "USD"}]
    _write_csv(out / "hardware" / "hardware.csv", hardware, list(hardware[0]))
    stats["hardware"] = 1

    # weekly on-demand burst node at $60/hour, charged Monday to Monday; the first and last weeks are clipped
    charges = []
    week_start = starts[0]
    while week_start < starts[-1]:
        days_to_monday = (7 - week_start.weekday()) % 7 or 7
        week_end = min(week_start + timedelta(days=days_to_monday), starts[-1])
        hours = Decimal(int((week_end - week_start).total_seconds() // 3600))
        charges.append({
            "charge_id": f"od-{week_start:%Y%m%d}", "cluster_id": CLUSTER, "charge_start": _iso(week_start),
            "charge_end": _iso(week_end), "kind": "on_demand", "quantity": hours, "unit": "node_hour",
            "unit_price": "60.00", "amount": hours * Decimal("60.00"), "currency": "USD",
        })
        week_start = week_end
    _write_csv(out / "cluster-charges" / "on_demand.csv", charges, list(charges[0]))
    stats["cluster-charges"] = len(charges)

    counter = [0]
    for i, (m, nm) in enumerate(zip(starts, starts[1:])):
        opex = [{"month": f"{m:%Y-%m}", "cluster_id": CLUSTER, "category": cat, "amount": amt, "currency": "USD",
                 "note": "sample"} for cat, amt in OPEX.items()]
        _write_csv(out / "opex" / f"opex-{m:%Y-%m}.csv", opex, list(opex[0]))
        stats["opex"] += len(opex)

        requests, outcomes = _requests_for_month(rng, m, nm, tasks_per_month, counter)
        fmt = ("csv", "jsonl.gz", "parquet")[i % 3]
        _write_requests(out / "requests" / f"requests-{m:%Y-%m}", requests, fmt)
        stats["requests"] += len(requests)
        _write_csv(out / "outcomes" / f"outcomes-{m:%Y-%m}.csv", outcomes,
                   ["task_id", "accepted", "decided_at", "request_id", "review_minutes", "reason"])
        stats["outcomes"] += len(outcomes)

        lines = _invoice_lines(requests, m, nm, credit=(i == months - 1))
        _write_csv(out / "invoices" / f"invoices-{m:%Y-%m}.csv", lines, list(lines[0]))
        stats["invoices"] += len(lines)
    return stats
