"""A seeded generator of realistic landing data (``costledger sample``).

Two scenarios, both seeded (the same seed writes the same bytes):

``growth`` (the default, the bundled ``sample_data/``): a team moving agentic work onto its own
  K3-class cluster. Four months from 2026-07, self-hosted volume growing from ~25k to ~80k tasks
  a month, so the verdict turns inside the sample. Tasks have ~50k-token contexts with prefix-cache
  hits and long reasoning. The cluster ``k3-b200-01``: an owned 8xB200 server bought for $395,048
  and amortised over 36 months, an on-demand burst node at $60/hour on weekday working hours,
  lean operating costs, and two capacity sweeps (``load-tests``): one before the first month, one
  after a tuning on 2026-09-20 (the later months use it). The API route takes a few thousand
  overflow tasks a month at ``moonshot`` (the seeds' prices, cut on 2026-08-16) and ``cometapi``.
``small-team`` (``--scenario small-team``): the earlier demo, 1,200 tasks per route a month and a
  large cluster for them: the API is far cheaper every month.

Both: tasks with retries (errors, timeouts), rejected outcomes, human review minutes, accepted
attempts slower than the SLO; invoices where moonshot's match its metered usage exactly (one line
per token type and price period, a promotional credit and a tax line) and cometapi's are 3 % above
metered (a mismatch for the reconciliation to flag). Request logs rotate formats to exercise every
reader: CSV, gzipped JSONL, Parquet. The invoices are the providers' own arithmetic, simulated here
in ``Decimal``; the ledger's arithmetic lives in ``sql/`` and is never imported here.
"""

from __future__ import annotations

import csv
import math
import gzip
import json
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
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
REQUEST_COLUMNS = [
    "request_id",
    "task_id",
    "attempt",
    "started_at",
    "route",
    "provider",
    "cluster_id",
    "model",
    "cache_hit_input_tokens",
    "cache_miss_input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "latency_ms",
    "status",
    "team",
]
TEAMS = ["search", "coding-agent", "support", "research"]


@dataclass(kw_only=True, frozen=True)
class Scenario:
    """What a sample looks like: volume, workload shape, the cluster's costs."""

    months: int
    api_tasks: tuple[int, ...]
    """API tasks per month (the last value repeats)."""
    self_hosted_tasks: tuple[int, ...]
    """Self-hosted tasks per month (the last value repeats)."""
    prompt_median: float
    """Median input tokens per request (lognormal)."""
    self_hosted_hit_share: float
    reasoning: tuple[int, int]
    output: tuple[int, int]
    ms_per_output_token: tuple[float, float]
    base_latency_ms: dict[str, int]
    opex: dict[str, Decimal]
    on_demand: str
    """'weekly' (a burst node billed around the clock, Monday to Monday) or 'working_hours' (weekdays,
    on_demand_hours)."""
    sweeps: bool
    review_share: float
    """Share of tasks a person reviews (2-10 minutes each)."""
    on_demand_hours: tuple[int, int]
    """Working-hours burst node: first and last hour (UTC) of its daily charge."""
    credit_month: int
    tax_month: int | None
    request_formats: tuple[str, ...]
    """Request log file formats, month by month (repeating): every reader is exercised."""
    gzip_outcomes: bool
    """Outcome files as .csv.gz (keeps a large sample small)."""
    provider_exports: bool = False
    """Moonshot's usage exports every month (OpenAI usage format; the last month counts requests its gateway did
    not log) and its last invoice as an OpenAI Costs export, instead of CSV lines (costledger.toml maps the files
    to the provider)."""
    eval_cases: int = 0
    """Cases of the deployment gate's evaluation set, drawn from the last month's tasks on both routes, with its
    failure drills (one failed); 0 = none."""


SCENARIOS: dict[str, Scenario] = {
    "growth": Scenario(
        months=4,
        api_tasks=(2000,),
        self_hosted_tasks=(18_000, 30_000, 46_000, 70_000),
        prompt_median=50_000,
        self_hosted_hit_share=0.45,
        reasoning=(6000, 22_000),
        output=(300, 2000),
        ms_per_output_token=(9.0, 14.0),
        base_latency_ms={"api": 20_000, "self_hosted": 25_000},
        opex={
            "platform_engineering": Decimal("2400"),
            "inference_operations": Decimal("1200"),
            "networking": Decimal("250"),
            "storage": Decimal("200"),
            "observability": Decimal("300"),
            "security": Decimal("150"),
            "on_call": Decimal("700"),
        },
        on_demand="working_hours",
        sweeps=True,
        review_share=0.005,
        on_demand_hours=(12, 16),
        credit_month=2,
        tax_month=3,
        request_formats=("csv.gz", "jsonl.gz", "parquet", "parquet"),
        gzip_outcomes=True,
        provider_exports=True,
        eval_cases=40,
    ),
    "small-team": Scenario(
        months=3,
        api_tasks=(1200,),
        self_hosted_tasks=(1200,),
        prompt_median=40_000,
        self_hosted_hit_share=0.5,
        reasoning=(500, 9000),
        output=(300, 3000),
        ms_per_output_token=(6.0, 11.0),
        base_latency_ms={"api": 25_000, "self_hosted": 35_000},
        opex={
            "platform_engineering": Decimal("18000"),
            "inference_operations": Decimal("9000"),
            "networking": Decimal("800"),
            "storage": Decimal("600"),
            "observability": Decimal("1200"),
            "security": Decimal("500"),
            "on_call": Decimal("3000"),
        },
        on_demand="weekly",
        sweeps=False,
        review_share=0.03,
        on_demand_hours=(8, 18),
        credit_month=2,
        tax_month=None,
        request_formats=("csv", "jsonl.gz", "parquet"),
        gzip_outcomes=False,
    ),
}

#: The growth scenario's capacity sweeps: (sweep id, measured at, [(concurrency, tokens/s, p50 ms, p95 ms)]).
#: Aggregate tokens/s counts every token the cluster processed (input, cached or not, and output).
SWEEPS = [
    (
        "k3-b200-baseline",
        datetime(2026, 6, 24, 14, 0),
        [
            (4, 1450.0, 118_000, 150_000),
            (8, 2700.0, 126_000, 166_000),
            (16, 4700.0, 141_000, 192_000),
            (32, 7600.0, 168_000, 236_000),
            (64, 10_400.0, 223_000, 331_000),
            (128, 12_100.0, 371_000, 548_000),
        ],
    ),
    (
        "k3-b200-tuned",
        datetime(2026, 9, 20, 9, 30),
        [
            (8, 3300.0, 112_000, 150_000),
            (16, 5900.0, 124_000, 171_000),
            (32, 9400.0, 149_000, 214_000),
            (64, 12_800.0, 198_000, 287_000),
            (128, 14_300.0, 331_000, 502_000),
        ],
    ),
]


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


def _decisions(rng: random.Random, sc: Scenario, task_id: str, last_ok: tuple[str, datetime]) -> list[dict]:
    """A task's review decisions: usually one; now and then a rejection, then acceptance on re-review."""
    decisions: list[dict] = []
    decided = last_ok[1] + timedelta(minutes=rng.randint(1, 90))
    accepted = rng.random() < 0.85
    review = Decimal(rng.randint(2, 10)) if rng.random() < sc.review_share else None
    if rng.random() < 0.03:
        # first rejected, then accepted on re-review: the latest decision counts
        decisions.append(
            {
                "task_id": task_id,
                "accepted": False,
                "decided_at": decided,
                "request_id": None,
                "review_minutes": None,
                "reason": "needs changes",
            }
        )
        decided, accepted = decided + timedelta(hours=2), True
    decisions.append(
        {
            "task_id": task_id,
            "accepted": accepted,
            "decided_at": decided,
            # name the accepted attempt on a third of the rows; otherwise the last 'ok' attempt is meant
            "request_id": last_ok[0] if accepted and rng.random() < 0.33 else None,
            "review_minutes": review,
            "reason": None if accepted else rng.choice(["wrong answer", "tool call malformed", "incomplete"]),
        }
    )
    return decisions


def _requests_for_month(
    rng: random.Random, sc: Scenario, month: datetime, next_month: datetime, tasks: dict[str, int], counter: list[int]
) -> tuple[list[dict], list[dict]]:
    requests: list[dict] = []
    outcomes: list[dict] = []
    for route in ("api", "self_hosted"):
        for _ in range(tasks[route]):
            counter[0] += 1
            task_id = f"task-{counter[0]:07d}"
            provider = rng.choices(["moonshot", "cometapi"], [0.6, 0.4])[0] if route == "api" else None
            t = _task_start(rng, month, next_month)
            team = rng.choice(TEAMS)
            prompt = int(rng.lognormvariate(math.log(sc.prompt_median), 0.5))
            hit_share = {"moonshot": 0.6, "cometapi": 0.0, None: sc.self_hosted_hit_share}[provider]
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
                    out = rng.randint(*sc.output)
                    reasoning = rng.randint(*sc.reasoning)
                    latency = int(sc.base_latency_ms[route] + (out + reasoning) * rng.uniform(*sc.ms_per_output_token))
                req_id = f"req-{month:%Y%m}-{len(requests) + 1:06d}-{route[0]}"
                requests.append(
                    {
                        "request_id": req_id,
                        "task_id": task_id,
                        "attempt": attempt,
                        "started_at": t,
                        "route": route,
                        "provider": provider,
                        "cluster_id": CLUSTER if route == "self_hosted" else None,
                        "model": MODEL,
                        "cache_hit_input_tokens": hit,
                        "cache_miss_input_tokens": miss,
                        "output_tokens": out,
                        "reasoning_tokens": reasoning,
                        "latency_ms": latency,
                        "status": status,
                        "team": team,
                    }
                )
                if status == "ok":
                    last_ok = (req_id, t + timedelta(milliseconds=latency))
                t = t + timedelta(milliseconds=latency + rng.randint(1000, 30_000))
            assert last_ok is not None
            outcomes += _decisions(rng, sc, task_id, last_ok)
    requests.sort(key=lambda r: (r["started_at"], r["request_id"]))
    return requests, outcomes


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


def _write_provider_exports(out: Path, requests: list[dict], month: datetime, dropped: int, costs: bool) -> None:
    """Moonshot's usage export for the month (daily buckets; ``dropped`` requests of 10,000 input and 2,000 output
    tokens on the last day are counted by the provider but were never logged), and if ``costs`` its Costs export
    (daily amounts per line item, exactly the metered ones: their sum is the month's usage lines)."""
    days: dict[datetime, dict[str, Decimal]] = {}
    for r in requests:
        if r["provider"] != "moonshot":
            continue
        day = r["started_at"].replace(hour=0, minute=0, second=0, microsecond=0)
        d = days.setdefault(
            day, dict.fromkeys(("hit", "miss", "out", "n", "hit_usd", "miss_usd", "out_usd"), Decimal(0))
        )
        p = _price_at("moonshot", r["started_at"])
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
        last = days[ordered[-1]]
        last["miss"] += 10_000 * dropped
        last["out"] += 2_000 * dropped
        last["n"] += dropped

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


def _invoice_lines(requests: list[dict], month: datetime, next_month: datetime, credit: bool, tax: bool) -> list[dict]:
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
    if credit:
        lines.append(
            {
                "provider": "moonshot",
                "invoice_id": f"moonshot-{month:%Y%m}",
                "line_id": "900",
                "period_start": f"{month:%Y-%m-%d}",
                "period_end": f"{next_month:%Y-%m-%d}",
                "line_type": "credit",
                "model": None,
                "quantity": None,
                "unit_price_per_million": None,
                "amount": Decimal("-25.00"),
                "currency": "USD",
            }
        )
    if tax:
        # 8 % sales tax on moonshot's usage, on a line of its own (recoverable: not part of the run-rate)
        usage_usd = sum(
            (line["amount"] for line in lines if line["provider"] == "moonshot" and line["line_type"] != "credit"),
            Decimal(0),
        )
        lines.append(
            {
                "provider": "moonshot",
                "invoice_id": f"moonshot-{month:%Y%m}",
                "line_id": "950",
                "period_start": f"{month:%Y-%m-%d}",
                "period_end": f"{next_month:%Y-%m-%d}",
                "line_type": "tax",
                "model": None,
                "quantity": None,
                "unit_price_per_million": None,
                "amount": (usage_usd * Decimal("0.08")).quantize(Decimal("0.01")),
                "currency": "USD",
            }
        )
    return lines


def _write_csv(path: Path, rows: list[dict], columns: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow(
                {
                    k: (_iso(v) if isinstance(v, datetime) else ("" if v is None else v))
                    for k, v in r.items()
                    if k in columns
                }
            )


def _write_requests(path_stem: Path, rows: list[dict], fmt: str) -> Path:
    path_stem.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        path = path_stem.with_suffix(".csv")
        _write_csv(path, rows, REQUEST_COLUMNS)
    elif fmt == "csv.gz":
        plain = path_stem.with_suffix(".csv")
        _write_csv(plain, rows, REQUEST_COLUMNS)
        path = path_stem.with_suffix(".csv.gz")
        path.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
        plain.unlink()
    elif fmt == "jsonl.gz":
        path = path_stem.with_suffix(".jsonl.gz")
        text = "".join(
            json.dumps({k: (_iso(v) if isinstance(v, datetime) else v) for k, v in r.items()}) + "\n" for r in rows
        )
        # mtime=0: the same seed writes the same bytes
        path.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        path = path_stem.with_suffix(".parquet")
        pl.DataFrame(
            rows,
            schema={
                "request_id": pl.String,
                "task_id": pl.String,
                "attempt": pl.Int32,
                "started_at": pl.Datetime("ms"),
                "route": pl.String,
                "provider": pl.String,
                "cluster_id": pl.String,
                "model": pl.String,
                "cache_hit_input_tokens": pl.Int64,
                "cache_miss_input_tokens": pl.Int64,
                "output_tokens": pl.Int64,
                "reasoning_tokens": pl.Int64,
                "latency_ms": pl.Int64,
                "status": pl.String,
                "team": pl.String,
            },
        ).write_parquet(path)
    return path


def _on_demand_charges(sc: Scenario, first: datetime, end: datetime) -> list[dict]:
    """The burst node: weekly around the clock (Monday to Monday), or on weekdays' working hours (a charge a day)."""
    charges = []
    if sc.on_demand == "weekly":
        week_start = first
        while week_start < end:
            days_to_monday = (7 - week_start.weekday()) % 7 or 7
            week_end = min(week_start + timedelta(days=days_to_monday), end)
            hours = Decimal(int((week_end - week_start).total_seconds() // 3600))
            charges.append(
                {"charge_id": f"od-{week_start:%Y%m%d}", "start": week_start, "end": week_end, "hours": hours}
            )
            week_start = week_end
    else:
        day = first
        while day < end:
            if day.weekday() < 5:
                first_hour, last_hour = sc.on_demand_hours
                charges.append(
                    {
                        "charge_id": f"od-{day:%Y%m%d}",
                        "start": day + timedelta(hours=first_hour),
                        "end": day + timedelta(hours=last_hour),
                        "hours": Decimal(last_hour - first_hour),
                    }
                )
            day += timedelta(days=1)
    return [
        {
            "charge_id": c["charge_id"],
            "cluster_id": CLUSTER,
            "charge_start": _iso(c["start"]),
            "charge_end": _iso(c["end"]),
            "kind": "on_demand",
            "quantity": c["hours"],
            "unit": "node_hour",
            "unit_price": "60.00",
            "amount": c["hours"] * Decimal("60.00"),
            "currency": "USD",
        }
        for c in charges
    ]


def _load_tests() -> list[dict]:
    return [
        {
            "sweep_id": sweep,
            "cluster_id": CLUSTER,
            "concurrency": c,
            "measured_at": _iso(at + timedelta(minutes=10 * i)),
            "tokens_per_second": tps,
            "p95_latency_ms": p95,
            "p50_latency_ms": p50,
            "nodes": 1,  # the sweeps ran on the owned server alone
        }
        for sweep, at, points in SWEEPS
        for i, (c, tps, p50, p95) in enumerate(points)
    ]


def price_rows() -> list[dict[str, object]]:
    """The price catalogue's rows (both samples)."""
    return [
        {
            "provider": p.provider,
            "model": MODEL,
            "effective_from": _iso(p.effective_from),
            "cache_hit_input_per_million": p.hit,
            "cache_miss_input_per_million": p.miss,
            "output_per_million": p.out,
            "currency": "USD",
        }
        for p in PRICES
    ]


def _write_fixed_files(out: Path, sc: Scenario, starts: list[datetime], stats: dict[str, int]) -> None:
    """The files that do not grow month by month: prices, hardware, cluster charges, capacity sweeps."""
    prices = price_rows()
    _write_csv(out / "prices" / "prices.csv", prices, list(prices[0]))
    stats["prices"] = len(prices)

    hardware = [
        {
            "asset_id": "b200-server-01",
            "cluster_id": CLUSTER,
            "purchase_price": "395048.00",
            "in_service_date": f"{starts[0]:%Y-%m-%d}",
            "life_months": 36,
            "salvage_value": "0",
            "currency": "USD",
        }
    ]
    _write_csv(out / "hardware" / "hardware.csv", hardware, list(hardware[0]))
    stats["hardware"] = 1

    charges = _on_demand_charges(sc, starts[0], starts[-1])
    _write_csv(out / "cluster-charges" / "on_demand.csv", charges, list(charges[0]))
    stats["cluster-charges"] = len(charges)

    if sc.sweeps:
        points = _load_tests()
        _write_csv(out / "load-tests" / "sweeps.csv", points, list(points[0]))
        stats["load-tests"] = len(points)


def write_sample(
    out: Path,
    seed: int = 7,
    start: str = "2026-07",
    months: int | None = None,
    tasks_per_month: int | None = None,
    scenario: str = "growth",
) -> dict[str, int]:
    """Write a landing folder under ``out``; returns rows written per kind.

    ``tasks_per_month`` (tasks per route a month) overrides the scenario's volumes, ``months`` its length.
    """
    sc = SCENARIOS[scenario]
    months = months or sc.months
    rng = random.Random(seed)
    starts = _month_starts(start, months + 1)
    stats = {
        k: 0
        for k in ("prices", "hardware", "cluster-charges", "opex", "load-tests", "invoices", "requests", "outcomes")
    }

    _write_fixed_files(out, sc, starts, stats)

    counter = [0]
    for i, (m, nm) in enumerate(zip(starts, starts[1:])):
        opex = [
            {
                "month": f"{m:%Y-%m}",
                "cluster_id": CLUSTER,
                "category": cat,
                "amount": amt,
                "currency": "USD",
                "note": "sample",
            }
            for cat, amt in sc.opex.items()
        ]
        _write_csv(out / "opex" / f"opex-{m:%Y-%m}.csv", opex, list(opex[0]))
        stats["opex"] += len(opex)

        tasks = {
            "api": sc.api_tasks[min(i, len(sc.api_tasks) - 1)],
            "self_hosted": sc.self_hosted_tasks[min(i, len(sc.self_hosted_tasks) - 1)],
        }
        if tasks_per_month is not None:
            tasks = {"api": tasks_per_month, "self_hosted": tasks_per_month}
        requests, outcomes = _requests_for_month(rng, sc, m, nm, tasks, counter)
        fmt = sc.request_formats[i % len(sc.request_formats)]
        _write_requests(out / "requests" / f"requests-{m:%Y-%m}", requests, fmt)
        stats["requests"] += len(requests)
        outcome_file = out / "outcomes" / f"outcomes-{m:%Y-%m}.csv"
        _write_csv(
            outcome_file, outcomes, ["task_id", "accepted", "decided_at", "request_id", "review_minutes", "reason"]
        )
        if sc.gzip_outcomes:
            outcome_file.with_suffix(".csv.gz").write_bytes(gzip.compress(outcome_file.read_bytes(), mtime=0))
            outcome_file.unlink()
        stats["outcomes"] += len(outcomes)

        lines = _invoice_lines(requests, m, nm, credit=(i == min(sc.credit_month, months - 1)), tax=(i == sc.tax_month))
        if sc.provider_exports:
            last = i == months - 1
            _write_provider_exports(out, requests, m, dropped=37 if last else 0, costs=last)
            if last:  # the export replaces Moonshot's usage lines; its tax line stays an invoice of its own
                lines = [x for x in lines if x["provider"] != "moonshot" or x["line_type"] in ("credit", "tax")]
        _write_csv(out / "invoices" / f"invoices-{m:%Y-%m}.csv", lines, list(lines[0]))
        stats["invoices"] += len(lines)
        if sc.eval_cases and i == months - 1:
            stats["eval-tasks"], stats["gate-checks"] = _write_gate(out, sc, requests, outcomes, m)
    return stats


#: The evaluation set's categories (seed 001: "the actual coding, long-context, vision, and tool-calling mix").
EVAL_CATEGORIES = ("coding", "long_context", "vision", "tool_calling")
#: The sample's failure drills: (drill, day of the month, passed, note). Queue growth fails: the cluster cannot
#: add a node within the burst (a 13-minute cold start).
GATE_DRILLS_RUN = (
    ("node_loss", 21, True, "one of 8 GPUs taken out: requests drained and resumed in 4 min"),
    ("rollback", 22, True, "rolled back to the previous engine build in 6 min"),
    ("queue_growth", 23, False, "queue passed 400 requests; no node could be added before the 13-minute cold start"),
    ("long_context_burst", 24, True, "40 requests of 200k tokens at once: p95 within the target"),
    ("malformed_tool_call", 27, True, "bad JSON arguments answered with a retryable error"),
)


def _write_gate(
    out: Path, sc: Scenario, requests: list[dict], outcomes: list[dict], month: datetime
) -> tuple[int, int]:
    """The deployment gate of the month: ``sc.eval_cases`` cases, each a task on the API and one on the cluster
    with the same acceptance (so the accepted shares match and the failed drill is what fails the gate), spread
    over the month's days 3 to 28; and the drills. Draws nothing from the random generator (the other files stay
    as they are)."""
    final = {o["task_id"]: o["accepted"] for o in outcomes}  # the latest decision of a task is its last row
    last = {r["task_id"]: r for r in requests}  # requests are in time order: a task's last attempt
    first = {}
    for r in requests:
        first.setdefault(r["task_id"], r)
    window = (month + timedelta(days=2), month + timedelta(days=28))
    candidates = {
        route: sorted(
            t
            for t, r in last.items()
            if r["route"] == route and window[0] <= first[t]["started_at"] < window[1] and r["latency_ms"] < 300_000
        )
        for route in ("api", "self_hosted")
    }
    accepted_cases = sc.eval_cases - sc.eval_cases // 8  # 35 of 40 accepted on each route
    picked = {}
    for route, tasks in candidates.items():
        yes = [t for t in tasks if final[t]]
        no = [t for t in tasks if not final[t]]
        n_no = sc.eval_cases - accepted_cases
        chosen = yes[:: max(1, len(yes) // accepted_cases)][:accepted_cases] + no[:: max(1, len(no) // n_no)][:n_no]
        picked[route] = sorted(chosen, key=lambda t: first[t]["started_at"])
    rows = [
        {"eval_set": f"k3-gate-{month:%Y-%m}", "case_id": f"case-{i + 1:02d}", "task_id": task,
         "category": EVAL_CATEGORIES[i % len(EVAL_CATEGORIES)]}
        for route in ("api", "self_hosted")
        for i, task in enumerate(picked[route])
    ]  # fmt: skip
    _write_csv(out / "eval-tasks" / f"eval-{month:%Y-%m}.csv", rows, ["eval_set", "case_id", "task_id", "category"])
    drills = [
        {"eval_set": f"k3-gate-{month:%Y-%m}", "check": drill, "cluster_id": CLUSTER,
         "run_at": _iso(month + timedelta(days=day - 1, hours=10)), "passed": str(passed).lower(), "note": note}
        for drill, day, passed, note in GATE_DRILLS_RUN
    ]  # fmt: skip
    _write_csv(out / "gate-checks" / f"drills-{month:%Y-%m}.csv", drills, list(drills[0]))
    return len(rows), len(drills)
