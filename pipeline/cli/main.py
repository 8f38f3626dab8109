"""The ``costledger`` command line.

Exit codes (documented in the README):
  0  all went well
  1  failure: unreadable ledger, a build audit failed (nothing new published)
  2  usage error (unknown option, missing argument, a settings file that cannot be read as settings)
  3  one or more files were rejected whole; everything else loaded, built and published
  4  a reconciliation mismatch (invoice or usage export vs logs) in any month, on every run while it lasts; everything
     loaded, built and published
  5  another costledger process is writing this ledger (nothing done)
  6  not enough free disk space, or the disk filled while writing (nothing half-done published)
  7  ``costledger gate``: the deployment gate failed or is incomplete
  130 interrupted (Ctrl-C)
No error ends in a traceback (``entry``); ``--debug`` shows it.
"""

from __future__ import annotations

from typing import Annotated

import typer

from pipeline import __version__
from pipeline.cli import finance, load, operate, plan, pull, read, toc
from pipeline.cli.common import console, error, out
from pipeline.base.errors import ExitCode

app = typer.Typer(
    name="costledger",
    help=toc.ABOUT,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
for group in (load, pull, read, finance, plan, operate):  # one module per command group; their commands stay top-level
    app.add_typer(group.app)


def _version(value: bool) -> None:
    if value:
        out.print(f"costledger {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, metavar="", help=toc.OPTIONS["--version"]),
    ] = False,
    debug: Annotated[
        bool,
        typer.Option("--debug", metavar="", help=toc.OPTIONS["--debug"]),
    ] = False,
) -> None:
    del version, debug  # --version acts in its callback, --debug in run(); the help text is toc.ABOUT


def _interrupted(exc: Exception) -> bool:
    """Ctrl-C as DuckDB reports it: an InterruptException, or (while a result is fetched) a RuntimeError."""
    name = type(exc).__name__
    return name == "InterruptException" or (isinstance(exc, RuntimeError) and "interrupted" in str(exc).lower())


def _unexpected(exc: Exception, debug: bool) -> int:
    """An error that is not the ledger's own: one line (the traceback with ``--debug``), exit 1."""
    import traceback

    if debug:
        traceback.print_exc()
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else "(no message)"
    error(f"{type(exc).__name__}: {text}")
    if not debug:
        console.print("run again with --debug for the traceback, and please report it", highlight=False)
    return ExitCode.FAILURE


def run(args: list[str]) -> int:
    """The ``costledger`` command: every error ends as one line and its documented exit code, never a
    traceback (``--debug`` or ``COSTLEDGER_DEBUG=1`` shows it); Ctrl-C ends with 130."""
    import os
    import traceback

    from typer._click.exceptions import ClickException  # typer vendors click

    from pipeline.base.errors import CostledgerError

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
        error(str(exc))
        return exc.exit_code
    except (KeyboardInterrupt, typer.Abort):
        code = ExitCode.INTERRUPTED
    except BrokenPipeError:
        return ExitCode.FAILURE
    except OSError as exc:  # the operating system's answer (no room, no permission, a folder for a file): no bug
        from pipeline.cli.common import disk_full

        error(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
        return ExitCode.DISK if disk_full(exc) else ExitCode.FAILURE
    except Exception as exc:  # noqa: BLE001 (the one place that turns the unexpected into a message)
        if not _interrupted(exc):  # Ctrl-C inside a DuckDB query is 130, below
            return _unexpected(exc, debug)
        code = ExitCode.INTERRUPTED
    if code == ExitCode.INTERRUPTED:
        console.print(
            "interrupted: nothing half-done was published (the next run cleans up and carries on)", highlight=False
        )
    return code if isinstance(code, int) else ExitCode.OK
