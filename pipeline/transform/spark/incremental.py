"""Incremental builds on Spark: an ``append`` model (the priced requests) goes on from the last Spark build.

The append model's rows of a lake file depend on that file alone and on what its fingerprint covers (its SQL, the
macros it calls, the settings it declares, the rows it reads whole, the models it reads: ``pipeline.transform.state``).
So when nothing of that changed since the last Spark build, the rows of the files that build folded in are still right:
its Parquet files are linked into the new build's folder (hard links, no copy), and only the new files' rows are
computed and written beside them, as Spark's ``append`` write mode does and dbt-spark's ``append`` strategy. One more
day reads that day's lake files, not every request loaded.

A ``keys`` model that reads such an append model goes on too: the keys of the new rows (and of the new files of the
raw tables its other inputs read) are recomputed from all their input rows, and the earlier build's rows of every
other key are carried over, read from its Parquet (plain Parquet has no MERGE: the model's folder is written anew).
A key's rows depend on that key's input rows alone, as on DuckDB. A ``days`` model that reads only such append models
goes on by day: the days the new rows touch (the append model's ``days_touched``) are recomputed from those days' rows
(and the earlier rows its ``lookback`` column reaches into them), the other days' rows carried over. Every other model,
the ``months`` ones and the ``days`` ones that read a keys model, is computed whole.

The state is the DuckDB engine's (``meta.build_state``, ``meta.built_files``), its rows marked as Spark's; a row
names the build folder it goes on from. What makes a DuckDB build start over in full (a file loaded again, a
correction) clears it, so the next Spark build starts over too; a DuckDB build, seeing no state of its own, is a full
one, and removes Spark's folders.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from pipeline.base.models import Model
from pipeline.transform.state import STATE_DDL, State, built_files, changes, file_kinds, input_kinds, previous_states

#: the mark of Spark's rows in meta.build_state
PREFIX = "spark:"
#: the meta.build_state row naming the folder of the build the state describes
FOLDER_ROW = "spark-build"
#: why a model other than an append one is computed whole
WHOLE = "Spark computes it whole"


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
    days: set[str] = field(default_factory=set)
    """The days models that go on: those that read only append models that go on, a day of rows at a time."""


def plan(con: duckdb.DuckDBPyConnection, models: list[Model], root: Path) -> SparkPlan:
    """Which append models go on from the last Spark build (its folder under ``root``), with which new files."""
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

    incremental = {m.qualified for m in models if m.incremental}
    now, why = changes(con, models, incremental, before=before, present=present)
    out = SparkPlan(states=now, rebuilt={}, incremental=incremental, previous=previous)
    built = built_files(con)
    by_name = {m.qualified: m for m in models}

    def new_of(kinds: set[str]) -> list[str]:
        loaded = con.execute(
            "SELECT file_hash FROM meta.loaded_files WHERE kind IN (SELECT unnest(?)) AND lake_file IS NOT NULL "
            "ORDER BY load_seq",
            [sorted(kinds)],
        ).fetchall()
        return [h for (h,) in loaded if h not in built]

    for m in models:  # in dependency order: an append model before the keys models that read it
        if not m.incremental:
            continue
        if m.qualified in why:
            out.rebuilt[m.qualified] = why[m.qualified]
        elif m.incremental == "append":
            out.new_files[m.qualified] = new_of(input_kinds(m.inputs, by_name))
        elif m.incremental == "keys" and (scope := _keys_scope(m, by_name, out, new_of)):
            out.keys[m.qualified] = scope
        elif m.incremental == "days" and all(i.source in out.new_files and i.within is None for i in m.inputs):
            out.days.add(m.qualified)
        else:
            out.rebuilt[m.qualified] = WHOLE
    return out


def _keys_scope(m: Model, by_name: dict[str, Model], p: SparkPlan, new_of) -> KeysScope | None:  # type: ignore[no-untyped-def]
    """The keys a keys model recomputes, when the one append model it reads goes on; else None (computed whole)."""
    appended = [i for i in m.inputs if by_name[i.source].incremental == "append"]
    if len(appended) != 1 or appended[0].source not in p.new_files:
        return None
    kinds = input_kinds([i for i in m.inputs if i is not appended[0]], by_name)
    return KeysScope(
        key=m.unique_key[0], appended=appended[0].source, other_kinds=sorted(kinds), new_other_files=new_of(kinds)
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


def touched_days(rows: list[tuple[dt.date | None, dt.date | None]]) -> list[dt.date]:
    """Every day from the first to the last of each (first, last) pair the new rows touch (a last day before the first,
    or none, counts as the first), as the DuckDB engine counts them."""
    days: set[dt.date] = set()
    for first, last in rows:
        if first is None:
            continue
        end = max(first, last or first)
        days.update(first + dt.timedelta(days=n) for n in range((end - first).days + 1))
    return sorted(days)
