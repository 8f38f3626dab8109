"""Commands that run the ledger: rollback, settings, benchmark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from pipeline.cli import toc
from pipeline.cli.common import DbOpt, JsonOpt, SettingsOpt, console, error, read_settings, out, writer

if TYPE_CHECKING:
    from pipeline.storage.store import Store

app = typer.Typer()  # merged into the root app; each command names its help panel


_RollbackTo = Annotated[
    Optional[str], typer.Option(help="Snapshot file name to publish (default: the one before the current).")
]
_RollbackList = Annotated[bool, typer.Option("--list", metavar="", help="List the kept snapshots and exit.")]


def _list_snapshots(store: Store) -> None:
    """`rollback --list`: the kept snapshots, the published one marked (each snapshot's file opened once)."""
    snaps = store.snapshot_list()
    infos = {snap: store.snapshot_info(snap) for snap in snaps}
    current = store.current_snapshot(snaps, infos)
    out.print(
        "  snapshot (* = published)                           published at         run           months  MiB  ",
        markup=False,
        highlight=False,
    )
    for snap in snaps:
        i = infos[snap]
        note = "" if i["changed"] else "  (loaded nothing, changed no month)"
        out.print(
            f"{'*' if snap == current else ' '} {snap.name:50} {i['published_at']:20} "
            f"{i['run_id']:13} {i['months'] if i['months'] is not None else '?':>6} {i['mib']:5.1f}{note}",
            markup=False,
            highlight=False,
        )


@app.command(rich_help_panel=toc.panel("rollback"))
def rollback(
    db: DbOpt = None,
    settings: SettingsOpt = None,
    to: _RollbackTo = None,
    list_: _RollbackList = False,
    as_json: JsonOpt = False,
) -> None:
    """Publish an earlier snapshot again, and make it stick.

    The files loaded after that snapshot are taken back (meta.rolled_back_files): the next nightly publishes the
    snapshot's state plus only what is new, and does not load them again; `costledger reprocess FILE` loads one
    again. The rollback is recorded in meta.runs.
    """
    from pipeline.storage.store import Store

    s = read_settings(settings, db)
    store = Store.for_db(s.db)
    if list_:
        _list_snapshots(store)
        return
    from pipeline.run.nightly import run_rollback

    target = store.snapshots / to if to else None
    chosen, taken_back = writer(run_rollback, store, s, target)
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "published": chosen.name,
                    "db": str(s.db),
                    "rolled_back_files": [{"kind": k, "path": p} for k, p in taken_back],
                }
            )
        )
        return
    out.print(f"published {chosen.name} again as {s.db}", markup=False, highlight=False)
    for kind, path in taken_back:
        out.print(f"  rolled back  {kind:15} {path}", markup=False, highlight=False)
    if taken_back:
        out.print(
            f"{len(taken_back)} file(s) loaded after it are taken back: the next nightly publishes this state plus "
            "what is new, and does not load them again (`costledger reprocess FILE` does)",
            markup=False,
            highlight=False,
        )


def _shown(value: object) -> object:
    """A setting's value as JSON shows it: text with any URL's credentials masked, numbers as exact text."""
    from pipeline.base.text import masked_url

    if isinstance(value, str):
        return masked_url(value)
    return value if isinstance(value, (int, type(None))) else str(value)


@app.command("settings", rich_help_panel=toc.panel("settings"))
def settings_cmd(
    settings: SettingsOpt = None,
    db: DbOpt = None,
    example: Annotated[
        bool, typer.Option("--example", metavar="", help="Print an example settings file instead.")
    ] = False,
    as_json: JsonOpt = False,
    markdown: Annotated[
        bool,
        typer.Option(
            "--markdown",
            metavar="",
            help="Print the settings table of docs/settings.md (generated from the settings' declarations).",
        ),
    ] = False,
) -> None:
    """Show the settings in force (and where they came from), or an example settings file."""
    from rich.table import Table
    from rich.text import Text

    from pipeline.base.settings import SettingsError, load_settings_with_origins
    from pipeline.base.settings_docs import FIELD_DOCS, example_toml, settings_markdown
    from pipeline.base.text import masked_url

    if example:
        out.print(example_toml(), markup=False, highlight=False, end="")
        return
    if markdown:
        out.print(settings_markdown(), markup=False, highlight=False, end="", soft_wrap=True)
        return
    try:
        s, origins = load_settings_with_origins(settings, db)
    except SettingsError as exc:
        error(str(exc))
        raise typer.Exit(exc.exit_code) from None
    docs = FIELD_DOCS()
    if as_json:
        out.print_json(
            json.dumps({k: {"value": _shown(v), "from": origins[k]} for k, v in s.as_dict().items() if k != "source"})
        )
        return
    table = Table(title=Text(f"settings (file: {s.source})"))
    for col in ("setting", "value", "from", "meaning"):
        table.add_column(col, overflow="fold")
    for key, value in s.as_dict().items():
        if key != "source":
            table.add_row(Text(key), Text(masked_url(str(value))), Text(origins[key]), Text(docs.get(key, "")))
    out.print(table)


@app.command(rich_help_panel=toc.panel("benchmark"))
def benchmark(
    sizes: Annotated[
        list[int], typer.Option("--size", help="Request rows; repeat for several sizes (default 1M, 10M, 100M).")
    ] = [1_000_000, 10_000_000, 100_000_000],
    work: Annotated[Path, typer.Option(help="Scratch folder for the generated data and ledgers (large).")] = Path(
        "bench-work"
    ),
    out_file: Annotated[Path, typer.Option("--out", help="Markdown file the result table is written to.")] = Path(
        "benchmarks/results.md"
    ),
    months: Annotated[int, typer.Option(help="Months the rows are spread over.")] = 1,
    memory_limit: Annotated[
        str, typer.Option(help="DuckDB memory_limit for the floor, the peers and the nightly.")
    ] = "2GB",
    rebuild: Annotated[
        bool,
        typer.Option(
            "--rebuild",
            metavar="",
            help="Instead: at each size the nightly, then a build with another review rate (only the models that "
            "read it rebuilt) against the same build in full; their marts compared.",
        ),
    ] = False,
) -> None:
    """Measure the nightly against DuckDB's floor, an analyst's SQL script and a pandas notebook at each size,
    then a one-day increment and a late file; the peers' marts are checked against costledger's.

    A benchmark, not a test: it writes large data under --work."""
    from pipeline.cli.common import dev_tool

    tool = dev_tool("benchmarks.benchmark")
    run_benchmark, table = (tool.rebuild if rebuild else tool.benchmark), tool.table

    command = (
        "costledger benchmark "
        + " ".join(f"--size {n}" for n in sizes)
        + f" --months {months} --memory-limit {memory_limit}"
        + (" --rebuild" if rebuild else "")
    )
    steps, checks = run_benchmark(sorted(sizes), work, months, memory_limit, lambda m: console.print(m))
    text = table(steps, command, checks)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    out_file.write_text(text, encoding="utf-8")
    out.print(text, markup=False, highlight=False)
    console.print(
        f"wrote {out_file}; the data and ledgers stay in {work} (delete it when done)", markup=False, highlight=False
    )
