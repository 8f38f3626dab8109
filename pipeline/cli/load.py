"""Commands that write the ledger: ingest, build, nightly, sample."""

from __future__ import annotations

import time
from enum import Enum
from pathlib import Path
from typing import Annotated, Literal, Optional

import typer
from rich.markup import escape

from pipeline.cli import toc
from pipeline.base.errors import ExitCode
from pipeline.base.fileformats import (
    BILLING_FORMATS,
    LOG_FORMATS,
    ENGINE_METRIC_FORMATS,
    METRIC_FORMATS,
    PRICE_LIST_FORMATS,
    USAGE_FORMATS,
)
from pipeline.cli.common import (
    DbOpt,
    JsonOpt,
    Progress,
    SettingsOpt,
    console,
    error,
    exit_for,
    read_settings,
    open_read,
    out,
    summary,
    writer,
)

app = typer.Typer()  # merged into the root app; each command names its help panel


_IngestKind = Annotated[
    str,
    typer.Argument(
        help="requests, outcomes, invoices, usage, prices, fx, cluster-charges, hardware, opex, focus, load-tests, "
        "eval-tasks, gate-checks, engine-metrics, gpu-metrics."
    ),
]
_IngestFiles = Annotated[
    list[Path],
    typer.Argument(help="CSV, JSONL or Parquet files; metrics also .prom/.txt (.gz allowed).", show_default=False),
]


def _one_of(names: tuple[str, ...]) -> str:
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else names[0]


_IngestLogFormat = Annotated[
    Optional[str],
    typer.Option(
        "--format",
        help=f"requests: {_one_of(LOG_FORMATS)}; invoices: {_one_of(('canonical', *BILLING_FORMATS))}; usage: "
        f"{_one_of(USAGE_FORMATS)}; prices: {_one_of(PRICE_LIST_FORMATS)}; engine-metrics: "
        f"{_one_of(ENGINE_METRIC_FORMATS)}; gpu-metrics: {_one_of(METRIC_FORMATS)}. Default: the settings' "
        "entry for the file (\\[\\[request_logs]], \\[\\[billing_exports]], \\[\\[price_lists]]), else detected "
        "from the content.",
        show_default=False,
    ),
]
_IngestCorrection = Annotated[
    bool,
    typer.Option(
        "--correction",
        metavar="",
        help="The files correct rows loaded earlier: a row with an earlier row's key and other content "
        "restates it (as a file under a corrections/ folder of its kind folder does in a nightly).",
    ),
]


@app.command(rich_help_panel=toc.panel("ingest"))
def ingest(
    kind: _IngestKind,
    files: _IngestFiles,
    db: DbOpt = None,
    settings: SettingsOpt = None,
    *,
    as_json: JsonOpt = False,
    log_format: _IngestLogFormat = None,
    correction: _IngestCorrection = False,
) -> None:
    """Load files of one KIND into the ledger (each file whole or not at all; bad rows quarantined).

    KIND: requests, outcomes, invoices, usage, prices, fx, cluster-charges, hardware, opex, focus, load-tests,
    eval-tasks, gate-checks, engine-metrics, gpu-metrics.
    """

    from pipeline.run.nightly import run_ingest
    from pipeline.storage.store import Store
    from schemas.tables import KINDS

    if kind not in KINDS:
        error(f"unknown kind {kind!r}; expected one of: {', '.join(KINDS)}")
        raise typer.Exit(ExitCode.USAGE)
    formats = {
        "requests": LOG_FORMATS,
        "invoices": ("canonical", *BILLING_FORMATS),
        "usage": ("canonical", *USAGE_FORMATS),
        "prices": ("canonical", *PRICE_LIST_FORMATS),
        "engine-metrics": ENGINE_METRIC_FORMATS,
        "gpu-metrics": METRIC_FORMATS,
    }
    if log_format is not None and log_format not in formats.get(kind, ()):
        error(
            f"--format applies to requests ({', '.join(LOG_FORMATS)}), invoices ({', '.join(formats['invoices'])}), "
            f"usage ({', '.join(formats['usage'])}), prices ({', '.join(formats['prices'])}), engine-metrics "
            f"({', '.join(ENGINE_METRIC_FORMATS)}) and gpu-metrics ({', '.join(METRIC_FORMATS)}) only"
        )
        raise typer.Exit(ExitCode.USAGE)
    s = read_settings(settings, db)
    _local_files(files)
    with Progress(len(files), as_json) as progress:
        run = writer(
            run_ingest,
            Store.for_db(s.db),
            s,
            [(kind, f) for f in files],
            f"ingest {kind}",
            on_file=progress.on_file,
            log_format=log_format,
            correction=correction,
        )
    summary(run, as_json)
    exit_for(run)


class Engine(str, Enum):
    duckdb = "duckdb"
    spark = "spark"


EngineOpt = Annotated[
    Optional[Engine],
    typer.Option(
        "--engine",
        help="Run the models on DuckDB (embedded) or Apache Spark (needs costledger\\[spark] and Java 17+); "
        "default: the settings' engine.name (duckdb).",
        show_default=False,
    ),
]


_Select = Annotated[
    Optional[list[str]],
    typer.Option(
        "--select",
        "-s",
        help="Build only this model (layer.name or name); +MODEL with what it reads, MODEL+ with what reads it. "
        "Repeat for more. Not published.",
        show_default=False,
    ),
]


@app.command("build", rich_help_panel=toc.panel("build"))
def build_cmd(
    db: DbOpt = None,
    settings: SettingsOpt = None,
    engine: EngineOpt = None,
    as_json: JsonOpt = False,
    select: _Select = None,
) -> None:
    """Run the SQL models (staging -> intermediate -> marts) and their audits, then publish.

    On Spark (--engine spark) the incremental models go on from the last Spark build, most of them; see the README's
    "Running on Spark". With --select, only the models selected run, each computed whole (an incremental one from all
    its inputs; the next build rebuilds it in full), in the work file: nothing is published, since the other models
    were not built with them. Example: costledger build --select +marts.monthly_phase_cost"""
    from dataclasses import replace

    from pipeline.run.nightly import run_build, run_selected_build
    from pipeline.storage.store import Store

    s = read_settings(settings, db)
    if engine is not None:
        s = replace(s, engine_name=engine.value)
    with Progress(0, as_json) as progress:
        if select:
            run = writer(run_selected_build, Store.for_db(s.db), s, tuple(select), on_model=progress.on_model)
        else:
            run = writer(run_build, Store.for_db(s.db), s, on_model=progress.on_model)
    summary(run, as_json)
    if select and not as_json:
        out.print("not published: the models selected were built in the work file alone; `costledger build` "
                  "builds and publishes them all", highlight=False)  # fmt: skip
    raise typer.Exit(ExitCode.MISMATCH if run.mismatches or run.usage_gaps else ExitCode.OK)


@app.command(rich_help_panel=toc.panel("nightly"))
def nightly(
    landing_dir: Annotated[
        Path,
        typer.Argument(
            help="Folder with one subfolder per kind: requests/, outcomes/, invoices/, prices/, cluster-charges/, "
            "hardware/, opex/, focus/, load-tests/, fx/, usage/, eval-tasks/, gate-checks/, engine-metrics/, "
            "gpu-metrics/. Or such a folder in object storage: s3://bucket/prefix, copied into the ledger's folder "
            "first; credentials and endpoint from the environment (AWS_ACCESS_KEY_ID, AWS_PROFILE, AWS_ENDPOINT_URL)."
        ),
    ],
    db: DbOpt = None,
    settings: SettingsOpt = None,
    as_json: JsonOpt = False,
    report: Annotated[
        bool, typer.Option("--report/--no-report", metavar="", help="Print the latest month's plain report at the end.")
    ] = False,
) -> None:
    """Load every new file of a landing folder, build, and publish atomically. Safe to run twice.

    Exit codes:
    0 all well; 1 failure (nothing new published);
    3 a file or folder was rejected whole (the rest was published);
    4 a reconciliation mismatch (invoice or usage export vs logs) in any month (on every run while it lasts);
    5 another process is writing; 6 disk full; 130 interrupted.
    """
    from pipeline.run.nightly import run_nightly
    from pipeline.storage.store import Store

    s = read_settings(settings, db)
    landing_dir, url, found = _landing(s, landing_dir)
    entries = len(found.pairs) + len(found.unknown_folders) + len(found.not_read) + len(found.rejected)
    with Progress(entries, as_json) as progress:
        run = writer(
            run_nightly,
            Store.for_db(s.db),
            s,
            landing_dir,
            on_file=progress.on_file,
            on_model=progress.on_model,
            found=found,
            url=url,
        )
    summary(run, as_json)
    if report and not as_json:
        from pipeline.serve.report import plain_report

        rcon = open_read(s)
        out.print(plain_report(rcon, None))
        rcon.close()
    exit_for(run)


def _landing(s, landing_dir: Path):  # noqa: ANN001, ANN202 - settings; (folder, url or None, what was found)
    """The local folder the nightly walks (an ``s3://`` landing copied into the ledger's folder first), its URL when
    remote, and its files, scanned once: they are the progress bar's total and what the run loads."""
    from pipeline.run.nightly import scan_landing
    from pipeline.storage.remote import UnsupportedScheme, landing_url
    from pipeline.storage.store import Store

    try:
        url = landing_url(landing_dir)
    except UnsupportedScheme as exc:
        error(str(exc))
        raise typer.Exit(exc.exit_code) from None
    fetched = writer(_fetch, Store.for_db(s.db), url) if url else None
    if fetched:
        landing_dir = fetched.folder
    if not landing_dir.is_dir():
        error(f"landing folder {landing_dir} does not exist")
        raise typer.Exit(ExitCode.FAILURE)
    found = scan_landing(landing_dir)
    if fetched:
        found.rejected += fetched.rejected
    return landing_dir, url, found


def _local_files(files: list[Path]) -> None:
    """Exit 2 when a file is written as a URL: these commands read local files, and a URL would be looked for as a
    local path (``s3:/bucket/...``) and rejected as missing."""
    from pipeline.base.settings import UnsupportedLocation, local_path

    for f in files:
        try:
            local_path(f, "the file")
        except UnsupportedLocation as exc:
            error(f"{exc}; a landing folder in object storage is read by `costledger nightly s3://bucket/prefix`")
            raise typer.Exit(exc.exit_code) from None


def _fetch(store, url: str):  # noqa: ANN202 - a pipeline.storage.remote.Fetched
    """The landing folder at ``url`` copied into the ledger's folder (holding the writer's lock: one copy at a time):
    what was copied, and the objects whose keys cannot be a file's name."""
    from pipeline.storage.remote import fetch_landing, local_copy

    with store.writer_lock():
        done = fetch_landing(url, local_copy(store.state, url), progress=lambda line: console.print(escape(line)))
    console.print(
        escape(
            f"{url}: {done.copied} object(s) copied ({done.bytes_copied:,} bytes), {done.current} already copied, "
            f"{done.removed} gone" + (f", {len(done.rejected)} not copied" if done.rejected else "")
        ),
        highlight=False,
    )
    return done


@app.command(rich_help_panel=toc.panel("reprocess"))
def reprocess(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Landing files loaded before (known by their content), or their s3:// URLs.", show_default=False
        ),
    ],
    db: DbOpt = None,
    settings: SettingsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Load files again under the settings in force now, in place of their earlier load; build; publish.

    A file a nightly copied from object storage is given by its URL (s3://bucket/prefix/kind/file).

    For a file read under a setting since corrected (a mapping, a bound, a price-list date): its rows, its
    quarantined rows and its keys are replaced in one transaction (a file rejected now leaves its earlier load
    as it was), it keeps its place in the load order, the run is recorded in meta.runs, and the months whose
    marts changed are listed. The next build is full.

    Exit codes: 0 all well; 1 failure (nothing new published); 3 a file rejected (not loaded before, or rejected
    now); 4 a reconciliation mismatch in any month (on every run while it lasts); 5 another process is writing;
    6 disk full.
    """
    from pipeline.run.nightly import run_reprocess
    from pipeline.storage.store import Store

    from pipeline.storage.remote import UnsupportedScheme, landing_url

    s = read_settings(settings, db)
    if not Store.for_db(s.db).work_db.exists():  # nothing was ever loaded here: no file to load again, nothing made
        error(f"no ledger at {s.db}: `costledger nightly LANDING_DIR --db {s.db}` loads files first")
        raise typer.Exit(ExitCode.FAILURE)
    given: list[Path | str] = []
    for f in files:
        try:  # a file of a landing folder in object storage, by its URL: the copy a nightly made of it
            url = landing_url(f)
        except UnsupportedScheme as exc:
            error(str(exc))
            raise typer.Exit(exc.exit_code) from None
        given.append(url or f)
    with Progress(len(files), as_json) as progress:
        run = writer(run_reprocess, Store.for_db(s.db), s, given, on_file=progress.on_file, on_model=progress.on_model)
    summary(run, as_json)
    exit_for(run)


def _refuse_a_full_folder(out_dir: Path, allowed: bool) -> None:
    """Demo data written into a real landing folder would be loaded as real: a folder that is not empty is refused
    unless ``allowed``."""
    if out_dir.exists() and any(out_dir.iterdir()) and not allowed:
        error(
            f"{out_dir} is not empty: the sample would mix demo data into it. Choose a new folder, or give --force "
            "to write into it anyway"
        )
        raise typer.Exit(ExitCode.USAGE)


def _large_sample(out_dir: Path, requests: int, months: int, start: str, seed: int, **days: bool) -> None:
    from pipeline.sample.large import write_large_sample

    t0 = time.perf_counter()
    stats = write_large_sample(out_dir, requests, months=months, start=start, seed=seed, **days)
    for kind, n in stats.items():
        console.print(f"  {kind:16} {n:>12,} rows")
    console.print(f"wrote {escape(str(out_dir))} in {time.perf_counter() - t0:.1f} s", highlight=False)


_SampleOutDir = Annotated[Path, typer.Option("--out", help="Landing folder to write (one subfolder per kind).")]
_SampleSeed = Annotated[int, typer.Option(help="Random seed: the same seed writes the same files.")]
_SampleMonths = Annotated[
    Optional[int],
    typer.Option(help="Number of months (default: the scenario's; large mode: 3).", show_default=False),
]
_SampleTasksPerMonth = Annotated[
    Optional[int],
    typer.Option(help="Tasks per month per route, overriding the scenario's volumes.", show_default=False),
]
_SampleScenario = Annotated[
    Literal["growth", "small-team"],
    typer.Option(
        help="growth: self-hosted volume grows past break-even (the bundled sample_data); small-team: 1,200 tasks "
        "a route a month, the API cheaper every month."
    ),
]
_SampleRequests = Annotated[
    Optional[int],
    typer.Option(
        "--requests",
        help="Large mode: write this many request rows as one Parquet file per day (streamed; for benchmarks).",
        show_default=False,
    ),
]
_SampleFmt = Annotated[
    Literal["parquet"], typer.Option("--format", help="File format of the large mode's request files.")
]
_SampleExtraDay = Annotated[
    bool,
    typer.Option(
        "--extra-day", metavar="", help="Large mode: write only the day after the period (a one-day increment)."
    ),
]
_SampleLateDay = Annotated[
    bool,
    typer.Option(
        "--late-day",
        metavar="",
        help="Large mode: write only a day of new requests dated the 15th of the first month (a late file).",
    ),
]
_SampleForce = Annotated[
    bool,
    typer.Option(
        "--force",
        metavar="",
        help="Write into a folder that is not empty (its files of the same names are replaced, the others stay).",
    ),
]


@app.command(rich_help_panel=toc.panel("sample"))
def sample(
    out_dir: _SampleOutDir = Path("sample_data"),
    seed: _SampleSeed = 7,
    start: Annotated[str, typer.Option(help="First month, YYYY-MM.")] = "2026-07",
    months: _SampleMonths = None,
    *,
    tasks_per_month: _SampleTasksPerMonth = None,
    scenario: _SampleScenario = "growth",
    requests: _SampleRequests = None,
    fmt: _SampleFmt = "parquet",
    extra_day: _SampleExtraDay = False,
    late_day: _SampleLateDay = False,
    force: _SampleForce = False,
) -> None:
    """Write a realistic landing folder: two API providers, one self-hosted cluster, sweeps, invoices, opex.

    With --requests N: large benchmark data, streamed to one Parquet file per day. A folder that is not empty is
    refused (demo data mixed into a real landing folder would be loaded as real), unless --force, or --extra-day /
    --late-day (which add a day to a large sample's folder).
    """
    _refuse_a_full_folder(out_dir, force or extra_day or late_day)
    if requests is not None:
        _large_sample(out_dir, requests, months or 3, start, seed, extra_day=extra_day, late_day=late_day)
        return
    from pipeline.sample.demo import write_sample

    stats = write_sample(
        out_dir, seed=seed, start=start, months=months, tasks_per_month=tasks_per_month, scenario=scenario
    )
    for kind, n in stats.items():
        console.print(f"  {kind:16} {n:>8} rows")
    console.print(f"wrote {escape(str(out_dir))}", highlight=False)
