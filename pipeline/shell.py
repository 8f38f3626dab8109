"""The ad-hoc SQL shell's guard: only reading statements run, every one of them is shown.

``costledger sql`` opens the published file read-only with DuckDB's external access off
(``pipeline.db.connect_read``), so no file outside the ledger's lake can be read and
none can be written. The lake itself has to stay readable (the raw views read it), and
DuckDB's ``allowed_directories`` opens a folder for writing as well as for reading, so
the shell also refuses, before running anything, any statement that is not a query:
``COPY``, ``EXPORT``, ``ATTACH``, ``INSTALL``/``LOAD``, ``SET``, ``PRAGMA``, DDL and DML.
A query of several statements runs only if all of them are allowed, and each result is
shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
from pipeline.errors import UsageError

#: Statement types the shell runs: they read and return rows.
ALLOWED = frozenset({"SELECT", "EXPLAIN", "CALL"})


class RefusedStatement(UsageError, ValueError):
    """A statement the read-only shell does not run; nothing of the query was run."""


@dataclass(frozen=True)
class Result:
    statement: str
    names: list[str]
    rows: list[tuple[Any, ...]]


def statements(con: duckdb.DuckDBPyConnection, text: str) -> list[Any]:
    """Parse ``text`` into statements and refuse the query if any one of them is not a read."""
    parsed = con.extract_statements(text)
    if not parsed:
        raise RefusedStatement("no SQL statement given")
    for number, stmt in enumerate(parsed, start=1):
        kind = stmt.type.name
        if kind not in ALLOWED:
            where = f"statement {number} of {len(parsed)}" if len(parsed) > 1 else "the statement"
            raise RefusedStatement(
                f"{where} is {kind}: the ledger's SQL shell is read-only and runs only queries "
                f"(SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN, CALL); nothing was run"
            )
    return parsed


def run(con: duckdb.DuckDBPyConnection, text: str) -> list[Result]:
    """Run every statement of ``text`` (all reads, checked first) and return each result."""
    results = []
    for stmt in statements(con, text):
        cur = con.execute(stmt.query)
        names = [d[0] for d in cur.description] if cur.description else []
        results.append(Result(stmt.query.strip(), names, cur.fetchall() if names else []))
    return results
