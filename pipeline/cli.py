"""The ``costledger`` command line.

Exit codes (documented in the README):
  0  all went well
  1  failure: bad settings, unreadable ledger, a build audit failed (nothing new published)
  2  usage error (unknown option, missing argument)
  3  one or more files were rejected whole; everything else loaded, built and published
  4  a reconciliation mismatch in a month this run changed; everything loaded, built and published
  5  another costledger process is writing this ledger (nothing done)
  6  not enough free disk space, or the disk filled while writing (nothing half-done published)
  130 interrupted (Ctrl-C)
No error ends in a traceback (``entry``); ``--debug`` shows it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Literal, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pipeline import __version__

app = typer.Typer(
    name="costledger",
    help="A cost ledger for running large LLMs: hosted API vs your own GPU cluster, month by month.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# wide output when piped, so tables are not folded into 80 columns
console = Console(stderr=True, soft_wrap=True, width=None if sys.stderr.isatty() else 200)
out = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 200)

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_REJECTED, EXIT_MISMATCH, EXIT_DISK = 0, 1, 2, 3, 4, 6  # busy (5): LedgerBusy.exit_code

DbOpt = Annotated[
    Optional[Path],
    typer.Option("--db", help="DuckDB ledger file. Default: settings file \\[ledger] db, then ./ledger.duckdb.", show_default=False),
]
SettingsOpt = Annotated[
    Optional[Path],
    typer.Option("--settings", help="Settings TOML file. Default: $COSTLEDGER_SETTINGS, then ./costledger.toml if present.", show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", metavar="", help="Print a machine-readable JSON summary on stdout.")]


def _error(text: str) -> None:
    """One error line on stderr; ``text`` is data, printed as is (never read as rich markup)."""
    console.print(f"[red]error:[/] {escape(text)}", highlight=False)


def _settings(settings_path: Path | None, db: Path | None):
    from pipeline.settings import SettingsError, load_settings

    try:
        return load_settings(settings_path, db)
    except SettingsError as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_FAILURE) from None


def _open_read(s):
    """The published ledger, read-only; a clear error when there is none yet."""
    from pipeline.db import LedgerNotFound, connect_read
    from pipeline.store import Store

    try:
        return connect_read(s.db, Store.for_db(s.db).lake)
    except LedgerNotFound as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_FAILURE) from None


def _file_line(result) -> None:
    colour = {"loaded": "green", "skipped": "dim", "rejected": "red", "repaired": "yellow"}[result.status]
    detail = (
        f"{result.rows_in} rows in, {result.rows_loaded} loaded, {result.rows_quarantined} quarantined"
        if result.status == "loaded"
        else result.message
    )
    console.print(f"  [{colour}]{result.status:8}[/] {result.kind:15} {escape(result.path)}  [dim]{escape(detail)}[/]",
                  highlight=False)


def _summary(run, as_json: bool) -> None:
    if as_json:
        out.print_json(json.dumps(run.as_dict()))
        return
    d = run.as_dict()
    console.print(
        f"[bold]{escape(d['command'])}[/] ({d['run_id']}): {d['files_loaded']} file(s) loaded, {d['files_skipped']} skipped "
        f"(already loaded), {d['files_rejected']} rejected; rows: {d['rows_in']} in = {d['rows_loaded']} loaded + "
        f"{d['rows_quarantined']} quarantined; {d['seconds']:.2f} s"
    )
    if run.build:
        changed = ", ".join(run.build.months_changed) or "none"
        console.print(f"built {run.build.models} models, {run.build.audits} audits passed; months changed: {changed}")
    if d["files_repaired"]:
        console.print(f"[yellow]rewrote {d['files_repaired']} lake file(s) from their re-delivered landing files[/]")
    if run.published:
        console.print(f"published {escape(run.published)}", highlight=False)
    if run.orphans_removed:
        console.print(f"[yellow]cleaned up {run.orphans_removed} file(s) left by an interrupted run[/]")
    for month, provider in run.mismatches:
        console.print(f"[yellow]reconciliation mismatch:[/] {escape(provider)} {month} (see marts.monthly_reconciliation)")
    for name in run.unknown_entries:
        console.print(f"[yellow]warning:[/] landing entry {escape(repr(name))} is a file, not a kind folder; ignored",
                      highlight=False)
    for link in run.outside_links:
        console.print(f"[yellow]warning:[/] {escape(link)} is a link that leads out of the landing folder; skipped",
                      highlight=False)
    if run.count("rejected"):
        console.print("[red]some files were rejected whole; see above and `costledger status`[/]")


def _exit_for(run) -> None:
    if run.count("rejected"):
        raise typer.Exit(EXIT_REJECTED)
    raise typer.Exit(EXIT_MISMATCH if run.mismatches else EXIT_OK)


def _writer(fn, *args, **kwargs):
    """Run a writing step, turning the ledger's own errors into messages and exit codes."""
    import duckdb

    from pipeline.build import ModelFailed
    from pipeline.errors import CostledgerError

    try:
        return fn(*args, **kwargs)
    except CostledgerError as exc:  # busy 5, not enough disk 6, a failed audit or model or a damaged lake 1
        _error(str(exc))
        if isinstance(exc, ModelFailed) and "Out of Memory" in str(exc):
            console.print(escape("hint: raise [ledger] memory_limit in the settings file (DuckDB spills what it can)"))
        raise typer.Exit(exc.exit_code) from None
    except FileNotFoundError as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_FAILURE) from None
    except (OSError, duckdb.IOException) as exc:
        if not _disk_full(exc):
            raise
        _error(f"the disk is full ({str(exc).splitlines()[0]}); nothing half-done was published. "
               "Free some space and run again.")
        raise typer.Exit(EXIT_DISK) from None


def _disk_full(exc: Exception) -> bool:
    import errno

    return exc.errno == errno.ENOSPC if isinstance(exc, OSError) else "space left" in str(exc).lower()


class _Progress:
    """A progress bar on a terminal; one line per file otherwise."""

    def __init__(self, total_files: int, quiet: bool) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.quiet = quiet
        self.bar = None
        if not quiet and console.is_terminal:
            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), console=console, transient=True)
            self.files = self.bar.add_task("loading files", total=total_files)
            self.models = self.bar.add_task("building models", total=None, visible=False)

    def __enter__(self) -> "_Progress":
        if self.bar:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.bar:
            self.bar.__exit__(*exc)

    def on_file(self, result) -> None:
        if self.bar:
            self.bar.advance(self.files)
        if not self.quiet:
            _file_line(result)

    def on_model(self, name: str) -> None:
        if self.bar:
            self.bar.update(self.models, visible=True, description=f"building {name}")
            self.bar.advance(self.models)


@app.command()
def ingest(
    kind: Annotated[str, typer.Argument(help="requests, outcomes, invoices, prices, cluster-charges, hardware, opex or focus.")],
    files: Annotated[list[Path], typer.Argument(help="CSV, JSONL or Parquet files (.gz allowed).", show_default=False)],
    db: DbOpt = None,
    settings: SettingsOpt = None,
    as_json: JsonOpt = False,
    log_format: Annotated[Optional[str], typer.Option("--format", help="requests only: canonical, openai_chat, openai_responses, anthropic, litellm, vllm or sglang. Default: the settings' \\[\\[request_logs]] entry for the file, else detected from the content.", show_default=False)] = None,
) -> None:
    """Load files of one KIND into the ledger (each file whole or not at all; bad rows quarantined).

    KIND is requests, outcomes, invoices, prices, cluster-charges, hardware, opex or focus (FOCUS 1.0-1.2 cloud billing).
    """
    from pipeline.logformats import LOG_FORMATS

    from pipeline.nightly import run_ingest
    from pipeline.store import Store
    from schemas.tables import KINDS

    if kind not in KINDS:
        _error(f"unknown kind {kind!r}; expected one of: {', '.join(KINDS)}")
        raise typer.Exit(2)
    if log_format is not None and (kind != "requests" or log_format not in LOG_FORMATS):
        _error(f"--format applies to requests only and is one of: {', '.join(LOG_FORMATS)}")
        raise typer.Exit(2)
    s = _settings(settings, db)
    with _Progress(len(files), as_json) as progress:
        run = _writer(run_ingest, Store.for_db(s.db), s, [(kind, f) for f in files], f"ingest {kind}",
                      on_file=progress.on_file, log_format=log_format)
    _summary(run, as_json)
    if not as_json:
        console.print("loaded into the work file; run `costledger build` to rebuild and publish")
    _exit_for(run)


@app.command("build")
def build_cmd(db: DbOpt = None, settings: SettingsOpt = None) -> None:
    """Run the SQL models (staging -> intermediate -> marts) and their audits, then publish."""
    from pipeline.nightly import run_build
    from pipeline.store import Store

    s = _settings(settings, db)
    with _Progress(0, False) as progress:
        run = _writer(run_build, Store.for_db(s.db), s, on_model=progress.on_model)
    _summary(run, False)
    raise typer.Exit(EXIT_MISMATCH if run.mismatches else EXIT_OK)


@app.command()
def nightly(
    landing_dir: Annotated[Path, typer.Argument(help="Folder with one subfolder per kind: requests/, outcomes/, invoices/, prices/, cluster-charges/, hardware/, opex/, focus/.")],
    db: DbOpt = None,
    settings: SettingsOpt = None,
    as_json: JsonOpt = False,
    report: Annotated[bool, typer.Option("--report/--no-report", metavar="", help="Print the latest month's plain report at the end.")] = False,
) -> None:
    """Load every new file of a landing folder, build, and publish atomically. Safe to run twice.

    Exit codes: 0 all well; 1 failure (nothing new published); 3 a file or folder was rejected whole (the rest was published); 4 a reconciliation mismatch in a month this run changed; 5 another process is writing; 6 disk full; 130 interrupted.
    """
    from pipeline.nightly import run_nightly, scan_landing
    from pipeline.store import Store

    s = _settings(settings, db)
    if not landing_dir.is_dir():
        _error(f"landing folder {landing_dir} does not exist")
        raise typer.Exit(EXIT_FAILURE)
    found = scan_landing(landing_dir)  # once: its files are the progress bar's total and what the run loads
    with _Progress(len(found.pairs) + len(found.unknown_folders), as_json) as progress:
        run = _writer(run_nightly, Store.for_db(s.db), s, landing_dir, on_file=progress.on_file,
                      on_model=progress.on_model, found=found)
    _summary(run, as_json)
    if report and not as_json:
        from pipeline.report import plain_report

        rcon = _open_read(s)
        out.print(plain_report(rcon, None))
        rcon.close()
    _exit_for(run)


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="A SQL query, e.g. \"select * from marts.monthly_break_even\".")],
    db: DbOpt = None,
    settings: SettingsOpt = None,
    fmt: Annotated[Literal["table", "csv", "json"], typer.Option("--format", help="Output format.")] = "table",
    limit: Annotated[int, typer.Option(help="Rows shown at most in table format (csv/json print all).")] = 200,
) -> None:
    """Run ad-hoc SQL against the published ledger, read-only and sandboxed.

    Only queries run (SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN, CALL); COPY, EXPORT,
    ATTACH, INSTALL/LOAD, SET, PRAGMA, DDL and DML are refused before anything runs, and no
    file outside the ledger's lake can be read. Several statements separated by `;` each
    show their result. Exit 2 when a statement is refused, 1 when DuckDB reports an error.
    """
    import duckdb

    from pipeline.query import render
    from pipeline.shell import RefusedStatement, run

    con = _open_read(_settings(settings, db))
    try:
        results = run(con, query)
    except RefusedStatement as exc:
        console.print(f"[red]refused:[/] {escape(str(exc))}")
        raise typer.Exit(EXIT_USAGE) from None
    except duckdb.Error as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_FAILURE) from None
    finally:
        con.close()
    for number, result in enumerate(results, start=1):
        title = f"statement {number} of {len(results)}: {result.statement[:80]}" if len(results) > 1 else None
        render(result.names, result.rows, fmt, limit, out, title=title)


@app.command()
def status(
    db: DbOpt = None,
    settings: SettingsOpt = None,
    as_json: JsonOpt = False,
    files: Annotated[int, typer.Option(help="How many of the latest files to list.")] = 20,
) -> None:
    """Per kind and per file: rows in, loaded, quarantined, the top quarantine reasons and the latest run's slowest steps."""
    import duckdb

    from pipeline.query import render

    con = _open_read(_settings(settings, db))
    per_kind = con.execute(
        "SELECT kind, count(*) AS files, sum(rows_in) AS rows_in, sum(rows_loaded) AS rows_loaded, "
        "sum(rows_quarantined) AS rows_quarantined, sum(rows_gx_validated) AS rows_gx_validated "
        "FROM meta.loaded_files GROUP BY kind ORDER BY kind"
    )
    names = [d[0] for d in per_kind.description]
    kinds = per_kind.fetchall()
    per_file = con.execute(
        "SELECT kind, path, rows_in, rows_loaded, rows_quarantined, rows_gx_validated, loaded_at "
        "FROM meta.loaded_files ORDER BY load_seq DESC LIMIT ?", [files]
    )
    file_names = [d[0] for d in per_file.description]
    file_rows = per_file.fetchall()
    # quoted values are folded so that reasons group by kind of problem, not by value
    reasons = con.execute(
        "SELECT kind, regexp_replace(reason, '''[^'']*''', '''...''', 'g') AS reason, count(*) AS rows "
        "FROM meta.quarantine GROUP BY ALL ORDER BY rows DESC, kind LIMIT 10"
    ).fetchall()
    rejected = con.execute("SELECT kind, path, reason FROM meta.rejected_files ORDER BY rejected_at DESC LIMIT 10").fetchall()
    try:  # where the latest timed run spent its time (ledgers published before 0.4 have no meta.run_steps)
        slowest = con.execute(
            "SELECT s.step, s.name, round(s.seconds, 2) AS seconds, s.rows_in FROM meta.run_steps AS s "
            "WHERE s.run_id = (SELECT r.run_id FROM meta.runs AS r SEMI JOIN meta.run_steps AS t ON t.run_id = r.run_id "
            "ORDER BY r.started_at DESC LIMIT 1) ORDER BY s.seconds DESC LIMIT 10"
        ).fetchall()
    except duckdb.CatalogException:
        slowest = []
    con.close()
    if as_json:
        from pipeline.query import _jsonable

        out.print_json(json.dumps({
            "kinds": [dict(zip(names, r)) for r in kinds],
            "files": [{k: _jsonable(v) for k, v in zip(file_names, r)} for r in file_rows],
            "top_quarantine_reasons": [{"kind": k, "reason": r, "rows": n} for k, r, n in reasons],
            "rejected_files": [{"kind": k, "path": p, "reason": r} for k, p, r in rejected],
            "slowest_steps_of_latest_run": [{"step": a, "name": b, "seconds": c, "rows_in": d} for a, b, c, d in slowest],
        }))
        return
    render(names, kinds, "table", 100, out, title="Loaded files by kind (rows in = loaded + quarantined)")
    render(file_names, file_rows, "table", files, out, title=f"Latest {files} files")
    render(["kind", "reason", "rows"], reasons, "table", 100, out, title="Top quarantine reasons")
    if rejected:
        render(["kind", "path", "reason"], rejected, "table", 100, out, title="Rejected files (latest)")
    if slowest:
        render(["step", "name", "seconds", "rows_in"], slowest, "table", 10, out,
               title="Slowest steps of the latest run (meta.run_steps)")


@app.command()
def report(
    month: Annotated[Optional[str], typer.Option(help="Month YYYY-MM. Default: the latest month in the ledger.")] = None,
    db: DbOpt = None,
    settings: SettingsOpt = None,
    fmt: Annotated[Literal["html", "md", "text"], typer.Option("--format", help="html: self-contained file with charts (opens offline); md: Markdown for chat and email; text: print to the terminal.")] = "html",
    out_file: Annotated[Optional[Path], typer.Option("--out", help="File to write. Default: reports/costledger-YYYY-MM.html (or .md).", show_default=False)] = None,
) -> None:
    """The monthly break-even report for leadership: verdict, trends, sensitivity, scenarios, trust.

    Exit codes: 0 written; 1 no ledger or no month yet; 2 --month is not a month (YYYY-MM) or not in the ledger.
    """
    from pipeline.errors import CostledgerError
    from pipeline.report import gather, headline, plain_report, render_html, render_markdown

    con = _open_read(_settings(settings, db))
    try:
        if fmt == "text":
            out.print(plain_report(con, month), markup=False, highlight=False)
            return
        data = gather(con, month)
    except CostledgerError as exc:  # a month that is not one, or not in the ledger: 2; no months yet: 1
        _error(str(exc))
        raise typer.Exit(exc.exit_code) from None
    text = render_html(data) if fmt == "html" else render_markdown(data)
    target = out_file or Path("reports") / f"costledger-{data.month}.{fmt}"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    for line in headline(data):
        console.print(line, markup=False, highlight=False)
    where = "open it in a browser; it needs no network" if fmt == "html" else "paste it into chat or email"
    console.print(f"wrote {target} ({len(text.encode()) / 1024:,.0f} KiB): {where}", markup=False, highlight=False)


SCENARIO_FLAGS = {"--rate-per-hour": "rates", "--hours": "hours", "--api-cost-per-task": "costs"}


@app.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
def scenario(
    spec: Annotated[
        Optional[list[str]],
        typer.Argument(
            metavar="[--rate-per-hour R...] [--hours H] [--api-cost-per-task C...]",
            help="Cluster cost per hour (USD, one or more; default 80 120 160), provisioned hours per month "
                 "(default 730) and API cost per task (USD, one or more; default 1.35 0.54).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Planning without data: monthly cluster cost at each rate, and how many API tasks cost the same (the seeds' table).

    Example: costledger scenario --rate-per-hour 80 120 160 --hours 730 --api-cost-per-task 1.35 0.54
    """
    values: dict[str, list[str]] = {"rates": [], "hours": [], "costs": []}
    current = None
    for token in spec or []:
        if token.startswith("--"):
            current = SCENARIO_FLAGS.get(token)
            if current is None:
                _error(f"unknown option {token}; expected {', '.join(SCENARIO_FLAGS)}")
                raise typer.Exit(2)
        elif current is None:
            _error(f"{token!r} must follow one of {', '.join(SCENARIO_FLAGS)}")
            raise typer.Exit(2)
        else:
            values[current].append(token)
    rate_per_hour = values["rates"] or ["80", "120", "160"]
    api_cost_per_task = values["costs"] or ["1.35", "0.54"]
    if len(values["hours"]) > 1:
        _error("give one --hours value")
        raise typer.Exit(2)
    hours = (values["hours"] or ["730"])[0]
    from decimal import Decimal, InvalidOperation

    import duckdb

    from pipeline.query import render
    from pipeline.report import count, planning_table, usd

    try:
        rates = [Decimal(x) for x in rate_per_hour]
        costs = [Decimal(x) for x in api_cost_per_task]
        h = Decimal(hours)
    except InvalidOperation:
        _error("rates, hours and API costs must be numbers")
        raise typer.Exit(2) from None
    if any(x <= 0 for x in rates + costs + [h]):
        _error("rates, hours and API costs must be positive")
        raise typer.Exit(2)
    rows = planning_table(duckdb.connect(), rates, h, costs)
    if as_json:
        from pipeline.query import _jsonable

        out.print_json(json.dumps([{k: _jsonable(v) for k, v in r.items()} for r in rows]))
        return
    table = [[usd(r["rate_per_hour_usd"], 2), count(r["hours"]), usd(r["monthly_cost_usd"], 0), usd(r["api_cost_per_task_usd"], 2),
              count(r["equivalent_api_tasks_rounded"]), f"{r['equivalent_api_tasks']:.1f}"] for r in rows]
    render(["rate / hour", "hours", "monthly cost", "API cost per task", "API tasks (rounded to 100)", "API tasks (exact)"],
           table, "table", 1000, out, title="Planning: cluster cost vs API tasks of the same cost")
    console.print("API task counts rounded to the nearest 100, as the seeds round them.")


@app.command()
def sample(
    out_dir: Annotated[Path, typer.Option("--out", help="Landing folder to write (one subfolder per kind).")] = Path("sample_data"),
    seed: Annotated[int, typer.Option(help="Random seed: the same seed writes the same files.")] = 7,
    start: Annotated[str, typer.Option(help="First month, YYYY-MM.")] = "2026-07",
    months: Annotated[Optional[int], typer.Option(help="Number of months (default: the scenario's; large mode: 3).", show_default=False)] = None,
    tasks_per_month: Annotated[Optional[int], typer.Option(help="Tasks per month per route, overriding the scenario's volumes.", show_default=False)] = None,
    scenario: Annotated[Literal["growth", "small-team"], typer.Option(help="growth: self-hosted volume grows past break-even (the bundled sample_data); small-team: 1,200 tasks a route a month, the API cheaper every month.")] = "growth",
    requests: Annotated[Optional[int], typer.Option("--requests", help="Large mode: write this many request rows as one Parquet file per day (streamed; for benchmarks).", show_default=False)] = None,
    fmt: Annotated[Literal["parquet"], typer.Option("--format", help="File format of the large mode's request files.")] = "parquet",
    extra_day: Annotated[bool, typer.Option("--extra-day", metavar="", help="Large mode: write only the day after the period (a one-day increment).")] = False,
    late_day: Annotated[bool, typer.Option("--late-day", metavar="", help="Large mode: write only a day of new requests dated the 15th of the first month (a late file).")] = False,
) -> None:
    """Write a realistic landing folder: two API providers, one self-hosted cluster with its capacity sweeps, invoices, opex.

    With --requests N: large benchmark data, streamed to one Parquet file per day.
    """
    if requests is not None:
        from pipeline.sample_large import write_large_sample

        t0 = time.perf_counter()
        stats = write_large_sample(out_dir, requests, months=months or 3, start=start, seed=seed, extra_day=extra_day, late_day=late_day)
        for kind, n in stats.items():
            console.print(f"  {kind:16} {n:>12,} rows")
        console.print(f"wrote {escape(str(out_dir))} in {time.perf_counter() - t0:.1f} s", highlight=False)
        return
    from pipeline.sample import write_sample

    stats = write_sample(out_dir, seed=seed, start=start, months=months, tasks_per_month=tasks_per_month, scenario=scenario)
    for kind, n in stats.items():
        console.print(f"  {kind:16} {n:>8} rows")
    console.print(f"wrote {escape(str(out_dir))}", highlight=False)


@app.command()
def rollback(
    db: DbOpt = None,
    settings: SettingsOpt = None,
    to: Annotated[Optional[str], typer.Option(help="Snapshot file name to publish (default: the one before the current).")] = None,
    list_: Annotated[bool, typer.Option("--list", metavar="", help="List the kept snapshots and exit.")] = False,
) -> None:
    """Publish an earlier snapshot again (the next build or nightly publishes a new one)."""
    from pipeline.store import Store

    s = _settings(settings, db)
    store = Store.for_db(s.db)
    snaps = store.snapshot_list()
    if list_:
        current = s.db.stat().st_ino if s.db.exists() else None
        out.print("  snapshot (* = published)                           published at         run           months  MiB  ",
                  markup=False, highlight=False)
        for snap in snaps:
            i = store.snapshot_info(snap)
            note = "" if i["changed"] else "  (loaded nothing, changed no month)"
            out.print(f"{'*' if snap.stat().st_ino == current else ' '} {snap.name:50} {i['published_at']:20} "
                      f"{i['run_id']:13} {i['months'] if i['months'] is not None else '?':>6} {i['mib']:5.1f}{note}",
                      markup=False, highlight=False)
        return
    target = store.snapshots / to if to else None
    with store.writer_lock():
        chosen = _writer(store.rollback, target)
    console.print(f"published {chosen.name} again as {s.db}", markup=False, highlight=False)


@app.command()
def verify(
    db: DbOpt = None,
    settings: SettingsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check every lake file against the SHA-256 recorded when it was loaded.

    Names each missing or altered file and the landing file it came from; re-delivering that landing file unchanged (same SHA-256) to the next nightly rewrites it. Exit 0 when all are intact, 1 when any is missing or altered (the next build refuses to publish until then).
    """
    from pipeline.lake import damaged
    from pipeline.store import Store

    s = _settings(settings, db)
    con = _open_read(s)
    try:
        checked = con.execute("SELECT count(*), count(lake_sha256) FROM meta.loaded_files "
                              "WHERE lake_file IS NOT NULL").fetchall()[0]
        problems = damaged(con, Store.for_db(s.db).lake)
    finally:
        con.close()
    files, recorded = checked
    if as_json:
        out.print_json(json.dumps({"lake_files": files, "hashes_recorded": recorded, "damaged": [
            {"lake_file": d.lake_file, "problem": d.problem, "kind": d.kind, "landing_file": d.landing_path}
            for d in problems]}))
    else:
        for d in problems:
            console.print(f"[red]{d.problem}:[/] {escape(d.line())}", highlight=False)
        unrecorded = f"; {files - recorded} loaded before 0.6.0 have no hash yet (the next build records it)" \
            if files > recorded else ""
        state = "all intact" if not problems else f"{len(problems)} missing or altered"
        console.print(f"{files} lake file(s) checked: {state}{unrecorded}")
    raise typer.Exit(EXIT_FAILURE if problems else EXIT_OK)


@app.command()
def benchmark(
    sizes: Annotated[list[int], typer.Option("--size", help="Request rows; repeat for several sizes (default 1M, 10M, 100M).")] = [1_000_000, 10_000_000, 100_000_000],
    work: Annotated[Path, typer.Option(help="Scratch folder for the generated data and ledgers (large).")] = Path("bench-work"),
    out_file: Annotated[Path, typer.Option("--out", help="Markdown file the result table is written to.")] = Path("benchmarks/results.md"),
    months: Annotated[int, typer.Option(help="Months the rows are spread over.")] = 1,
    memory_limit: Annotated[str, typer.Option(help="DuckDB memory_limit for the floor and the nightly.")] = "3GB",
) -> None:
    """Measure the nightly against DuckDB's own floor at each size, then a one-day increment and a late file (not a test)."""
    from pipeline.benchmark import benchmark as run_benchmark
    from pipeline.benchmark import table

    command = "costledger benchmark " + " ".join(f"--size {n}" for n in sizes) + f" --months {months} --memory-limit {memory_limit}"
    steps = run_benchmark(sorted(sizes), work, months, memory_limit, lambda m: console.print(m))
    text = table(steps, command)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(text, encoding="utf-8")
    out.print(text, markup=False, highlight=False)
    console.print(f"wrote {out_file}; the data and ledgers stay in {work} (delete it when done)", markup=False, highlight=False)


@app.command("settings")
def settings_cmd(settings: SettingsOpt = None, db: DbOpt = None, example: Annotated[bool, typer.Option("--example", metavar="", help="Print an example settings file instead.")] = False,
                 as_json: JsonOpt = False,
                 markdown: Annotated[bool, typer.Option("--markdown", metavar="", help="Print the README's settings table (generated from the settings' declarations).")] = False) -> None:
    """Show the settings in force (and where they came from), or an example settings file."""
    from rich.text import Text

    from pipeline.settings import FIELD_DOCS, SettingsError, example_toml, load_settings_with_origins, settings_markdown

    if example:
        out.print(example_toml(), markup=False, highlight=False, end="")
        return
    if markdown:
        out.print(settings_markdown(), markup=False, highlight=False, end="", soft_wrap=True)
        return
    try:
        s, origins = load_settings_with_origins(settings, db)
    except SettingsError as exc:
        _error(str(exc))
        raise typer.Exit(EXIT_FAILURE) from None
    docs = FIELD_DOCS()
    if as_json:
        out.print_json(json.dumps({k: {"value": v if isinstance(v, (int, str, type(None))) else str(v),
                                        "from": origins[k]} for k, v in s.as_dict().items() if k != "source"}))
        return
    table = Table(title=Text(f"settings (file: {s.source})"))
    for col in ("setting", "value", "from", "meaning"):
        table.add_column(col, overflow="fold")
    for key, value in s.as_dict().items():
        if key != "source":
            table.add_row(Text(key), Text(str(value)), Text(origins[key]), Text(docs.get(key, "")))
    out.print(table)


def _version(value: bool) -> None:
    if value:
        out.print(f"costledger {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, metavar="", help="Print the version and exit.")] = False,
    debug: Annotated[bool, typer.Option("--debug", metavar="", help="On an unexpected error, print the Python traceback (also: COSTLEDGER_DEBUG=1).")] = False,
) -> None:
    """A cost ledger for running large LLMs: hosted API vs your own GPU cluster, month by month."""


EXIT_INTERRUPTED = 130


def _unexpected(exc: Exception, debug: bool) -> int:
    """An error that is not the ledger's own: one line (the traceback with ``--debug``), exit 1."""
    import traceback

    if debug:
        traceback.print_exc()
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else "(no message)"
    _error(f"{type(exc).__name__}: {text}")
    if not debug:
        console.print("run again with --debug for the traceback, and please report it", highlight=False)
    return EXIT_FAILURE


def entry(argv: list[str] | None = None) -> int:
    """The ``costledger`` command: every error ends as one line and its documented exit code, never a
    traceback (``--debug`` or ``COSTLEDGER_DEBUG=1`` shows it); Ctrl-C ends with 130."""
    import os
    import traceback

    from typer._click.exceptions import ClickException  # typer vendors click

    from pipeline.errors import CostledgerError

    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("COSTLEDGER_DEBUG") == "1"
    args = [a for a in args if a != "--debug"]
    try:
        code = app(args=args, prog_name="costledger", standalone_mode=False)
    except ClickException as exc:  # usage errors: exit 2
        exc.show()
        return exc.exit_code
    except CostledgerError as exc:  # the ledger's own errors: one line, their exit code
        if debug:
            traceback.print_exc()
        _error(str(exc))
        return exc.exit_code
    except (KeyboardInterrupt, typer.Abort):
        code = EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_FAILURE
    except Exception as exc:  # noqa: BLE001 (the one place that turns the unexpected into a message)
        if type(exc).__name__ != "InterruptException":  # Ctrl-C inside a DuckDB query is 130, below
            return _unexpected(exc, debug)
        code = EXIT_INTERRUPTED
    if code == EXIT_INTERRUPTED:
        console.print("interrupted: nothing half-done was published (the next run cleans up and carries on)",
                      highlight=False)
    return code if isinstance(code, int) else EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(entry())
