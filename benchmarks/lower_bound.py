"""A lower bound for the nightly: the marts' own work with none of the guarantees, beside DuckDB's floor.

Usage: python benchmarks/lower_bound.py LANDING [--memory-limit 2GB] [--ledger LEDGER] [--work DIR]

LANDING is a folder of ``costledger sample --requests N --format parquet``. In one run, each part in turn:

(a)  the floor of ``costledger benchmark`` (a process of its own, run before and after the parts: the machine's speed
     drifts, so both are shown and the parts are counted in the mean of the two);
L    the heaviest work of the contract marts, straight from the Parquet files, written nowhere: every request priced
     and summed by month and route (tokens, cost, distinct tasks, p50 / p95 latency), every task resolved over its
     attempts (single-attempt tasks told from retried ones, as ``int_tasks_resolved`` does, which is what makes it
     affordable) and counted by the month and route of its accepted attempt, busy time per cluster and day;
S    the state a nightly must keep to run the next night incrementally and to deduplicate against every key ever
     loaded: one row per task (written as it is resolved; the accepted tasks are then counted from it) and every
     request's key, in a DuckDB file, checkpointed;
C    the guarantees' per-row work in its least form: every row tested against costledger's request suite (the
     SQL conditions ingest evaluates) in one scan, and every request's key tested unique (one group by);
H    hashing every landing file once (SHA-256): how the nightly knows a file is new and its lake copy intact;
P    process start-up with costledger's imports, and Great Expectations' import and context in a process of its own
     (the first file's commit waits for it; it overlaps the rest on the other core).

L + S is what any ledger that runs incrementally pays without a single guarantee; C + H + P is the least the guarantees
add (checked rows, no duplicate, files known by their hash, GX's process): no quarantine, lake, transaction, published
snapshot or GX check of a sample is counted. With --ledger, L's figures are checked against that ledger's marts
(requests, tasks and accepted tasks per month and route, and the API's metered cost to the cent), so the bound does the
same work. Not a test: a measurement, like ``costledger benchmark``.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.benchmark import FLOOR_SCRIPT, run_measured  # noqa: E402
from schemas.expectations import suites  # noqa: E402

PRICES = """
CREATE TABLE prices AS
SELECT
    provider,
    model,
    CAST(effective_from AS TIMESTAMP) AS valid_from,
    coalesce(lead(CAST(effective_from AS TIMESTAMP)) OVER (PARTITION BY provider, model ORDER BY effective_from),
             TIMESTAMP '9999-12-31') AS valid_until,
    CAST(cache_hit_input_per_million AS DECIMAL(18, 6)) AS p_hit,
    CAST(cache_miss_input_per_million AS DECIMAL(18, 6)) AS p_miss,
    CAST(output_per_million AS DECIMAL(18, 6)) AS p_out
FROM read_csv($prices, all_varchar = TRUE)
"""

# every request with its month and cost (API rows at their provider's price, self-hosted at the reference API's)
PRICED = """(
    SELECT
        r.request_id, r.task_id, r.started_at, r.route, r.provider, r.cluster_id, r.latency_ms, r.accepted,
        r.cache_hit_input_tokens, r.cache_miss_input_tokens, r.output_tokens, r.reasoning_tokens,
        CAST(date_trunc('month', r.started_at) AS DATE) AS month,
        CAST((r.cache_hit_input_tokens * p.p_hit + r.cache_miss_input_tokens * p.p_miss
              + (r.output_tokens + r.reasoning_tokens) * p.p_out) * CAST(0.000001 AS DECIMAL(7, 6)) AS DECIMAL(38, 12))
            AS cost
    FROM read_parquet($requests) AS r
    LEFT JOIN prices AS p
        ON p.provider = CASE WHEN r.route = 'api' THEN r.provider ELSE 'moonshot' END
        AND p.model = CASE WHEN r.route = 'api' THEN r.model ELSE 'kimi-k3' END
        AND r.started_at >= p.valid_from AND r.started_at < p.valid_until
)"""

VOLUME = f"""
SELECT month, route, count(*) AS requests, count(DISTINCT task_id) AS tasks,
    sum(cache_hit_input_tokens), sum(cache_miss_input_tokens), sum(output_tokens), sum(reasoning_tokens),
    sum(cost) FILTER (WHERE route = 'api') AS metered,
    quantile_disc(latency_ms, 0.5), quantile_disc(latency_ms, 0.95)
FROM {PRICED}
GROUP BY ALL
"""

# each task: accepted if an attempt was judged accepted; its month and route are its last accepted attempt's, else its
# last attempt's ("last": started_at, then request_id). Single-attempt tasks need no ordered aggregate.
TASK_ROWS = f"""
WITH pr AS (SELECT task_id, request_id, started_at, route, month, cluster_id, cost, latency_ms, accepted FROM {PRICED}),
retried AS (SELECT task_id FROM pr GROUP BY task_id HAVING count(*) > 1)
SELECT task_id, coalesce(accepted, FALSE) AS accepted, route, month, cluster_id, cost, latency_ms
FROM pr ANTI JOIN retried USING (task_id)
UNION ALL
SELECT
    task_id,
    coalesce(bool_or(accepted), FALSE),
    coalesce(arg_max(route, (started_at, request_id)) FILTER (WHERE accepted),
             arg_max(route, (started_at, request_id))),
    coalesce(arg_max(month, (started_at, request_id)) FILTER (WHERE accepted),
             arg_max(month, (started_at, request_id))),
    arg_max(cluster_id, (started_at, request_id)) FILTER (WHERE accepted),
    arg_max(cost, (started_at, request_id)) FILTER (WHERE accepted),
    arg_max(latency_ms, (started_at, request_id)) FILTER (WHERE accepted)
FROM pr SEMI JOIN retried USING (task_id)
GROUP BY task_id
"""

ACCEPTED = """
SELECT month, route, count(*) FILTER (WHERE accepted) AS accepted_tasks,
    sum(cost) FILTER (WHERE accepted), sum(latency_ms) FILTER (WHERE accepted AND route = 'self_hosted')
FROM ({tasks})
GROUP BY ALL
"""

# busy time: each self-hosted request adds what lies after the latest end of those started before it (per cluster)
BUSY = """
SELECT cluster_id, CAST(s AS DATE) AS day,
    sum(date_diff('millisecond', greatest(s, coalesce(prev, s)), greatest(e, coalesce(prev, s)))) AS busy_ms
FROM (
    SELECT cluster_id, started_at AS s, started_at + to_milliseconds(latency_ms) AS e,
        max(started_at + to_milliseconds(latency_ms)) OVER (
            PARTITION BY cluster_id ORDER BY started_at, latency_ms ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING
        ) AS prev
    FROM read_parquet($requests)
    WHERE route = 'self_hosted' AND latency_ms > 0
)
GROUP BY ALL
"""

# the suite's conditions come from costledger's own code (schemas.expectations), never from input
CHECK = "SELECT count(*) FILTER (WHERE {bad}) FROM read_parquet($requests)"

STARTUP = "import pipeline.cli.main, pipeline.run.nightly, pipeline.ingest.files, pipeline.transform.build"
GX_START = "from pipeline.ingest.validate import _batch_definition; _batch_definition()"


def _timed(con: duckdb.DuckDBPyConnection, sql: str, params: dict) -> tuple[float, list]:
    t = time.perf_counter()
    rows = con.execute(sql, params).fetchall()
    return time.perf_counter() - t, rows


def _floor(landing: Path, memory: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        s, _, code = run_measured(
            [sys.executable, "-c", FLOOR_SCRIPT, str(Path(tmp) / "floor.duckdb"), _requests(landing), memory]
        )
    if code != 0:
        raise SystemExit(f"the floor failed (exit {code})")
    return s


def _requests(landing: Path) -> str:
    return str(landing / "requests" / "*.parquet")


def _hash_all(landing: Path) -> float:
    t = time.perf_counter()
    for path in sorted(p for p in landing.rglob("*") if p.is_file()):
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
    return time.perf_counter() - t


def measure(landing: Path, memory: str, work: Path) -> tuple[list[tuple[str, float]], list, list]:
    """The parts' seconds (floors first and last), and L's volume and accepted rows for the check."""
    parts: list[tuple[str, float]] = [("(a) floor, before", _floor(landing, memory))]
    params = {"requests": _requests(landing)}
    db = work / "lower_bound.duckdb"
    db.unlink(missing_ok=True)
    con = duckdb.connect(str(db), config={"memory_limit": memory})
    con.execute("SET enable_progress_bar = false")
    con.execute(PRICES, {"prices": str(landing / "prices" / "*.csv")})
    s, volume = _timed(con, VOLUME, params)
    parts.append(("L: requests priced, by month and route (tokens, cost, distinct tasks, p50/p95)", s))
    s, _ = _timed(con, f"CREATE TABLE tasks AS {TASK_ROWS}", params)
    parts.append(("L + S: every task resolved over its attempts, one row per task written", s))
    s, accepted = _timed(con, ACCEPTED.format(tasks="SELECT * FROM tasks"), {})
    parts.append(("L: accepted tasks by month and route, from the tasks", s))
    s, _ = _timed(con, BUSY, params)
    parts.append(("L: busy time per cluster and day", s))
    t = time.perf_counter()
    con.execute("CREATE TABLE request_keys AS SELECT request_id FROM read_parquet($requests)", params)
    con.execute("CHECKPOINT")
    parts.append(("S: every request's key written, and the checkpoint", time.perf_counter() - t))
    present = {r[0] for r in con.execute("DESCRIBE SELECT * FROM read_parquet($requests)", params).fetchall()}
    # the suite's checks on the columns the files have (an absent optional column is NULL: nothing to test)
    bad = [c.sql_bad_when() for c in suites()["requests"] if set(re.findall(r'"(\w+)"', c.sql_bad_when())) <= present]
    s, _ = _timed(con, CHECK.format(bad=" OR ".join(bad)), params)
    parts.append((f"C: every row checked: costledger's request suite ({len(bad)} conditions), one scan", s))
    s, _ = _timed(
        con,
        "SELECT count(*) FROM (SELECT request_id FROM read_parquet($requests) GROUP BY 1 HAVING count(*) > 1)",
        params,
    )
    parts.append(("C: every request's key checked unique (one group by)", s))
    con.close()
    db.unlink(missing_ok=True)
    parts.append(("H: every landing file hashed once (SHA-256)", _hash_all(landing)))
    for label, code in (("P: process start-up and costledger's imports", STARTUP), ("P: GX's import", GX_START)):
        s, _, rc = run_measured([sys.executable, "-c", code], cwd=ROOT)
        if rc != 0:
            raise SystemExit(f"{label} failed (exit {rc})")
        parts.append((label, s))
    parts.append(("(a) floor, after", _floor(landing, memory)))
    return parts, volume, accepted


def check(ledger: Path, volume: list, accepted: list) -> list[str]:
    """L's figures against the ledger's marts: requests, tasks, accepted tasks, the API's metered cost (cents)."""
    con = duckdb.connect(str(ledger), read_only=True)
    marts = {
        (m, r): (req, tasks, acc, cost)
        for m, r, req, tasks, acc, cost in con.execute(
            "SELECT month, route, requests, tasks, accepted_tasks, cost_usd FROM marts.monthly_route_cost"
        ).fetchall()
    }
    con.close()
    mine = {(row[0], row[1]): [row[2], row[3], 0, row[8]] for row in volume}
    for m, r, n, *_ in accepted:
        mine.setdefault((m, r), [0, 0, 0, None])[2] = n
    differences = []
    for key, (req, tasks, acc, metered) in sorted(mine.items()):
        theirs = marts.get(key)
        if theirs is None:
            differences.append(f"{key}: not in the ledger's marts")
            continue
        cents = Decimal("0.01")
        api = key[1] == "api"
        ours = (req, tasks, acc, Decimal(metered).quantize(cents) if api else None)
        expected = (theirs[0], theirs[1], theirs[2], Decimal(theirs[3]).quantize(cents) if api else None)
        if ours != expected:
            differences.append(f"{key}: lower bound {ours} != ledger {expected}")
    return differences


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("landing", type=Path)
    parser.add_argument("--memory-limit", default="2GB")
    parser.add_argument("--ledger", type=Path, help="a ledger built from LANDING: L's figures are checked against it")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()), help="where S's file is written")
    args = parser.parse_args()
    if not (args.landing / "requests").is_dir():
        print(f"error: {args.landing} has no requests/ folder (make one with costledger sample --format parquet)")
        return 2
    try:
        parts, volume, accepted = measure(args.landing, args.memory_limit, args.work)
    except duckdb.Error as exc:  # files not of costledger sample's shape, a memory limit that does not parse
        print(f"error: {type(exc).__name__}: {exc}".splitlines()[0])
        return 1
    floor = (parts[0][1] + parts[-1][1]) / 2
    rows = sum(r[2] for r in volume)
    print(f"{rows:,} request rows in {args.landing}; memory_limit {args.memory_limit}\n")
    print("| part | s | floors |\n|---|---:|---:|")
    for label, s in parts:
        print(f"| {label} | {s:.2f} | {s / floor:.2f} |")
    lean = sum(s for label, s in parts if label[:1] in ("L", "S"))
    guarded = lean + sum(s for label, s in parts if label[:1] in ("C", "H"))
    start = next(s for label, s in parts if label.startswith("P: process"))
    gx = next(s for label, s in parts if label.startswith("P: GX"))
    print(f"| L + S: the marts and the state, no guarantee | {lean:.2f} | {lean / floor:.2f} |")
    print(f"| L + S + C + H: and the least per-row guarantees | {guarded:.2f} | {guarded / floor:.2f} |")
    print(f"| L + S + C + H + start-up | {guarded + start:.2f} | {(guarded + start) / floor:.2f} |")
    print(f"\nfloor = {floor:.2f} s (mean of before and after); GX's import {gx:.2f} s = {gx / floor:.2f} floors")
    if args.ledger:
        differences = check(args.ledger, volume, accepted)
        print(f"checked against {args.ledger}: " + ("; ".join(differences) if differences else "all equal"))
        return 1 if differences else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
