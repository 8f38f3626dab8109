"""What ``costledger --help`` lists, printed without importing Typer or Rich.

``costledger --help`` (and ``costledger`` alone) is the one command a new user runs first and the one a shell
script calls to check the install. Importing Typer, Click and Rich's help renderer takes longer than the whole
answer should (under 0.3 s), so this module, which imports nothing, prints it. Every other help
(``costledger ingest --help``) is Typer's. The commands take their help panel from ``PANELS`` and a test checks
that the names and one-line summaries here are those of the Typer app (tests/e2e/test_cli.py).
"""

from __future__ import annotations

import textwrap

ABOUT = "A cost ledger for running large LLMs: hosted API vs your own GPU cluster, month by month."

OPTIONS = {
    "--version": "Print the version and exit.",
    "--debug": "On an unexpected error, print the Python traceback (also: COSTLEDGER_DEBUG=1).",
    "--help": "Show this message and exit.",
}

PANELS: dict[str, dict[str, str]] = {
    "Load and build": {
        "ingest": "Load files of one KIND into the ledger (each file whole or not at all; bad rows quarantined).",
        "build": "Run the SQL models (staging -> intermediate -> marts) and their audits, then publish.",
        "nightly": "Load every new file of a landing folder, build, and publish atomically. Safe to run twice.",
        "reprocess": "Load files again under the settings in force now, in place of their earlier load; build; "
        "publish.",
        "sample": "Write a realistic landing folder: two API providers, one self-hosted cluster, sweeps, invoices, "
        "opex.",
        "pull": "Fetch what the ledger reads into the landing folder, page by page: `pull prometheus` the engine and "
        "GPU metrics, `pull openai` and `pull anthropic` the organisation's costs and usage.",
    },
    "Read the ledger": {
        "sql": "Run ad-hoc SQL against the published ledger, read-only and sandboxed.",
        "status": "Per kind and per file: rows in, loaded, quarantined; top quarantine reasons; the latest run's "
        "slowest steps.",
        "report": "The monthly break-even report for leadership: verdict, trends, sensitivity, planning, trust.",
        "verify": "Check every lake file against the SHA-256 recorded when it was loaded.",
        "chargeback": "Who spent what: the month's whole spend on both routes by team, route and cost class, to the "
        "cent.",
        "export": "The ledger's own spend in a format other tools read: `export focus` writes a month as FOCUS 1.2.",
        "explain": "Where a figure comes from: its meaning, its formula with the month's own values, and the landing "
        "files behind each value (path, SHA-256, rows, and the lines when they are few).",
    },
    "Plan": {
        "scenario": "Planning without data: monthly cluster cost at each rate, and how many API tasks cost the same.",
        "plan": "How big a cluster for a month's demand: the month's cost at 0, 1, 2, ... nodes, the overflow on the "
        "API, beside the month as it was (today: its nodes and its real spend).",
        "gate": "Is the cluster ready? The deployment gate: an evaluation set side by side on both routes, its "
        "criteria, its verdict (passed, failed naming what failed, or incomplete naming what is missing).",
    },
    "Operate": {
        "rollback": "Publish an earlier snapshot again, and make it stick.",
        "settings": "Show the settings in force (and where they came from), or an example settings file.",
        "benchmark": "Measure the nightly against DuckDB's floor, an analyst's SQL script and a pandas notebook at "
        "each size, then a one-day increment and a late file; the peers' marts are checked against costledger's.",
    },
}


def panel(command: str) -> str:
    """The help panel a command is listed in."""
    return next(p for p, commands in PANELS.items() if command in commands)


def is_root_help(args: list[str]) -> bool:
    """``costledger``, ``costledger --help``: the listing (any other argument goes to Typer)."""
    return args in ([], ["--help"])


def asks_help(args: list[str]) -> bool:
    """A command's own ``--help`` (or ``-h``) anywhere before a ``--``: the command does not run."""
    words = args[: args.index("--")] if "--" in args else args
    return "--help" in words or "-h" in words


def root_help(width: int = 100) -> str:
    """The usage line, the options and the commands by panel, wrapped to ``width`` columns."""
    width = max(60, min(width, 120))
    lines = [
        "Usage: costledger [OPTIONS] COMMAND [ARGS]...",
        "",
        *textwrap.wrap(ABOUT, width - 2, initial_indent="  ", subsequent_indent="  "),
        "",
    ]
    sections = {"Options": OPTIONS, **PANELS}
    name_width = max(len(n) for entries in sections.values() for n in entries) + 2
    for title, entries in sections.items():
        lines.append(f"{title}:")
        for name, text in entries.items():
            wrapped = textwrap.wrap(text, max(20, width - name_width - 2))
            lines.append(f"  {name:<{name_width}}{wrapped[0]}")
            lines += [" " * (name_width + 2) + more for more in wrapped[1:]]
        lines.append("")
    lines.append("Run `costledger COMMAND --help` for a command's options.")
    return "\n".join(lines) + "\n"
