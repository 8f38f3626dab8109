"""What every command group shares: the consoles, the common options, settings and ledger opening, the
writer wrapper that turns the ledger's errors into messages and exit codes, progress and the run summary."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape

from pipeline.base.errors import ExitCode
from pipeline.base.text import counted, printable

# wide output when piped, so tables are not folded into 80 columns
console = Console(stderr=True, soft_wrap=True, width=None if sys.stderr.isatty() else 200)
out = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 200)


DbOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--db",
        help="DuckDB ledger file. Default: settings file \\[ledger] db, then ./ledger.duckdb.",
        show_default=False,
    ),
]
SettingsOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--settings",
        help="Settings TOML file. Default: $COSTLEDGER_SETTINGS, then ./costledger.toml if present.",
        show_default=False,
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", metavar="", help="Print a machine-readable JSON summary on stdout.")]


def error(text: str) -> None:
    """One error line on stderr; ``text`` is data, printed as is (never read as rich markup, its control characters
    escaped)."""
    console.print(f"[red]error:[/] {escape(printable(text))}", highlight=False)


def dev_tool(module: str):
    """A module of ``benchmarks/``, the development tooling of a source checkout (not shipped in the wheel): imported
    from the checkout this costledger runs from, or a usage error saying where it lives."""
    import importlib

    root = Path(__file__).resolve().parents[2]
    if not (root / "benchmarks" / "__init__.py").is_file():
        error(
            "this command runs the development tooling in benchmarks/ of a source checkout, which an installed "
            "costledger does not carry: run it from a clone of the repository (./run setup, then .venv/bin/costledger)"
        )
        raise typer.Exit(ExitCode.USAGE)
    if str(root) not in sys.path:
        sys.path.append(str(root))
    return importlib.import_module(module)


def read_settings(settings_path: Path | None, db: Path | None):
    from pipeline.base.settings import SettingsError, load_settings

    try:
        return load_settings(settings_path, db)
    except SettingsError as exc:
        error(str(exc))
        raise typer.Exit(exc.exit_code) from None


def open_read(s, limits=None):
    """The published ledger, read-only and sandboxed (with ``limits``, if given); a clear error when there is
    none yet."""
    from pipeline.storage.db import LedgerNotFound, connect_read
    from pipeline.storage.store import Store

    try:
        return connect_read(s.db, Store.for_db(s.db).lake, limits)
    except LedgerNotFound as exc:
        error(str(exc))
        raise typer.Exit(ExitCode.FAILURE) from None


def file_line(result) -> None:
    colour = {"loaded": "green", "skipped": "dim", "rejected": "red", "repaired": "yellow"}[result.status]
    same = result.rows_duplicate
    detail = (
        f"{result.rows_in} rows in, {result.rows_loaded} loaded, "
        + (f"{same} identical to rows already loaded (counted once), " if same else "")
        + f"{result.rows_quarantined - same} quarantined"
        + (f"; {result.message}" if result.message else "")
        if result.status == "loaded"
        else result.message
    )
    console.print(
        f"  [{colour}]{result.status:8}[/] {result.kind:15} {escape(printable(result.path))}  "
        f"[dim]{escape(printable(detail))}[/]",
        highlight=False,
    )


def summary(run, as_json: bool) -> None:
    """What a run did: its result on standard output (what was loaded, built, published), its warnings on standard
    error beside the progress, so that ``costledger nightly ... > log`` keeps the result."""
    if as_json:
        out.print_json(json.dumps(run.as_dict()))
        return
    d = run.as_dict()
    same = d["rows_identical_duplicates"]
    out.print(
        f"[bold]{escape(printable(d['command']))}[/] ({d['run_id']}): {d['files_loaded']} file(s) loaded, "
        f"{d['files_skipped']} skipped (already loaded, or not read: see above), {d['files_rejected']} rejected; "
        f"rows: {d['rows_in']} in = {d['rows_loaded']} loaded + "
        + (f"{same} identical to rows already loaded (counted once) + " if same else "")
        + f"{d['rows_quarantined'] - same} quarantined; {d['seconds']:.2f} s"
    )
    if d["nothing_new"]:
        out.print(
            "nothing new: no file loaded, and the models, the settings they read and the files loaded are as at the "
            "last build; nothing built, the published ledger stands as it was",
            highlight=False,
        )
    if run.build:
        changed = ", ".join(run.build.months_changed) or "none"
        out.print(f"built {run.build.models} models, {run.build.audits} audits passed; months changed: {changed}")
        if rebuilt := run.build.rebuilt_sentence():
            out.print(escape(rebuilt), highlight=False)
    if d["files_repaired"]:
        console.print(f"[yellow]rewrote {d['files_repaired']} lake file(s) from their re-delivered landing files[/]")
    if run.published:
        out.print(f"published {escape(printable(run.published))}", highlight=False)
    if run.orphans_removed:
        console.print(f"[yellow]cleaned up {run.orphans_removed} file(s) left by an interrupted run[/]")
    if run.lake_restored:
        console.print(f"[yellow]restored {run.lake_restored} lake file(s) missing here from object storage[/]")
    if run.lake_uploaded:
        console.print(f"copied {run.lake_uploaded} new lake file(s) to the lake in object storage", highlight=False)
    _warnings(run)
    share = run.max_quarantine_share
    for f in run.over_quarantined:
        bad = f.rows_quarantined - f.rows_duplicate
        text = (
            f"{f.path}: {bad} of {f.rows_in} rows ({bad / f.rows_in:.1%}), above "
            f"[validation] max_quarantine_share ({share:.0%}): another format, or a settings mistake? Fix it and load "
            "it again with `costledger reprocess`"
        )
        console.print(f"[red]too many rows quarantined:[/] {escape(printable(text))}", highlight=False)
    if run.count("rejected"):
        console.print("[red]some files were rejected whole; see above and `costledger status`[/]")
    quarantined = d["rows_quarantined"] - same
    if not run.published and run.build is None and not d["nothing_new"]:  # ingest: loaded, not yet published
        out.print(
            "not published yet: `costledger build` builds and publishes what was loaded; `costledger status`, "
            "`report` and `sql` read the ledger from then on",
            highlight=False,
        )
    why = "`costledger status` (once published)" if not run.published else "`costledger status`"
    said = f"{quarantined} row(s) quarantined in this run; why: {why}" if quarantined else "no rows quarantined"
    out.print(said if quarantined else f"{said} in this run", highlight=False)


#: a nightly names at most this many new anomalies on the console (all are in --json and the webhook)
_SHOWN_ANOMALIES = 10


def _warnings(run) -> None:
    """A run's warnings: reconciliation and usage gaps, landing entries skipped, unpriced requests, name variants."""
    from pipeline.base.text import budget_line

    for month, provider in run.mismatches:
        console.print(
            f"[yellow]reconciliation mismatch:[/] {escape(printable(provider))} {month} "
            "(see marts.monthly_reconciliation)"
        )
    for b in run.budgets:
        head, rest = budget_line(b).split(": ", 1)
        console.print(f"[yellow]{head}:[/] {escape(printable(rest))} (see marts.budget_status)", highlight=False)
    for a in run.anomalies[:_SHOWN_ANOMALIES]:
        console.print(f"[yellow]anomaly:[/] {escape(printable(a.cause))} (see marts.daily_anomalies)", highlight=False)
    if len(run.anomalies) > _SHOWN_ANOMALIES:
        more = len(run.anomalies) - _SHOWN_ANOMALIES
        console.print(f"[yellow]... and {more} more anomalies[/] (see marts.daily_anomalies)")
    if run.alerts and not run.alerts.startswith("sent"):
        console.print(
            f"[yellow]alerts webhook {escape(printable(run.alerts))}[/] (the ledger is published; recorded in "
            "meta.runs.alerts)",
            highlight=False,
        )
    for month, provider, token_type, status in run.usage_gaps:
        console.print(
            f"[yellow]usage export vs logs:[/] {escape(printable(provider))} {month} {token_type}: {status} "
            "(see marts.monthly_usage_reconciliation)",
            highlight=False,
        )
    for name in run.unknown_entries:
        console.print(
            f"[yellow]warning:[/] landing entry {escape(printable(repr(name)))} is a file, not a kind folder; ignored",
            highlight=False,
        )
    for link in run.outside_links:
        console.print(
            f"[yellow]warning:[/] {escape(printable(link))} is a link that leads out of the landing folder; skipped, "
            "not read",
            highlight=False,
        )
    for month, provider, model, requests in run.unpriced:
        who = escape(printable(f"{provider!r} model {model!r}"))
        console.print(
            f"[yellow]unpriced:[/] {counted(requests, 'API request')} of {who} in {month} "
            f"{'has' if requests == 1 else 'have'} no price for their provider, "
            "model and time: left out of the metered cost (load a price, or fix the name)",
            highlight=False,
        )
    _name_variants(run.name_variants)
    for path, line, cluster, reason in run.implausible_samples[:_SHOWN_ANOMALIES]:
        console.print(
            f"[yellow]meter sample set aside:[/] {escape(printable(f'{path}, line {line} ({cluster}): {reason}'))}",
            highlight=False,
        )
    if len(run.implausible_samples) > _SHOWN_ANOMALIES:
        more = len(run.implausible_samples) - _SHOWN_ANOMALIES
        console.print(f"[yellow]... and {more} more meter samples set aside[/] (see `costledger status`)")


#: More names differing only in case than this are counted in one line, not listed (a price map of thousands of
#: models can hold dozens)
NAME_VARIANTS_LISTED = 3


def _name_variants(variants: list[tuple[str, list[str]]]) -> None:
    if len(variants) > NAME_VARIANTS_LISTED:
        console.print(
            f"[yellow]names differing only in case:[/] {len(variants)} provider or model names are spelt in more "
            "than one letter case; each spelling is its own, priced apart. `costledger status` lists them",
            highlight=False,
        )
        return
    for what, spellings in variants:
        listed = escape(printable(", ".join(map(repr, spellings))))
        console.print(
            f"[yellow]names differing only in case:[/] {what} {listed}: each is its own, priced apart; correct the "
            "files if they are one",
            highlight=False,
        )


def exit_for(run) -> None:
    if run.count("rejected") or run.over_quarantined:
        raise typer.Exit(ExitCode.REJECTED)
    raise typer.Exit(ExitCode.MISMATCH if run.mismatches or run.usage_gaps else ExitCode.OK)


def writer(fn, *args, **kwargs):
    """Run a writing step, turning the ledger's own errors into messages and exit codes."""
    import duckdb

    from pipeline.transform.build import ModelFailed
    from pipeline.base.errors import CostledgerError

    try:
        return fn(*args, **kwargs)
    except CostledgerError as exc:  # busy 5, not enough disk 6, a failed audit or model or a damaged lake 1
        error(str(exc))
        if isinstance(exc, ModelFailed) and "Out of Memory" in str(exc):
            console.print(escape("hint: raise [ledger] memory_limit in the settings file (DuckDB spills what it can)"))
        raise typer.Exit(exc.exit_code) from None
    except FileNotFoundError as exc:
        error(str(exc))
        raise typer.Exit(ExitCode.FAILURE) from None
    except (OSError, duckdb.Error) as exc:  # a commit that finds the disk full is a TransactionException
        if not disk_full(exc):
            raise
        error(
            f"the disk is full ({str(exc).splitlines()[0]}); nothing half-done was published. "
            "Free some space and run again."
        )
        raise typer.Exit(ExitCode.DISK) from None


def disk_full(exc: Exception) -> bool:
    import errno

    return exc.errno == errno.ENOSPC if isinstance(exc, OSError) else "space left" in str(exc).lower()


class Bar:
    """A transient progress bar on a terminal (none elsewhere, or when ``shown`` is false); its tasks are the
    subclass's."""

    def __init__(self, shown: bool) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = None
        if shown and console.is_terminal:
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )

    def __enter__(self):  # noqa: ANN204 - the subclass
        if self.bar:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.bar:
            self.bar.__exit__(*exc)


class Progress(Bar):
    """A progress bar on a terminal; one line per file otherwise."""

    def __init__(self, total_files: int, quiet: bool) -> None:
        super().__init__(not quiet)
        self.quiet = quiet
        if self.bar:
            self.files = self.bar.add_task("loading files", total=total_files)
            self.models = self.bar.add_task("building models", total=None, visible=False)

    def on_file(self, result) -> None:
        if self.bar:
            self.bar.advance(self.files)
        if not self.quiet:
            file_line(result)

    def on_model(self, name: str) -> None:
        if self.bar:
            self.bar.update(self.models, visible=True, description=f"building {name}")
            self.bar.advance(self.models)
