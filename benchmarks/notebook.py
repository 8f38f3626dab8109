"""The pandas notebook: benchmark peer (a'') of ``costledger benchmark``.

What an analyst would write in a notebook instead of costledger: read the request Parquet files and the
price list, price every request, resolve each task (its last attempt judged accepted, else its last
attempt, gives its month and route), group by month and route. No validation, no lake, no crash safety;
money in float64 as pandas does (the benchmark checks the result against costledger's marts to the cent).

Run:  python benchmarks/notebook.py LANDING OUT.csv
Writes one row per month and route: requests, tasks, accepted_tasks, the four token sums, metered_usd
(API rows at their provider's price) and accepted_cost_usd (the accepted attempts at the API price).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

REFERENCE = ("moonshot", "kimi-k3")  # costledger's default reference API for self-hosted rows


def price(requests: pd.DataFrame, prices: pd.DataFrame) -> pd.Series:
    """Each request's cost at the price row in force at its start (its own provider's, or the reference's)."""
    api = requests["route"] == "api"
    keyed = pd.DataFrame(
        {
            "row": range(len(requests)),
            "started_at": requests["started_at"].to_numpy(),
            "provider": requests["provider"].where(api, REFERENCE[0]).to_numpy(),
            "model": requests["model"].where(api, REFERENCE[1]).to_numpy(),
        }
    ).sort_values("started_at")
    matched = pd.merge_asof(
        keyed,
        prices.sort_values("effective_from"),
        left_on="started_at",
        right_on="effective_from",
        by=["provider", "model"],
    ).sort_values("row")
    hit = requests["cache_hit_input_tokens"].to_numpy()
    miss = requests["cache_miss_input_tokens"].to_numpy()
    out = (requests["output_tokens"] + requests["reasoning_tokens"]).to_numpy()
    cost = (
        hit * matched["cache_hit_input_per_million"].to_numpy()
        + miss * matched["cache_miss_input_per_million"].to_numpy()
        + out * matched["output_per_million"].to_numpy()
    ) / 1e6
    return pd.Series(cost, index=requests.index)


def monthly(landing: Path) -> pd.DataFrame:
    requests = pd.read_parquet(landing / "requests")
    prices = pd.read_csv(landing / "prices" / "prices.csv")
    prices["effective_from"] = (
        pd.to_datetime(prices["effective_from"]).dt.tz_localize(None).astype(requests["started_at"].dtype)
    )
    requests["cost"] = price(requests, prices)
    requests["month"] = requests["started_at"].dt.to_period("M").dt.to_timestamp()

    # tasks: the last accepted attempt (else the last attempt) by (started_at, request_id)
    ordered = requests.sort_values(["task_id", "started_at", "request_id"])
    last = ordered.groupby("task_id", sort=False).tail(1).set_index("task_id")
    accepted = ordered[ordered["accepted"]].groupby("task_id", sort=False).tail(1).set_index("task_id")
    tasks = last[["month", "route"]].copy()
    tasks.loc[accepted.index, ["month", "route"]] = accepted[["month", "route"]]
    tasks["accepted"] = tasks.index.isin(accepted.index)
    tasks["accepted_cost"] = accepted["cost"].reindex(tasks.index)

    volume = requests.groupby(["month", "route"]).agg(
        requests=("request_id", "size"),
        tasks=("task_id", "nunique"),
        cache_hit_input_tokens=("cache_hit_input_tokens", "sum"),
        cache_miss_input_tokens=("cache_miss_input_tokens", "sum"),
        output_tokens=("output_tokens", "sum"),
        reasoning_tokens=("reasoning_tokens", "sum"),
    )
    volume["metered_usd"] = requests[requests["route"] == "api"].groupby(["month", "route"])["cost"].sum()
    outcome = (
        tasks[tasks["accepted"]]
        .groupby(["month", "route"])
        .agg(accepted_tasks=("accepted", "size"), accepted_cost_usd=("accepted_cost", "sum"))
    )
    result = volume.join(outcome, how="outer").fillna({"accepted_tasks": 0, "metered_usd": 0.0})
    return result.reset_index()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python benchmarks/notebook.py LANDING OUT.csv")
    monthly(Path(sys.argv[1])).to_csv(sys.argv[2], index=False)
