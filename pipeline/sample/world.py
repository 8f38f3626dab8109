"""The world the sample data simulates: the model, the cluster, the providers' prices, the scenarios and the
capacity sweeps, and the helpers every sample file uses (``pipeline.sample.demo`` writes the files)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path


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
    "workload",
]
TEAMS = ["search", "coding-agent", "support", "research"]
#: each team's kind of work; on the API, the work sent to moonshot (whose cache reads are cheap) is the team's long
#: prompts that repeat, so it is logged as long_context: the cache-heavy workload
TEAM_WORKLOADS = {"search": "tool_calling", "coding-agent": "coding", "support": "chat", "research": "analysis"}


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
    meters: bool = False
    """The cluster's engine and GPU metrics, hour by hour, in the three formats the ledger reads
    (``pipeline.sample.meters``), with a working day of lost request logs planted in the third month."""


SCENARIOS: dict[str, Scenario] = {
    "growth": Scenario(
        months=4,
        api_tasks=(2000,),
        self_hosted_tasks=(18_000, 30_000, 46_000, 72_000),
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
        meters=True,
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


def month_starts(start: str, months: int) -> list[datetime]:
    y, m = (int(x) for x in start.split("-"))
    out = []
    for _ in range(months):
        out.append(datetime(y, m, 1))
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def price_at(provider: str, ts: datetime) -> PriceRow:
    rows = [p for p in PRICES if p.provider == provider and p.effective_from <= ts]
    return max(rows, key=lambda p: p.effective_from)


def iso(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ts.microsecond // 1000:03d}Z"


def write_csv(path: Path, rows: list[dict], columns: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow(
                {
                    k: (iso(v) if isinstance(v, datetime) else ("" if v is None else v))
                    for k, v in r.items()
                    if k in columns
                }
            )


def price_rows() -> list[dict[str, object]]:
    """The price catalogue's rows (both samples)."""
    return [
        {
            "provider": p.provider,
            "model": MODEL,
            "effective_from": iso(p.effective_from),
            "cache_hit_input_per_million": p.hit,
            "cache_miss_input_per_million": p.miss,
            "output_per_million": p.out,
            "currency": "USD",
        }
        for p in PRICES
    ]
