"""The ``costledger`` command line (the commands: ``pipeline.cli.main``).

``costledger`` and ``costledger --help`` print the command list from ``pipeline.cli.toc`` without importing
Typer (under 0.3 s); everything else goes to the Typer app, imported on first use.
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
    from pipeline.cli.main import run

    return run(args)


def __getattr__(name: str) -> Any:
    """``from pipeline.cli import app``: the Typer app, imported when asked for."""
    if name == "app":
        from pipeline.cli.main import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
