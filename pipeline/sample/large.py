"""Large landing data for benchmarks: ``costledger sample --requests N --months M --format parquet``.

Streams one Parquet file of requests per day (vectorised with numpy and polars, so
100 M rows take minutes and memory stays at one day's rows), plus the small
reference files a nightly needs (prices, daily cluster charges, one owned server,
monthly opex). The request log carries the ``accepted`` column, so no outcomes file
is needed. Realistic shapes: half API (two providers), half self-hosted; retries;
cache hits; working-hours-heavy arrivals.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Callable

import numpy as np
import polars as pl

from pipeline.sample.world import CLUSTER, MODEL, PRICES, SCENARIOS, iso, month_starts, price_rows, write_csv


def _day_frame(rng: np.random.Generator, day: dt.datetime, n: int, first_index: int) -> pl.DataFrame:
    # arrivals weighted to working hours: 70% between 08:00 and 19:00
    busy = rng.random(n) < 0.7
    seconds = np.where(busy, rng.uniform(8 * 3600, 19 * 3600, n), rng.uniform(0, 86_400 - 3_600, n))
    seconds.sort()
    index = np.arange(first_index, first_index + n, dtype=np.int64)
    api = rng.random(n) < 0.5
    moonshot = rng.random(n) < 0.6
    prompt = rng.lognormal(10.6, 0.6, n).astype(np.int64)
    hit_share = np.where(api, np.where(moonshot, 0.6, 0.0), 0.5) * rng.uniform(0.7, 1.0, n)
    hit = (prompt * hit_share).astype(np.int64)
    retry = rng.random(n) < 0.08  # this request retries the previous request's task
    task = index.copy()
    task[1:][retry[1:]] = index[:-1][retry[1:]]
    status = np.full(n, "ok", dtype="<U7")
    failed_before_retry = np.zeros(n, dtype=bool)
    failed_before_retry[:-1] = retry[1:]
    status[failed_before_retry] = np.where(rng.random(failed_before_retry.sum()) < 0.5, "error", "timeout")
    ok = status == "ok"
    output = np.where(ok, rng.integers(300, 3000, n), 0)
    reasoning = np.where(ok, rng.integers(500, 9000, n), 0)
    latency = np.where(ok, (np.where(api, 25_000, 35_000) + (output + reasoning) * rng.uniform(6, 11, n)), 180_000)
    latency = np.where(status == "error", rng.integers(300, 4000, n), latency).astype(np.int64)
    started = np.datetime64(day.replace(tzinfo=None), "ms") + (seconds * 1000).astype("timedelta64[ms]")
    return pl.DataFrame(
        {
            "request_id": index,
            "task_id": task,
            "started_at": started,
            "route": np.where(api, "api", "self_hosted"),
            "provider": np.where(api, np.where(moonshot, "moonshot", "cometapi"), ""),
            "cluster_id": np.where(api, "", CLUSTER),
            "model": np.full(n, MODEL),
            "cache_hit_input_tokens": hit,
            "cache_miss_input_tokens": prompt - hit,
            "output_tokens": output,
            "reasoning_tokens": reasoning,
            "latency_ms": latency,
            "status": status,
            "accepted": ok & (rng.random(n) < 0.85),
        }
    ).with_columns(
        pl.format("r{}", pl.col("request_id")).alias("request_id"),
        pl.format("t{}", pl.col("task_id")).alias("task_id"),
        pl.col("provider").replace("", None),
        pl.col("cluster_id").replace("", None),
    )


def write_large_sample(
    out: Path,
    requests: int,
    months: int = 1,
    start: str = "2026-07",
    *,
    seed: int = 7,
    extra_day: bool = False,
    late_day: bool = False,
    progress: Callable[[int], None] | None = None,
) -> dict[str, int]:
    """Write ``requests`` rows spread over ``months`` months (one Parquet file per day).

    ``extra_day`` writes only the day after the period, with ``requests / days`` rows: the increment of benchmark (c).
    ``late_day`` writes a day's worth of new requests dated the 15th of the first month (a late or
    re-delivered file landing inside a month already loaded): the increment of benchmark (d).
    """
    rng = np.random.default_rng(seed)
    starts = month_starts(start, months + 1)
    first, end = starts[0], starts[-1]
    days = [first + dt.timedelta(days=i) for i in range((end - first).days)]
    per_day = requests // len(days)
    if extra_day or late_day:
        rng = np.random.default_rng(seed + (1 if extra_day else 2))
        day = end if extra_day else first + dt.timedelta(days=14)
        frame = _day_frame(rng, day, per_day, first_index=10**12 if extra_day else 2 * 10**12)
        path = out / "requests" / f"requests-{day:%Y-%m-%d}{'' if extra_day else '-late'}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.write_parquet(path, compression="zstd")
        return {"requests": per_day}
    stats = {"requests": 0, "prices": len(PRICES), "cluster-charges": 0, "hardware": 1, "opex": 0}
    (out / "requests").mkdir(parents=True, exist_ok=True)
    index = 0
    for i, day in enumerate(days):
        n = per_day + (requests - per_day * len(days) if i == len(days) - 1 else 0)
        frame = _day_frame(rng, day, n, index)
        frame.write_parquet(out / "requests" / f"requests-{day:%Y-%m-%d}.parquet", compression="zstd")
        index += n
        stats["requests"] += n
        if progress:
            progress(n)
    _write_cost_files(out, days, starts, stats)
    return stats


def _write_cost_files(out: Path, days: list[dt.datetime], starts: list[dt.datetime], stats: dict[str, int]) -> None:
    """Prices, a daily on-demand charge (with the extra day's), the server and each month's opex."""
    first, end = starts[0], starts[-1]
    prices = price_rows()
    write_csv(out / "prices" / "prices.csv", prices, list(prices[0]))
    # daily on-demand charges (with the extra day's, so an incremental day has its charge too)
    charges = [
        {
            "charge_id": f"od-{d:%Y%m%d}",
            "cluster_id": CLUSTER,
            "charge_start": iso(d),
            "charge_end": iso(d + dt.timedelta(days=1)),
            "kind": "on_demand",
            "amount": "1440.00",
            "currency": "USD",
        }
        for d in days + [end]
    ]
    write_csv(out / "cluster-charges" / "on_demand.csv", charges, list(charges[0]))
    stats["cluster-charges"] = len(charges)
    write_csv(
        out / "hardware" / "hardware.csv",
        [
            {
                "asset_id": "b200-server-01",
                "cluster_id": CLUSTER,
                "purchase_price": "395048.00",
                "in_service_date": f"{first:%Y-%m-%d}",
                "life_months": 36,
                "currency": "USD",
            }
        ],
        ["asset_id", "cluster_id", "purchase_price", "in_service_date", "life_months", "currency"],
    )
    for m in starts[:-1]:
        opex = [
            {"month": f"{m:%Y-%m}", "cluster_id": CLUSTER, "category": c, "amount": a, "currency": "USD"}
            for c, a in SCENARIOS["small-team"].opex.items()
        ]
        write_csv(out / "opex" / f"opex-{m:%Y-%m}.csv", opex, list(opex[0]))
        stats["opex"] += len(opex)
