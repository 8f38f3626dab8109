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

The order at each size: generate, (a), (a') the analyst's script, (b), (a'') the pandas notebook (after
the nightly: its 11 GB at 10 M rows evict the page cache, which the step after it would start without),
the peers' check, then (c) and (d).

Each step runs in its own process; wall seconds come from the parent's clock, peak RSS from
``wait4`` (the child's ``ru_maxrss``) or, when larger, the peak of the summed RSS of the child
and its own children (Great Expectations' process) sampled every 0.1 s. Not part of the test suite.
"""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

FLOOR_SCRIPT = """
import sys, duckdb
db, files, memory = sys.argv[1], sys.argv[2], sys.argv[3]
con = duckdb.connect(db, config={"memory_limit": memory})
con.execute("SET enable_progress_bar = false")
con.execute("CREATE TABLE requests AS SELECT * FROM read_parquet(?)", [files])
con.execute(
    "SELECT date_trunc('month', started_at) AS month, route, count(*), sum(cache_hit_input_tokens), "
    "sum(cache_miss_input_tokens), sum(output_tokens + reasoning_tokens), quantile_disc(latency_ms, 0.95) "
    "FROM requests GROUP BY ALL"
).fetchall()
con.close()
"""

#: the peers' step names: the analyst's script, the pandas notebook
PEER_STEPS = ("(a') analyst's script", "(a'') pandas notebook")

#: the pandas notebook runs at sizes up to this (it holds every request in memory, several times over)
NOTEBOOK_MAX_ROWS = 10_000_000


@dataclass(kw_only=True)
class Step:
    size: int
    name: str
    rows: int
    seconds: float
    peak_rss_mb: float
    exit_code: int


def _tree_rss_mib(pid: int) -> float:
    """The summed resident memory (MiB) of ``pid`` and its descendants, from /proc (0 where it cannot be read)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except (OSError, ValueError):
            pass
    return total


def run_measured(cmd: list[str], cwd: Path | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of a child process; the peak is the child's own ``ru_maxrss`` or,
    when larger, the peak of the summed RSS of the child and its descendants, sampled every 0.1 s (``wait4``'s
    figure is the largest single process, and a nightly runs Great Expectations in a process of its own)."""
    import threading

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
    done, peak = threading.Event(), [0.0]

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss_mib(proc.pid))
            done.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    done.set()
    sampler.join()
    err = proc.stderr.read()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 3, 4):
        sys.stderr.write(err[-3000:])
    return seconds, max(usage.ru_maxrss / 1024, peak[0]), proc.returncode


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


@dataclass(kw_only=True)
class PeerCheck:
    size: int
    compared: int
    differences: list[str]
    failed: list[str] = field(default_factory=list)
    """Peers whose process failed (not compared)."""
    what: str = "Peers against costledger's marts"
    unit: str = "values"


def _analyst(n: int, folder: Path, landing: Path, memory_limit: str, log: Callable[[str], None]) -> list[Step]:
    """(a') the analyst's script on the files."""
    cmd = [sys.executable, "-c", ANALYST_SCRIPT, str(folder / "analyst.duckdb"), str(landing), memory_limit]
    s, rss, code = run_measured(cmd + [str(ANALYST_SQL)])
    log(f"N={n:,}: (a') analyst's script {s:.1f} s, {rss:,.0f} MiB, exit {code}")
    return [Step(size=n, name=PEER_STEPS[0], rows=n, seconds=s, peak_rss_mb=rss, exit_code=code)]


def _notebook(n: int, folder: Path, landing: Path, log: Callable[[str], None]) -> list[Step]:
    """(a'') the pandas notebook on the files, at sizes up to ``NOTEBOOK_MAX_ROWS``. It runs after the nightly: at
    10 M rows it holds 11 GB, which evicts the page cache (the landing files, the Python modules GX's process
    imports), and the step after it started cold where the floor and the script had started warm."""
    steps = []
    if n <= NOTEBOOK_MAX_ROWS:
        s, rss, code = run_measured([sys.executable, str(NOTEBOOK), str(landing), str(folder / "notebook.csv")])
        steps.append(Step(size=n, name=PEER_STEPS[1], rows=n, seconds=s, peak_rss_mb=rss, exit_code=code))
        log(f"N={n:,}: (a'') pandas notebook {s:.1f} s, {rss:,.0f} MiB, exit {code}")
    return steps


def _floor(n: int, folder: Path, landing: Path, memory_limit: str, log: Callable[[str], None]) -> Step:
    """(a) DuckDB's own floor: the files read and grouped in one statement."""
    files = str(landing / "requests" / "*.parquet")
    s, rss, code = run_measured([sys.executable, "-c", FLOOR_SCRIPT, str(folder / "floor.duckdb"), files, memory_limit])
    log(f"N={n:,}: (a) floor {s:.1f} s, {rss:,.0f} MiB")
    (folder / "floor.duckdb").unlink(missing_ok=True)
    return Step(size=n, name="(a) floor", rows=n, seconds=s, peak_rss_mb=rss, exit_code=code)


def _increments(n: int, landing: Path, months: int, cmd: list[str], log: Callable[[str], None]) -> list[Step]:
    """(c) one more day after the period, then (d) a late day inside the loaded month, each a nightly."""
    from pipeline.sample.large import write_large_sample

    day = write_large_sample(landing, n, months=months, extra_day=True)["requests"]
    s, rss, code = run_measured(cmd)
    steps = [Step(size=n, name="(c) one more day", rows=day, seconds=s, peak_rss_mb=rss, exit_code=code)]
    log(f"N={n:,}: (c) one more day ({day:,} rows) {s:.1f} s, {rss:,.0f} MiB, exit {code}")
    late = write_large_sample(landing, n, months=months, late_day=True)["requests"]
    s, rss, code = run_measured(cmd)
    name = "(d) a late day inside the month"
    steps.append(Step(size=n, name=name, rows=late, seconds=s, peak_rss_mb=rss, exit_code=code))
    log(f"N={n:,}: (d) a late day inside the loaded month ({late:,} rows) {s:.1f} s, {rss:,.0f} MiB, exit {code}")
    return steps


def benchmark(
    sizes: list[int], work: Path, months: int, memory_limit: str, log: Callable[[str], None]
) -> tuple[list[Step], list[PeerCheck]]:
    steps: list[Step] = []
    checks: list[PeerCheck] = []
    work.mkdir(parents=True, exist_ok=True)
    settings = work / "bench.toml"
    settings.write_text(f'[ledger]\nmemory_limit = "{memory_limit}"\n', encoding="utf-8")
    from pipeline.sample.large import write_large_sample

    runs = sorted(run_measured([sys.executable, "-m", "pipeline.cli", "--help"]) for _ in range(5))
    seconds, rss, code = runs[2]  # the median of 5
    steps.append(
        Step(size=0, name="`costledger --help` (median of 5)", rows=0, seconds=seconds, peak_rss_mb=rss, exit_code=code)
    )
    log(f"costledger --help: {seconds:.2f} s (median of 5)")
    for i, n in enumerate(sizes):
        folder = work / f"n{n}"
        if folder.exists():
            shutil.rmtree(folder)
        landing = folder / "landing"
        t0 = time.perf_counter()
        write_large_sample(landing, n, months=months)
        log(f"N={n:,}: generated in {time.perf_counter() - t0:.1f} s")
        steps.append(
            Step(size=n, name="generate", rows=n, seconds=time.perf_counter() - t0, peak_rss_mb=0.0, exit_code=0)
        )

        steps.append(_floor(n, folder, landing, memory_limit, log))
        steps += _analyst(n, folder, landing, memory_limit, log)

        db = folder / "ledger.duckdb"
        cmd = [sys.executable, "-m", "pipeline.cli", "nightly", str(landing), "--db", str(db)]
        cmd += ["--settings", str(settings)]
        s, rss, code = run_measured(cmd)
        steps.append(Step(size=n, name="(b) nightly", rows=n, seconds=s, peak_rss_mb=rss, exit_code=code))
        log(f"N={n:,}: (b) nightly {s:.1f} s, {rss:,.0f} MiB, exit {code}")
        steps += _notebook(n, folder, landing, log)
        failed = [x.name for x in steps if x.size == n and x.name in PEER_STEPS and x.exit_code != 0]
        analyst = None if PEER_STEPS[0] in failed else folder / "analyst.duckdb"
        notebook = folder / "notebook.csv"
        notebook = notebook if notebook.exists() and PEER_STEPS[1] not in failed else None
        compared, differences = compare_peers(db, analyst, notebook)
        checks.append(PeerCheck(size=n, compared=compared, differences=differences, failed=failed))
        log(f"N={n:,}: peers vs costledger: {compared:,} values compared, {len(differences)} differ; failed: {failed}")
        (folder / "analyst.duckdb").unlink(missing_ok=True)

        if i == len(sizes) - 1:
            steps += _increments(n, landing, months, cmd, log)
    return steps, checks


#: the rebuild comparison's steps: a settings change that some models read, and the same build in full
REBUILD_STEPS = ("(e) review rate changed: build", "(f) the same build in full", "(g) the same build again")

CLEAR_STATE = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("DELETE FROM meta.build_state")
con.close()
"""


def rebuild(
    sizes: list[int], work: Path, months: int, memory_limit: str, log: Callable[[str], None]
) -> tuple[list[Step], list[PeerCheck]]:
    """At each size: the nightly, then (e) a build with another review rate (each model keeps its own fingerprint,
    so only the models that read the review rate and those downstream are rebuilt), then (f) the same build with
    the build state cleared (every incremental model rebuilt), then (g) the same build again (nothing changed: what
    every build costs); the ledgers' marts and intermediates after (e) and after (f) compared."""
    from pipeline.sample.large import write_large_sample

    steps: list[Step] = []
    checks: list[PeerCheck] = []
    work.mkdir(parents=True, exist_ok=True)
    settings, changed = work / "bench.toml", work / "bench-review.toml"
    settings.write_text(f'[ledger]\nmemory_limit = "{memory_limit}"\n', encoding="utf-8")
    changed.write_text(f'[ledger]\nmemory_limit = "{memory_limit}"\n[review]\nrate_per_hour_usd = 75\n', "utf-8")
    for n in sizes:
        folder = work / f"n{n}"
        if folder.exists():
            shutil.rmtree(folder)
        landing, db = folder / "landing", folder / "ledger.duckdb"
        write_large_sample(landing, n, months=months)
        cli = [sys.executable, "-m", "pipeline.cli"]
        s, rss, code = run_measured([*cli, "nightly", str(landing), "--db", str(db), "--settings", str(settings)])
        steps.append(Step(size=n, name="(b) nightly", rows=n, seconds=s, peak_rss_mb=rss, exit_code=code))
        log(f"N={n:,}: (b) nightly {s:.1f} s, {rss:,.0f} MiB, exit {code}")
        build = [*cli, "build", "--db", str(db), "--settings", str(changed)]
        s, rss, code = run_measured(build)
        steps.append(Step(size=n, name=REBUILD_STEPS[0], rows=n, seconds=s, peak_rss_mb=rss, exit_code=code))
        log(f"N={n:,}: {REBUILD_STEPS[0]} {s:.1f} s, {rss:,.0f} MiB, exit {code}")
        shutil.copyfile(db, folder / "after-e.duckdb")
        subprocess.run([sys.executable, "-c", CLEAR_STATE, str(folder / "ledger.duckdb.d" / "work.duckdb")], check=True)
        s, rss, code = run_measured(build)
        steps.append(Step(size=n, name=REBUILD_STEPS[1], rows=n, seconds=s, peak_rss_mb=rss, exit_code=code))
        log(f"N={n:,}: {REBUILD_STEPS[1]} {s:.1f} s, {rss:,.0f} MiB, exit {code}")
        s, rss, code = run_measured(build)  # nothing changed: what every build costs
        steps.append(Step(size=n, name=REBUILD_STEPS[2], rows=n, seconds=s, peak_rss_mb=rss, exit_code=code))
        log(f"N={n:,}: {REBUILD_STEPS[2]} {s:.1f} s, {rss:,.0f} MiB, exit {code}")
        compare = Path(__file__).resolve().parents[1] / "scripts" / "marts_equal.py"
        result = subprocess.run(
            [sys.executable, str(compare), str(folder / "after-e.duckdb"), str(db), "--schema", "marts",
             "--schema", "intermediate"], capture_output=True, text=True,
        )  # fmt: skip
        differs = [line for line in result.stdout.splitlines() if line.startswith("DIFFERS")]
        tables = len([line for line in result.stdout.splitlines() if line.startswith(("equal", "DIFFERS"))])
        log(f"N={n:,}: (e) against (f): {tables} tables compared, {len(differs)} differ")
        checks.append(
            PeerCheck(
                size=n,
                compared=tables,
                differences=differs,
                what="(e) against (f), marts and intermediates",
                unit="tables",
            )
        )
    return steps, checks


def _ratio(s: Step, by_name: dict[tuple[int, str], Step]) -> str:
    if s.name == "(b) nightly":
        parts = []
        for peer_label, name in (("(a)", "(a) floor"), ("(a')", PEER_STEPS[0]), ("(a'')", PEER_STEPS[1])):
            peer = by_name.get((s.size, name))
            if peer is None or not peer.seconds:
                continue
            failed = f" ({peer_label} failed after that long)" if peer.exit_code else ""
            parts.append(f"(b)/{peer_label} = {s.seconds / peer.seconds:.2f}x{failed}")
        return "; ".join(parts)
    if s.name in (REBUILD_STEPS[0], REBUILD_STEPS[2]) and (s.size, REBUILD_STEPS[1]) in by_name:
        return f"{s.name[:3]}/(f) = {100 * s.seconds / by_name[(s.size, REBUILD_STEPS[1])].seconds:.1f}%"
    if s.name.startswith(("(c)", "(d)")):
        return f"{s.name[:3]}/(b) = {100 * s.seconds / by_name[(s.size, '(b) nightly')].seconds:.1f}%"
    return ""


def table(steps: list[Step], command: str, checks: list[PeerCheck] = []) -> str:
    by_name = {(s.size, s.name): s for s in steps}
    lines = [
        f"Benchmark run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {machine()}.",
        f"Command: `{command}`",
        "",
        "| request rows | step | rows processed | wall s | rows / s | peak RSS MiB | ratio | exit |",
        "|---:|---|---:|---:|---:|---:|---|---:|",
    ]
    for s in steps:
        rate = f"{s.rows / s.seconds:,.0f}" if s.seconds and s.rows else ""
        rss = f"{s.peak_rss_mb:,.0f}" if s.peak_rss_mb else ""
        wall = f"{s.seconds:,.1f}" if s.size else f"{s.seconds:.2f}"
        lines.append(
            f"| {f'{s.size:,}' if s.size else ''} | {s.name} | {f'{s.rows:,}' if s.size else ''} | {wall} | {rate} "
            f"| {rss} | {_ratio(s, by_name)} | {s.exit_code} |"
        )
    if checks:
        lines.append("")
    for c in checks:
        verdict = "all equal to the cent" if not c.differences else f"**{len(c.differences)} differ**"
        if not c.compared:
            verdict = "no peer left to compare"
        failed = "".join(f" {name} failed (exit code above), not compared." for name in c.failed)
        lines.append(f"{c.what} at {c.size:,} rows: {c.compared:,} {c.unit} compared, {verdict}.{failed}")
        lines += [f"- {d}" for d in c.differences[:10]]
    return "\n".join(lines) + "\n"


# ---- peers: the analyst's script (a') and the pandas notebook (a''), checked against the ledger ----

PEERS = Path(__file__).resolve().parent
ANALYST_SQL = PEERS / "analyst.sql"
NOTEBOOK = PEERS / "notebook.py"

ANALYST_SCRIPT = """
import sys, duckdb
db, landing, memory, script = sys.argv[1:5]
con = duckdb.connect(db, config={"memory_limit": memory})
con.execute("SET enable_progress_bar = false")
con.execute("SET VARIABLE landing = ?", [landing])
con.execute(open(script, encoding="utf-8").read())
con.close()
"""

#: a route's month: volume columns both peers compute
VOLUME = (
    "requests",
    "tasks",
    "accepted_tasks",
    "cache_hit_input_tokens",
    "cache_miss_input_tokens",
    "output_tokens",
    "reasoning_tokens",
)

#: (peer table, costledger table (rows compared), key columns, compared columns as (peer, ledger, kind)); kinds:
#: 'exact' (counts, text), 'cent' (money: equal to the cent), 'ratio' (within 1e-6)
COMPARED: list[tuple[str, str, list[str], list[tuple[str, str, str]]]] = [
    (
        "route_cost",
        "marts.monthly_route_cost",
        ["month", "route"],
        [(c, c, "exact") for c in VOLUME + ("p50_latency_ms", "p95_latency_ms")]
        + [("cost_usd", "cost_usd", "cent"), ("cost_per_accepted_task_usd", "cost_per_accepted_task_usd", "cent")],
    ),
    (
        "utilisation",
        "marts.monthly_utilisation",
        ["month", "cluster_id"],
        [(c, c, "ratio") for c in ("provisioned_hours", "busy_hours", "in_flight_accepted_hours", "in_flight_share")],
    ),
    (
        "break_even",
        "marts.monthly_break_even",
        ["month"],
        [
            (c, c, "cent")
            for c in (
                "self_hosted_cost_usd",
                "fixed_cost_usd",
                "committed_cost_usd",
                "avoidable_cost_usd",
                "api_cost_per_accepted_task_usd",
                "break_even_accepted_tasks",
            )
        ]
        + [("api_overhead_factor", "api_overhead_factor", "ratio")]
        + [(c, c, "exact") for c in ("api_cost_source", "self_hosted_accepted_tasks", "verdict")],
    ),
    (
        "reconciliation",
        "marts.monthly_reconciliation",
        ["month", "provider"],
        [("metered_usd", "metered_usd", "cent"), ("status", "status", "exact")],
    ),
    (
        "notebook",
        "marts.monthly_route_cost WHERE requests > 0",  # the notebook knows only months with requests
        ["month", "route"],
        [(c, c, "exact") for c in VOLUME]
        + [("metered_usd", "CASE WHEN route = 'api' THEN cost_usd ELSE 0 END", "cent")],
    ),
]

_DIFFERS = {
    "exact": "p.{p} IS DISTINCT FROM l.{l}",
    "cent": "(p.{p} IS NULL) <> (l.{l} IS NULL) OR abs(CAST(p.{p} AS DOUBLE) - CAST(l.{l} AS DOUBLE)) >= 0.005",
    "ratio": "(p.{p} IS NULL) <> (l.{l} IS NULL) OR abs(CAST(p.{p} AS DOUBLE) - CAST(l.{l} AS DOUBLE)) > 1e-6",
}


def compare_peers(ledger: Path, analyst_db: Path | None, notebook_csv: Path | None) -> tuple[int, list[str]]:
    """Compare the peers' marts with the published ledger's: (values compared, differences found).

    Every (key, column) of every compared table counts; a row one side lacks is a difference."""
    import duckdb

    con = duckdb.connect()
    con.execute("ATTACH ? AS ledger (READ_ONLY)", [str(ledger)])
    sources = {}
    if analyst_db is not None:
        con.execute("ATTACH ? AS analyst (READ_ONLY)", [str(analyst_db)])
        sources.update({t: f"analyst.{t}" for t in ("route_cost", "utilisation", "break_even", "reconciliation")})
    if notebook_csv is not None:
        con.execute(
            "CREATE TEMP TABLE notebook AS SELECT * REPLACE (CAST(month AS DATE) AS month) FROM read_csv(?)",
            [str(notebook_csv)],
        )
        sources["notebook"] = "temp.notebook"
    compared, differences = 0, []
    for peer, mart, keys, columns in COMPARED:
        if peer not in sources:
            continue
        n = con.execute(f"SELECT count(*) FROM {sources[peer]}").fetchone()[0]  # type: ignore[index]
        compared += n * len(columns)
        on = " AND ".join(f"p.{k} = l.{k}" for k in keys)
        ledger_cols = ", ".join(f"{expr} AS c{i}" for i, (_, expr, _) in enumerate(columns))
        for i, (p, _, kind) in enumerate(columns):
            rows = con.execute(
                f"SELECT {', '.join('coalesce(p.' + k + ', l.' + k + ')' for k in keys)}, p.{p}, l.c{i} "
                f"FROM {sources[peer]} AS p FULL JOIN (SELECT {', '.join(keys)}, {ledger_cols} FROM ledger.{mart}) "
                f"AS l ON {on} WHERE p.{keys[0]} IS NULL OR l.{keys[0]} IS NULL OR "
                + "("
                + _DIFFERS[kind].format(p=p, l=f"c{i}")
                + ")"
            ).fetchall()
            differences += [
                f"{peer}.{p} at {row[: len(keys)]}: peer {row[-2]!r}, costledger {row[-1]!r}" for row in rows
            ]
    con.close()
    return compared, differences
