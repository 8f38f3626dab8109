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

import math
import gzip
import json
import random
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl

from pipeline.sample.world import (
    MODEL,
    CLUSTER,
    REQUEST_COLUMNS,
    TEAM_WORKLOADS,
    TEAMS,
    Scenario,
    SCENARIOS,
    SWEEPS,
    month_starts,
    iso,
    write_csv,
    price_rows,
)
from pipeline.sample.billing import invoice_lines, write_provider_exports
from pipeline.sample.gate import write_gate
from pipeline.sample.meters import Meters, write_meters


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
                        "workload": "long_context" if provider == "moonshot" else TEAM_WORKLOADS[team],
                    }
                )
                if status == "ok":
                    last_ok = (req_id, t + timedelta(milliseconds=latency))
                t = t + timedelta(milliseconds=latency + rng.randint(1000, 30_000))
            assert last_ok is not None
            outcomes += _decisions(rng, sc, task_id, last_ok)
    requests.sort(key=lambda r: (r["started_at"], r["request_id"]))
    return requests, outcomes


def _write_requests(path_stem: Path, rows: list[dict], fmt: str) -> Path:
    path_stem.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        path = path_stem.with_suffix(".csv")
        write_csv(path, rows, REQUEST_COLUMNS)
    elif fmt == "csv.gz":
        plain = path_stem.with_suffix(".csv")
        write_csv(plain, rows, REQUEST_COLUMNS)
        path = path_stem.with_suffix(".csv.gz")
        path.write_bytes(gzip.compress(plain.read_bytes(), mtime=0))
        plain.unlink()
    elif fmt == "jsonl.gz":
        path = path_stem.with_suffix(".jsonl.gz")
        text = "".join(
            json.dumps({k: (iso(v) if isinstance(v, datetime) else v) for k, v in r.items()}) + "\n" for r in rows
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
                "workload": pl.String,
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
            "charge_start": iso(c["start"]),
            "charge_end": iso(c["end"]),
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
            "measured_at": iso(at + timedelta(minutes=10 * i)),
            "tokens_per_second": tps,
            "p95_latency_ms": p95,
            "p50_latency_ms": p50,
            "nodes": 1,  # the sweeps ran on the owned server alone
        }
        for sweep, at, points in SWEEPS
        for i, (c, tps, p50, p95) in enumerate(points)
    ]


def _write_fixed_files(out: Path, sc: Scenario, starts: list[datetime], stats: dict[str, int]) -> None:
    """The files that do not grow month by month: prices, hardware, cluster charges, capacity sweeps."""
    prices = price_rows()
    write_csv(out / "prices" / "prices.csv", prices, list(prices[0]))
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
    write_csv(out / "hardware" / "hardware.csv", hardware, list(hardware[0]))
    stats["hardware"] = 1

    charges = _on_demand_charges(sc, starts[0], starts[-1])
    write_csv(out / "cluster-charges" / "on_demand.csv", charges, list(charges[0]))
    stats["cluster-charges"] = len(charges)

    if sc.sweeps:
        points = _load_tests()
        write_csv(out / "load-tests" / "sweeps.csv", points, list(points[0]))
        stats["load-tests"] = len(points)


def _write_opex(out: Path, sc: Scenario, m: datetime) -> int:
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
    write_csv(out / "opex" / f"opex-{m:%Y-%m}.csv", opex, list(opex[0]))
    return len(opex)


def _write_outcomes(path: Path, outcomes: list[dict], gz: bool) -> int:
    write_csv(path, outcomes, ["task_id", "accepted", "decided_at", "request_id", "review_minutes", "reason"])
    if gz:
        path.with_suffix(".csv.gz").write_bytes(gzip.compress(path.read_bytes(), mtime=0))
        path.unlink()
    return len(outcomes)


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
    starts = month_starts(start, months + 1)
    stats = {
        k: 0
        for k in ("prices", "hardware", "cluster-charges", "opex", "load-tests", "invoices", "requests", "outcomes")
    }

    _write_fixed_files(out, sc, starts, stats)

    counter = [0]
    meters, charges = Meters(), _on_demand_charges(sc, starts[0], starts[-1])
    for i, (m, nm) in enumerate(zip(starts, starts[1:])):
        stats["opex"] += _write_opex(out, sc, m)
        tasks = {
            "api": sc.api_tasks[min(i, len(sc.api_tasks) - 1)],
            "self_hosted": sc.self_hosted_tasks[min(i, len(sc.self_hosted_tasks) - 1)],
        }
        if tasks_per_month is not None:
            tasks = {"api": tasks_per_month, "self_hosted": tasks_per_month}
        requests, outcomes = _requests_for_month(rng, sc, m, nm, tasks, counter)
        _write_requests(
            out / "requests" / f"requests-{m:%Y-%m}", requests, sc.request_formats[i % len(sc.request_formats)]
        )
        stats["requests"] += len(requests)
        if sc.meters:
            engine, gpus = write_meters(meters, out, i, (m, nm), requests, charges)
            stats["engine-metrics"] = stats.get("engine-metrics", 0) + engine
            stats["gpu-metrics"] = stats.get("gpu-metrics", 0) + gpus
        stats["outcomes"] += _write_outcomes(out / "outcomes" / f"outcomes-{m:%Y-%m}.csv", outcomes, sc.gzip_outcomes)

        lines = invoice_lines(requests, m, nm, credit=(i == min(sc.credit_month, months - 1)), tax=(i == sc.tax_month))
        if sc.provider_exports:
            last = i == months - 1
            write_provider_exports(out, requests, m, dropped=37 if last else 0, costs=last)
            if last:  # the export replaces Moonshot's usage lines; its tax line stays an invoice of its own
                lines = [x for x in lines if x["provider"] != "moonshot" or x["line_type"] in ("credit", "tax")]
        write_csv(out / "invoices" / f"invoices-{m:%Y-%m}.csv", lines, list(lines[0]))
        stats["invoices"] += len(lines)
        if sc.eval_cases and i == months - 1:
            stats["eval-tasks"], stats["gate-checks"] = write_gate(out, sc, requests, outcomes, m)
    return stats
