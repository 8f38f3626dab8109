"""The ledger's own errors: one base class, each with the exit code the CLI ends with.

``pipeline.cli.main.run`` turns any ``CostledgerError`` into one line and its ``exit_code``;
anything else is unexpected (one line, exit 1, ``--debug`` for the traceback). Errors about
a single row or file (``FileRejected``, ``MappingError``) are not here: they quarantine or
reject the data and the run goes on.

The codes are ``ExitCode`` below: 1 failure (nothing new was published: bad settings, no ledger, failed audit, lake
damaged, a model or its header is wrong, GX disagrees with the SQL rules), 2 usage (refused SQL, bad month), 3 a file
rejected whole, 4 a reconciliation mismatch, 5 another process is writing the ledger, 6 disk, 7 the deployment gate did
not pass, 130 interrupted.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What the command line exits with: every exit code the project uses, once."""

    OK = 0
    FAILURE = 1
    """Nothing new was published (bad settings, no ledger, a failed audit, ...)."""
    USAGE = 2
    """The command or its input cannot be run as given."""
    REJECTED = 3
    """A file was rejected whole (the rest was loaded, built and published)."""
    MISMATCH = 4
    """A reconciliation mismatch in a month of the ledger (everything was published), on every run while it lasts."""
    BUSY = 5
    """Another costledger process is writing this ledger."""
    DISK = 6
    """Not enough free disk space, or the disk filled up while writing."""
    GATE_NOT_PASSED = 7
    """``costledger gate``: the deployment gate failed or is incomplete (a CI job stops here)."""
    INTERRUPTED = 130
    """Ctrl-C: nothing half-done was published."""


class CostledgerError(Exception):
    """Base of the ledger's errors; ``exit_code`` is what the command line exits with."""

    exit_code = ExitCode.FAILURE


class UsageError(CostledgerError):
    """The command cannot run as given (exit 2)."""

    exit_code = ExitCode.USAGE
