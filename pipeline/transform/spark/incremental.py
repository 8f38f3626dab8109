"""Incremental builds on Spark: the planner's decisions (``pipeline.transform.planner``) from the last Spark build.

The rows of the models that go on are the earlier build's Parquet with the planner's slices computed anew: an
``append`` model's earlier files are linked into the new build's folder (hard links, no copy) and only the new lake
files' rows are written beside them, as Spark's ``append`` write mode does and dbt-spark's ``append`` strategy; a
``keys``, ``months`` or ``days`` model's folder is written anew from the earlier rows of the keys, months or days it
does not recompute and the recomputed ones (plain Parquet has no MERGE). ``going_on`` says how each is computed.

The state is the DuckDB engine's (``meta.build_state``, ``meta.built_files``), its rows marked as Spark's; a row
names the build folder it goes on from. What makes a DuckDB build start over in full (a file loaded again, a
correction) clears it, so the next Spark build starts over too; a DuckDB build, seeing no state of its own, is a full
one, and removes Spark's folders.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import duckdb

from pipeline.base.models import Model
from pipeline.transform import planner
from pipeline.transform.state import STATE_DDL, State, built_files, file_kinds, input_kinds, previous_states

#: the mark of Spark's rows in meta.build_state
PREFIX = "spark:"
#: the meta.build_state row naming the folder of the build the state describes
FOLDER_ROW = "spark-build"


@dataclass(kw_only=True)
class KeysScope:
    """What a ``keys`` model that goes on recomputes: the keys (its key column, the first of its unique key) of the
    append model's new rows and of the new files of the raw tables its other inputs read."""

    key: str
    appended: str
    """The append model it reads."""
    other_kinds: list[str]
    new_other_files: list[str]


@dataclass(kw_only=True)
class SparkPlan:
    states: dict[str, State]
    rebuilt: dict[str, str]
    """The incremental models computed whole, and why, in words."""
    incremental: set[str]
    previous: Path | None = None
    """The folder of the build this one goes on from."""
    new_files: dict[str, list[str]] = field(default_factory=dict)
    """Per append model that goes on: the hashes of the lake files it has not folded in yet."""
    keys: dict[str, KeysScope] = field(default_factory=dict)
    """Per keys model that goes on: the keys it recomputes."""
    months: set[str] = field(default_factory=set)
    """The months models that go on: the touched months recomputed."""
    days: set[str] = field(default_factory=set)
    """The days models that go on: the touched days recomputed."""


def plan(con: duckdb.DuckDBPyConnection, models: list[Model], root: Path) -> SparkPlan:
    """Which incremental models go on from the last Spark build (its folder under ``root``), with which new files."""
    for stmt in STATE_DDL:
        con.execute(stmt)
    stored = previous_states(con)
    folder = stored.pop(FOLDER_ROW, None)
    before = {k.removeprefix(PREFIX): s for k, s in stored.items() if k.startswith(PREFIX)}
    previous = root / folder.fingerprint if folder else None
    if previous is not None and not previous.is_dir():
        previous, before = None, {}

    def present(name: str) -> bool:
        return previous is not None and (previous / name.replace(".", "/", 1)).is_dir()

    decided = planner.decide(con, models, before=before, present=present)
    out = SparkPlan(states=decided.states, rebuilt=decided.rebuilt, incremental=decided.incremental, previous=previous)
    built = built_files(con)
    by_name = {m.qualified: m for m in models}

    def new_of(kinds: set[str]) -> list[str]:
        return [h for h, _, _ in planner.lake_files(con, kinds) if h not in built]

    for m in models:  # in dependency order: an append model before the keys models that read it
        if not m.incremental or m.qualified in out.rebuilt:
            continue
        if m.incremental == "append":
            out.new_files[m.qualified] = new_of(input_kinds(m.inputs, by_name))
        elif m.incremental == "keys":
            out.keys[m.qualified] = _keys_scope(m, by_name, new_of)
        elif m.incremental == "months":
            out.months.add(m.qualified)
        else:
            out.days.add(m.qualified)
    return out


def _keys_scope(m: Model, by_name: dict[str, Model], new_of: Callable[[set[str]], list[str]]) -> KeysScope:
    """The keys a keys model recomputes: those of the one append model it reads (which goes on with it: a keys
    model whose append model is rebuilt in full is rebuilt too) and of its other inputs' new files."""
    (appended,) = [i for i in m.inputs if by_name[i.source].incremental == "append"]  # the planner checked one
    kinds = input_kinds([i for i in m.inputs if i is not appended], by_name)
    return KeysScope(
        key=m.unique_key[0], appended=appended.source, other_kinds=sorted(kinds), new_other_files=new_of(kinds)
    )


def record(con: duckdb.DuckDBPyConnection, p: SparkPlan, models: list[Model], out: Path) -> None:
    """The state this build leaves (in the build's transaction): every model's state, marked as Spark's, the folder
    it describes, and every file of the kinds read file by file as folded in."""
    con.execute("DELETE FROM meta.build_state")
    rows = [
        (PREFIX + name, s.fingerprint, s.sql_hash, s.macros_hash, s.settings, s.data_hash)
        for name, s in p.states.items()
    ]
    rows.append((FOLDER_ROW, out.name, "", "", "", ""))
    con.executemany("INSERT INTO meta.build_state VALUES (?, ?, ?, ?, ?, ?)", rows)
    con.execute("DELETE FROM meta.built_files")
    con.execute(
        "INSERT INTO meta.built_files SELECT file_hash, kind FROM meta.loaded_files "
        "WHERE kind IN (SELECT unnest(?)) AND lake_file IS NOT NULL",
        [sorted(file_kinds(models))],
    )


def carry_over(previous: Path, folder: Path) -> None:
    """The Parquet files of the earlier build's ``previous`` folder linked into ``folder`` (copied where the file
    system has no hard links)."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted(previous.glob("*.parquet")):
        try:
            os.link(path, folder / path.name)
        except OSError:
            shutil.copy2(path, folder / path.name)
