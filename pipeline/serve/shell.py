"""The ad-hoc SQL shell's guard: only queries run, decided from DuckDB's own parse tree.

``costledger sql`` opens the published file read-only and sandboxed (``pipeline.storage.db.connect_read``):
external access off, the lake's files as the only readable paths and no directory open at all (so no
file can be created), extensions off, the configuration locked, a memory limit, a private spill folder
with a size limit, and a statement timeout. DuckDB's sandbox still lets a statement write to a path it
may read, so before anything runs, every statement of the query must parse to a query tree:

- a ``SELECT`` (with ``WITH``, ``DESCRIBE``, ``SHOW``, ``SUMMARIZE``, ``VALUES``, ``FROM``-first) is a query
  when DuckDB serialises its tree as a select node (``json_serialize_sql`` refuses every other kind);
- ``EXPLAIN [ANALYZE] [(options)] S`` is a query when ``S`` is (``EXPLAIN ANALYZE`` executes ``S``);
- ``CALL f(...)`` runs as ``SELECT * FROM f(...)``, the select tree it is checked as.

Everything else (``COPY``, ``EXPORT``, ``ATTACH``, ``INSTALL``/``LOAD``, ``SET``, ``PRAGMA``, DDL, DML,
``PIVOT`` statements) is refused, and a query of several statements runs only if all of them pass.
Results are fetched in batches, so printing a large result takes constant memory.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any, Iterator

import duckdb
from pipeline.base.errors import CostledgerError, UsageError
from pipeline.base.settings_checks import memory_bytes

#: rows fetched at a time when a result is streamed
BATCH_ROWS = 2048


class RefusedStatement(UsageError, ValueError):
    """A statement the read-only shell does not run; nothing of the query was run."""


class QueryTimeout(CostledgerError):
    """The query ran past ``[sql] timeout_seconds`` and was stopped (exit 1)."""


@dataclass(frozen=True)
class Checked:
    """One statement that passed: the text the user wrote and the query that runs for it."""

    shown: str
    runs: str


def _tokens(text: str) -> list[tuple[int, str]]:
    """(start, token text) of ``text``'s tokens, comments left out."""
    raw = duckdb.tokenize(text)
    out = []
    for i, (start, kind) in enumerate(raw):
        end = raw[i + 1][0] if i + 1 < len(raw) else len(text)
        if kind.name != "comment":
            out.append((start, text[start:end].strip()))
    return out


def _is_select_tree(con: duckdb.DuckDBPyConnection, text: str) -> bool:
    """Whether ``text`` is exactly one statement whose parse tree is a select node."""
    serialised = con.execute("SELECT json_serialize_sql(?)", [text]).fetchall()[0][0]
    tree = json.loads(serialised)
    return not tree.get("error") and len(tree.get("statements", [])) == 1


def _after_explain(text: str) -> str | None:
    """The statement an ``EXPLAIN [ANALYZE] [(options)]`` explains, or None when its shape is not that."""
    tokens = _tokens(text)
    words = [word for _, word in tokens]
    if not words or words[0].upper() != "EXPLAIN":
        return None
    i = 1
    if i < len(words) and words[i].upper() in ("ANALYZE", "ANALYSE"):
        i += 1
    if i < len(words) and words[i] == "(":
        depth = 0
        while i < len(words):
            depth += words[i].count("(") - words[i].count(")")
            i += 1
            if depth <= 0:
                break
    return text[tokens[i][0] :] if i < len(words) else None


def _check_one(con: duckdb.DuckDBPyConnection, stmt: Any) -> Checked | None:
    """The statement as it runs, or None when its tree is not a query."""
    text = stmt.query.strip()
    kind = stmt.type.name
    if kind == "SELECT":
        return Checked(text, text) if _is_select_tree(con, text) else None
    if kind == "EXPLAIN":
        inner = _after_explain(text)
        if inner is None:
            return None
        try:
            parsed = con.extract_statements(inner)
        except duckdb.Error:
            return None
        if len(parsed) != 1 or parsed[0].type.name != "SELECT" or not _is_select_tree(con, parsed[0].query):
            return None
        return Checked(text, text)
    if kind == "CALL":
        tokens = _tokens(text)
        if len(tokens) < 2:
            return None
        as_select = "SELECT * FROM " + text[tokens[1][0] :]
        return Checked(text, as_select) if _is_select_tree(con, as_select) else None
    return None


def check(con: duckdb.DuckDBPyConnection, text: str) -> list[Checked]:
    """Parse ``text`` and refuse the whole query unless every statement's tree is a query."""
    parsed = con.extract_statements(text)
    if not parsed:
        raise RefusedStatement("no SQL statement given")
    out = []
    for number, stmt in enumerate(parsed, start=1):
        checked = _check_one(con, stmt)
        if checked is None:
            where = f"statement {number} of {len(parsed)}" if len(parsed) > 1 else "the statement"
            raise RefusedStatement(
                f"{where} is {stmt.type.name}, not a query: the ledger's SQL shell is read-only and runs only "
                f"SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN [ANALYZE] of a query and CALL of a table "
                f"function; nothing was run"
            )
        out.append(checked)
    return out


@dataclass
class Result:
    """One statement's result, read in batches: ``names`` and then ``batches()`` once."""

    statement: str
    names: list[str]
    cursor: duckdb.DuckDBPyConnection

    def batches(self) -> Iterator[list[tuple[Any, ...]]]:
        while True:
            rows = self.cursor.fetchmany(BATCH_ROWS)
            if not rows:
                return
            yield rows


#: How long past its timeout a statement that ignores DuckDB's interrupt (one function call building one huge value)
#: may run before the process ends itself
INTERRUPT_GRACE_SECONDS = 10.0


class Deadline:
    """Interrupts the connection's running statement once ``seconds`` have passed since ``start``; a statement still
    running ``INTERRUPT_GRACE_SECONDS`` later (inside one call DuckDB cannot interrupt) ends the process, with the
    same one-line error and exit 1. Nothing is written by the shell, so nothing is left half-done."""

    def __init__(self, con: duckdb.DuckDBPyConnection, seconds: float, on_kill: Any = None) -> None:
        self.seconds = seconds
        self.fired = threading.Event()
        self._con = con
        self._on_kill = on_kill
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._kill = threading.Timer(seconds + INTERRUPT_GRACE_SECONDS, self._end_process)
        self._kill.daemon = True

    def _fire(self) -> None:
        self.fired.set()
        self._con.interrupt()

    def _end_process(self) -> None:
        import os
        import sys

        sys.stderr.write(f"error: {self._timeout_message()}\n")
        sys.stderr.flush()
        if self._on_kill is not None:
            self._on_kill()
        os._exit(1)

    def _timeout_message(self) -> str:
        return (
            f"the query ran longer than {self.seconds:g} s ([sql] timeout_seconds) and was stopped; "
            "narrow it (a WHERE on month, a LIMIT) or raise the setting"
        )

    def __enter__(self) -> "Deadline":
        self._timer.start()
        self._kill.start()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self._timer.cancel()
        self._kill.cancel()
        if exc is not None and self.fired.is_set() and isinstance(exc, duckdb.Error | KeyboardInterrupt):
            raise QueryTimeout(self._timeout_message()) from None


#: Address space a query session may take beyond DuckDB's memory limit: its threads' stacks, the result batches
#: being printed, the Python around it
ADDRESS_SPACE_SLACK = 512 * 2**20


def memory_limit_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """The connection's memory limit in bytes, as DuckDB resolved it (a size such as '953.6 MiB', whether the setting
    named a size or a share of the machine's memory)."""
    text = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    return memory_bytes(str(text)) or 0


class AddressSpaceCap:
    """The process's address space capped, while a query runs, at what it holds now plus DuckDB's memory limit and
    ``ADDRESS_SPACE_SLACK``: a function that builds one huge value in one call (``repeat``, ``string_agg``,
    ``list``), which DuckDB's own memory limit does not govern, fails to allocate (DuckDB's out-of-memory error)
    instead of taking the machine's memory. The limit in force before is put back after."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self._extra = memory_limit_bytes(con) + ADDRESS_SPACE_SLACK
        self._before: tuple[int, int] | None = None

    def __enter__(self) -> "AddressSpaceCap":
        import resource

        self._before = resource.getrlimit(resource.RLIMIT_AS)
        soft, hard = self._before
        cap = _address_space() + self._extra
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        if soft == resource.RLIM_INFINITY or cap < soft:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        return self

    def __exit__(self, *exc: Any) -> None:
        import resource

        if self._before is not None:
            resource.setrlimit(resource.RLIMIT_AS, self._before)


def _address_space() -> int:
    """The process's virtual memory size now (Linux: /proc/self/statm, in pages)."""
    import os

    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def run(con: duckdb.DuckDBPyConnection, statements: list[Checked]) -> Iterator[Result]:
    """The checked statements' results, one at a time: each must be read (``batches``) before the next is
    asked for."""
    for checked in statements:
        cur = con.execute(checked.runs)
        names = [d[0] for d in cur.description] if cur.description else []
        yield Result(checked.shown, names, cur)
