"""The ledger's own errors: one base class, each with the exit code the CLI ends with.

``pipeline.cli.main.run`` turns any ``CostledgerError`` into one line and its ``exit_code``;
anything else is unexpected (one line, exit 1, ``--debug`` for the traceback). Errors about
a single row or file (``FileRejected``, ``MappingError``) are not here: they quarantine or
reject the data and the run goes on.

=====  ===========================================================================
code   meaning
=====  ===========================================================================
1      failure: nothing new was published (bad settings, no ledger, failed audit,
       lake damaged, a model or its header is wrong, GX disagrees with the SQL rules)
2      usage: the command or its input cannot be run as given (refused SQL, bad month)
5      another costledger process is writing this ledger
6      not enough free disk space
=====  ===========================================================================
"""

from __future__ import annotations


class CostledgerError(Exception):
    """Base of the ledger's errors; ``exit_code`` is what the command line exits with."""

    exit_code = 1


class UsageError(CostledgerError):
    """The command cannot run as given (exit 2)."""

    exit_code = 2
