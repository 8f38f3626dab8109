"""``costledger benchmark``: costledger's nightly against the DuckDB floor, in the same run.

For each size N (request rows, one Parquet file per day):

(a) floor      DuckDB alone: ``CREATE TABLE ... AS SELECT * FROM read_parquet(...)`` of the same
               files, plus one monthly aggregation (a fresh process, the same memory_limit);
(b) nightly    ``costledger nightly`` on the landing folder: ingest (typing, checks, Great
               Expectations, quarantine, lake), build of every model and audit, publish;
(c) one day    (largest N only) one more day of requests added to the ledger of (b), and the
               nightly run again (the day after the period: a new month);
(d) late day   (largest N only) a day's worth of new requests dated inside the loaded month
               (a late file): the whole month is recomputed, the other months are not.

Each step runs in its own process; wall seconds come from the parent's clock, peak RSS from
``wait4`` (the child's ``ru_maxrss``). Not part of the test suite.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

FLOOR_SCRIPT = """
import sys, duckdb
db, files, memory = sys.argv[1], sys.argv[2], sys.argv[3]
con = duckdb.connect(db)
con.execute("SET memory_limit = '" + memory + "'")
con.execute("CREATE TABLE requests AS SELECT * FROM read_parquet(?)", [files])
con.execute(
    "SELECT date_trunc('month', started_at) AS month, route, count(*), sum(cache_hit_input_tokens), "
    "sum(cache_miss_input_tokens), sum(output_tokens + reasoning_tokens), quantile_disc(latency_ms, 0.95) "
    "FROM requests GROUP BY ALL"
).fetchall()
con.close()
"""


@dataclass
class Step:
    size: int
    name: str
    rows: int
    seconds: float
    peak_rss_mb: float
    exit_code: int


def run_measured(cmd: list[str], cwd: Path | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of a child process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "GX_ANALYTICS_ENABLED": "false"},
    )
    assert proc.stderr is not None
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    err = proc.stderr.read()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 3, 4):
        sys.stderr.write(err[-3000:])
    return seconds, usage.ru_maxrss / 1024, proc.returncode


def machine() -> str:
    mem_kb = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores ({cpu or platform.machine()}), {mem_kb / 2**20:.0f} GiB RAM, "
        f"Python {platform.python_version()}"
    )


def benchmark(sizes: list[int], work: Path, months: int, memory_limit: str, log: Callable[[str], None]) -> list[Step]:
    steps: list[Step] = []
    work.mkdir(parents=True, exist_ok=True)
    settings = work / "bench.toml"
    settings.write_text(f'[ledger]\nmemory_limit = "{memory_limit}"\n', encoding="utf-8")
    from pipeline.sample_large import write_large_sample

    for i, n in enumerate(sizes):
        folder = work / f"n{n}"
        if folder.exists():
            shutil.rmtree(folder)
        landing = folder / "landing"
        t0 = time.perf_counter()
        write_large_sample(landing, n, months=months)
        log(f"N={n:,}: generated in {time.perf_counter() - t0:.1f} s")
        steps.append(Step(n, "generate", n, time.perf_counter() - t0, 0.0, 0))

        files = str(landing / "requests" / "*.parquet")
        s, rss, code = run_measured(
            [sys.executable, "-c", FLOOR_SCRIPT, str(folder / "floor.duckdb"), files, memory_limit]
        )
        steps.append(Step(n, "(a) floor", n, s, rss, code))
        log(f"N={n:,}: (a) floor {s:.1f} s, {rss:,.0f} MiB")
        (folder / "floor.duckdb").unlink(missing_ok=True)

        db = folder / "ledger.duckdb"
        cmd = [
            sys.executable,
            "-m",
            "pipeline.cli",
            "nightly",
            str(landing),
            "--db",
            str(db),
            "--settings",
            str(settings),
        ]
        s, rss, code = run_measured(cmd)
        steps.append(Step(n, "(b) nightly", n, s, rss, code))
        log(f"N={n:,}: (b) nightly {s:.1f} s, {rss:,.0f} MiB, exit {code}")

        if i == len(sizes) - 1:
            day = write_large_sample(landing, n, months=months, extra_day=True)["requests"]
            s, rss, code = run_measured(cmd)
            steps.append(Step(n, "(c) one more day", day, s, rss, code))
            log(f"N={n:,}: (c) one more day ({day:,} rows) {s:.1f} s, {rss:,.0f} MiB, exit {code}")
            late = write_large_sample(landing, n, months=months, late_day=True)["requests"]
            s, rss, code = run_measured(cmd)
            steps.append(Step(n, "(d) a late day inside the month", late, s, rss, code))
            log(
                f"N={n:,}: (d) a late day inside the loaded month ({late:,} rows) {s:.1f} s, {rss:,.0f} MiB, exit "
                f"{code}"
            )
    return steps


def table(steps: list[Step], command: str) -> str:
    floors = {s.size: s.seconds for s in steps if s.name == "(a) floor"}
    nightlies = {s.size: s.seconds for s in steps if s.name == "(b) nightly"}
    lines = [
        f"Benchmark run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine()}.",
        f"Command: `{command}`",
        "",
        "| request rows | step | rows processed | wall s | rows / s | peak RSS MiB | ratio | exit |",
        "|---:|---|---:|---:|---:|---:|---|---:|",
    ]
    for s in steps:
        if s.name == "(b) nightly":
            ratio = f"(b)/(a) = {s.seconds / floors[s.size]:.1f}x"
        elif s.name.startswith(("(c)", "(d)")):
            ratio = f"{s.name[:3]}/(b) = {100 * s.seconds / nightlies[s.size]:.0f}%"
        else:
            ratio = ""
        rate = f"{s.rows / s.seconds:,.0f}" if s.seconds else ""
        rss = f"{s.peak_rss_mb:,.0f}" if s.peak_rss_mb else ""
        lines.append(
            f"| {s.size:,} | {s.name} | {s.rows:,} | {s.seconds:,.1f} | {rate} | {rss} | {ratio} | {s.exit_code} |"
        )
    return "\n".join(lines) + "\n"
