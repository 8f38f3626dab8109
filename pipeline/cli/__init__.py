"""The ``costledger`` command line (the commands: ``pipeline.cli.main``).

``costledger`` and ``costledger --help`` print the command list from ``pipeline.cli.toc`` without importing
Typer (under 0.3 s); everything else goes to the Typer app, imported on first use. ``nightly`` and ``ingest``
start Great Expectations' process before that import (``pipeline.ingest.validate.warm_up``).
"""

from __future__ import annotations

import sys
from typing import Any


def entry(argv: list[str] | None = None) -> int:
    """The ``costledger`` command (``pipeline.cli.main.run`` for everything but the command list)."""
    args = list(sys.argv[1:] if argv is None else argv)
    from pipeline.cli import toc

    if toc.is_root_help(args):
        import shutil

        sys.stdout.write(toc.root_help(shutil.get_terminal_size((100, 24)).columns))
        return 0
    # a command that loads files starts GX's process now: it imports GX (2-3.5 s) on the other core while this
    # process imports the rest and opens the ledger (1-1.3 s), instead of after that (the first file's commit waits
    # for GX). If no file turns out to be new, or the command fails first, the process is stopped, not waited for.
    loads = bool(args) and args[0] in LOADING_COMMANDS and not toc.asks_help(args)
    if loads:
        from pipeline.ingest.validate import warm_up

        warm_up()
    try:
        from pipeline.cli.main import run

        return run(args)
    finally:
        if loads:
            from pipeline.ingest.validate import stop_worker

            stop_worker()


#: the commands that may load files and so need Great Expectations' process
LOADING_COMMANDS = frozenset({"nightly", "ingest"})


def __getattr__(name: str) -> Any:
    """``from pipeline.cli import app``: the Typer app, imported when asked for."""
    if name == "app":
        from pipeline.cli.main import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
