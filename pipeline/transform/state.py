"""What an incremental model's rows depend on besides the new files, model by model: its SQL (the parse tree:
comments and layout do not count), the macros it calls, the values of the settings its header declares
(``-- settings:``), the rows of the raw tables it reads whole (not file by file: the prices, the exchange rates), and
the fingerprints of the models it reads. ``meta.build_state`` keeps them from one build to the next; a model whose
fingerprint changed is rebuilt in full, and with it every model that reads it, and the reason is said in words."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Callable, Iterable

import duckdb

from pipeline.base.models import SQL_DIR, Input, Model, macro_statements, sql_fingerprint
from pipeline.base.query import table_exists
from pipeline.storage.catalog import table_columns

_BUILD_STATE = [
    "CREATE TABLE IF NOT EXISTS meta.build_state (model VARCHAR NOT NULL, fingerprint VARCHAR NOT NULL, "
    "sql_hash VARCHAR NOT NULL, macros_hash VARCHAR NOT NULL, settings VARCHAR NOT NULL, data_hash VARCHAR NOT NULL)",
    "COMMENT ON TABLE meta.build_state IS 'Per incremental model and every model it reads: the fingerprint of what "
    "its rows depend on besides the files (its SQL, the macros it calls, the settings it declares, the rows read "
    "whole, the fingerprints of the models it reads) at the last build; a different one rebuilds it in full.'",
]
STATE_DDL = [
    "CREATE SCHEMA IF NOT EXISTS scoped",
    *_BUILD_STATE,
    "CREATE TABLE IF NOT EXISTS meta.built_files (file_hash VARCHAR NOT NULL, kind VARCHAR NOT NULL)",
    "COMMENT ON TABLE meta.built_files IS 'Lake files already folded into the incremental models.'",
    "CREATE TABLE IF NOT EXISTS meta.last_build (inputs VARCHAR NOT NULL, run_id VARCHAR, published_at TIMESTAMP)",
    "COMMENT ON TABLE meta.last_build IS 'What the last whole build that was published was built from (a fingerprint "
    "of the models and macros, the settings the models read, the engine and every file loaded): a nightly that "
    "loads nothing and finds the same builds nothing.'",
]


def build_inputs(
    con: duckdb.DuckDBPyConnection, settings_rows: list[tuple[str, str]], engine: str, sql_dir=SQL_DIR
) -> str:  # type: ignore[no-untyped-def]
    """A fingerprint of everything a whole build reads: this version, the model tree's files, the settings the
    models read, the engine, and the files loaded (with their lake files and load order)."""
    from pipeline import __version__

    tree = sorted(p for p in sql_dir.rglob("*") if p.is_file())
    files = con.execute(
        "SELECT file_hash, load_seq, coalesce(lake_sha256, lake_file, '') FROM meta.loaded_files ORDER BY load_seq, "
        "file_hash"
    ).fetchall()
    return _sha(
        __version__, engine, *(f"{p.relative_to(sql_dir)}:{hashlib.sha256(p.read_bytes()).hexdigest()}" for p in tree),
        *(f"{k}={v}" for k, v in sorted(settings_rows)), *(f"{h}:{n}:{lake}" for h, n, lake in files),
    )  # fmt: skip


def last_build(con: duckdb.DuckDBPyConnection) -> str | None:
    """The inputs of the last whole build that was published (None: none since this version, or a build since that
    was not published)."""
    if not table_exists(con, "meta", "last_build"):
        return None
    rows = con.execute("SELECT inputs FROM meta.last_build").fetchall()
    return rows[0][0] if rows else None


def record_build(con: duckdb.DuckDBPyConnection, inputs: str | None, run_id: str = "") -> None:
    """The last build's inputs, once it is published (``inputs`` None: the work file now holds a build that was not
    published, so the next nightly builds whatever it finds)."""
    for stmt in STATE_DDL[-2:]:
        con.execute(stmt)
    con.execute("DELETE FROM meta.last_build")
    if inputs is not None:
        con.execute("INSERT INTO meta.last_build VALUES (?, ?, current_localtimestamp())", [inputs, run_id])


def built_files(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The lake files the incremental models have already read."""
    if not table_exists(con, "meta", "built_files"):
        return set()
    return {h for (h,) in con.execute("SELECT file_hash FROM meta.built_files").fetchall()}


def raw_tables(model: Model) -> set[str]:
    return set(re.findall(r"\braw\.(\w+)", model.body))


def input_kinds(inputs: Iterable[Input], by_name: dict[str, Model]) -> set[str]:
    """The kinds (raw tables) the sources of these inputs read: whose lake files reach a model through them."""
    return {kind for i in inputs if i.source in by_name for kind in raw_tables(by_name[i.source])}


def file_kinds(models: list[Model], strategies: tuple[str, ...] = ("append", "keys")) -> set[str]:
    """The kinds (raw tables) whose lake files are read incrementally: those read by the sources of the inputs of the
    models of these ``strategies`` (by default the ``append`` and ``keys`` ones: once built, only their new files are
    read)."""
    by_name = {m.qualified: m for m in models}
    return {kind for m in models if m.incremental in strategies for kind in input_kinds(m.inputs, by_name)}


@dataclass(frozen=True)
class State:
    """What an incremental model's rows depend on besides the new files, part by part (``meta.build_state``)."""

    fingerprint: str
    """All the parts below and the fingerprints of the models it reads."""
    sql_hash: str
    macros_hash: str
    settings: str
    """The declared settings as ``name=value`` lines (read back to say which one changed)."""
    data_hash: str


def upstream(models: list[Model]) -> list[Model]:
    """The incremental models and every model they read, directly or not, each after the models it reads."""
    by_name = {m.qualified: m for m in models}
    needed: set[str] = set()
    todo = [m for m in models if m.incremental]
    while todo:
        m = todo.pop()
        if m.qualified not in needed:
            needed.add(m.qualified)
            todo += [by_name[d] for d in m.depends_on(set(by_name))]
    return [m for m in models if m.qualified in needed]


_MACRO_PARTS = re.compile(r"\bMACRO\s+(\w+)\s*(\([^)]*\))\s*AS\s+(.*)$", re.IGNORECASE | re.DOTALL)


def _macros(con: duckdb.DuckDBPyConnection, sql_dir) -> dict[str, tuple[str, str]]:  # type: ignore[no-untyped-def]
    """Each macro of sql/macros.sql by name: a hash of its parameters and of its expression's parse tree (comments
    and layout do not count), and the expression (to find the macros it calls)."""
    found = {}
    for statement in macro_statements(sql_dir):
        text = re.sub(r"--[^\n]*", " ", statement)
        if m := _MACRO_PARTS.search(text):
            name, params, expr = m.group(1).lower(), " ".join(m.group(2).split()), m.group(3)
            found[name] = (f"{name}{params} {sql_fingerprint(con, 'SELECT ' + expr)}", expr)
    return found


def _called(text: str, macros: dict[str, tuple[str, str]]) -> list[str]:
    """The macros a text calls, and those they call, by name."""
    called: set[str] = set()
    todo = [text]
    while todo:
        body = todo.pop()
        for name in macros:
            if name not in called and re.search(rf"\b{name}\s*\(", body, re.IGNORECASE):
                called.add(name)
                todo.append(macros[name][1])
    return sorted(called)


def _sha(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def states(con: duckdb.DuckDBPyConnection, models: list[Model]) -> dict[str, State]:
    """The state of every incremental model and of every model they read (see the module's docstring)."""
    sql_dir = models[0].path.parents[1] if models else SQL_DIR
    macros = _macros(con, sql_dir)
    values = dict(con.execute("SELECT key, value FROM meta.settings").fetchall())
    tracked = file_kinds(models)
    by_name = {m.qualified: m for m in models}
    found: dict[str, State] = {}
    for m in upstream(models):
        settings = "\n".join(f"{k}={values.get(k, '')}" for k in m.settings)
        whole = sorted(raw_tables(m) - tracked)  # raw tables read whole: their rows are part of the state
        data = [
            con.execute(
                f"SELECT coalesce(md5(string_agg(CAST(r AS VARCHAR), '|' ORDER BY CAST(r AS VARCHAR))), '') "
                f"FROM raw.{kind} AS r"
            ).fetchall()[0][0]  # type: ignore[index]
            for kind in whole
            if table_exists(con, "raw", kind) or table_exists(con, "raw", kind, "VIEW")
        ]
        parts = (
            sql_fingerprint(con, m.body),
            _sha(*(macros[n][0] for n in _called(m.body, macros))),
            settings,
            _sha(*whole, *data),
        )
        parents = (f"{d}={found[d].fingerprint}" for d in sorted(m.depends_on(set(by_name))))
        found[m.qualified] = State(_sha(m.qualified, *parts, *parents), *parts)
    return found


#: the sql_hash of a model a selected build computed whole (``build --select``): the next build rebuilds it in full
BUILT_ALONE = "built alone"


def _why(name: str, now: State, before: State | None, by_name: dict[str, Model], why: dict[str, str]) -> str | None:
    """Why a model is rebuilt in full, in words; None when its own parts and the models it reads are as before."""
    if before is None:
        return "no earlier build"
    if before.sql_hash == BUILT_ALONE:
        return "build --select computed it alone"
    if now.sql_hash != before.sql_hash:
        return "its SQL changed"
    if now.macros_hash != before.macros_hash:
        return "a macro it calls changed"
    if now.settings != before.settings:
        old = dict(line.split("=", 1) for line in before.settings.splitlines() if "=" in line)
        new = dict(line.split("=", 1) for line in now.settings.splitlines() if "=" in line)
        changed = sorted(k for k in new.keys() | old.keys() if new.get(k) != old.get(k))
        return f"setting {', '.join(changed)} changed"
    if now.data_hash != before.data_hash:
        return "the rows it reads whole changed"
    for parent in sorted(by_name[name].depends_on(set(by_name))):
        if parent in why:
            return f"it reads {parent} ({why[parent]})"
    return None if now.fingerprint == before.fingerprint else "a model it reads changed"


def previous_states(con: duckdb.DuckDBPyConnection) -> dict[str, State]:
    """The states of the last build (none from a ledger whose build state has another shape: one full build)."""
    if "model" not in table_columns(con, "meta.build_state"):
        con.execute("DROP TABLE meta.build_state")
        for stmt in _BUILD_STATE:
            con.execute(stmt)
        return {}
    rows = con.execute(
        "SELECT model, fingerprint, sql_hash, macros_hash, settings, data_hash FROM meta.build_state"
    ).fetchall()
    return {r[0]: State(*r[1:]) for r in rows}


def changes(
    con: duckdb.DuckDBPyConnection,
    models: list[Model],
    incremental: set[str],
    before: dict[str, State] | None = None,
    present: Callable[[str], bool] | None = None,
) -> tuple[dict[str, State], dict[str, str]]:
    """The states now, and each model that changed since the last build, with why (an incremental model without its
    table counts as changed); a model that reads a changed one has changed too. ``before``: the last build's states
    (default: ``meta.build_state``'s); ``present``: whether a model's earlier rows are there (default: its table in
    the ledger)."""
    by_name = {m.qualified: m for m in models}
    now = states(con, models)
    before = previous_states(con) if before is None else before
    if present is None:
        present = lambda name: table_exists(con, *name.split(".", 1))  # noqa: E731
    why: dict[str, str] = {}
    for name, state in now.items():  # each after the models it reads
        reason = _why(name, state, before.get(name), by_name, why)
        if reason is None and name in incremental and not present(name):
            reason = "its table is missing"
        if reason is not None:
            why[name] = reason
    return now, why
