"""The DuckDB engine's incremental builds: the planner (``pipeline.transform.planner``) says which models are rebuilt
in full and what slice each other one recomputes; here each strategy runs its model's statement over that slice
inside the ledger and replaces the slice's rows. Nothing here names a model.

A model names its inputs with ``-- input NAME: SCHEMA.MODEL [(COLUMNS)] [, lookback COLUMN]`` lines and reads each as
the view ``scoped.NAME``, which its strategy defines before each step: the whole SOURCE on a full build, the slice on
an incremental one.

``append``  the rows of the new lake files are appended in batches of at most ``batch_rows`` rows, so memory stays
            bounded however much history a first build meets; each batch records the months and days it touches.
``keys``    after each batch of the append model it reads, the keys with new input rows (the batch's rows; at the
            last batch also the new files of its other inputs' raw tables) are deleted and recomputed from all their
            input rows. Only the keys that had input rows before can have rows to delete: the delete (a scan of the
            model's table) looks for those, and is skipped when a batch's keys are all new. The keys models with the
            same key column look up their keys and the keys' earlier rows once per batch, together (a model given a
            key it did not need recomputes it to the same rows). On a full build every key is new: the model is
            computed once, after the last batch, from all rows.
``months``  the touched months are deleted and recomputed from their rows; other months are not read.
``days``    the same by day. Month models that sum or take the maximum of day partitions are then small: a late day
            recomputes its day, not its month.

A model rebuilt in full has its table emptied and every row computed again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Callable

import duckdb

from pipeline.base.query import table_exists
from pipeline.storage.catalog import table_columns
from pipeline.base.models import STRATEGIES, Input, Model, ModelHeaderError
from pipeline.transform import planner
from pipeline.transform.planner import date_filter, day_rows, in_files, month_rows
from pipeline.transform.state import State, built_files, file_kinds, input_kinds

Run = Callable[[Model, str], None]
"""Runs one statement of a model (errors name the model)."""
Audit = Callable[..., None]
"""``audit(model, where="true", rows=None)``: audits the model's grain over the rows matching a WHERE condition, of
the model's table or of the table ``rows`` (rows about to be inserted into it)."""


def _days_touched(con: duckdb.DuckDBPyConnection, append: Model, rows: str) -> set[dt.date]:
    """The days the append model's rows matching ``rows`` touch (none when it states none)."""
    sql = planner.day_pairs_sql(append, rows)
    return set(planner.touched_days(con.execute(sql).fetchall())) if sql else set()


@dataclass(kw_only=True)
class Plan:
    rebuilt: dict[str, str]
    """The incremental models rebuilt in full, and why, in words."""
    states: dict[str, State]
    files: list[tuple[str, str, int]]
    """(file hash, kind, rows) of every loaded lake file of the kinds read file by file, in load order."""
    built: set[str]
    """The hashes of the files already folded in."""
    batch_rows: int
    incremental: set[str] = field(default_factory=set)
    """The incremental models' names."""
    reread_kinds: set[str] = field(default_factory=set)
    """The kinds whose files already folded in are read again (by a model rebuilt in full)."""
    touched: set[dt.date] = field(default_factory=set)
    """Months whose month-partitioned rows are recomputed (incremental builds; a full build recomputes all)."""
    touched_days: set[dt.date] = field(default_factory=set)
    """Days whose day-partitioned rows are recomputed (incremental builds)."""

    def is_full(self, model: Model) -> bool:
        return model.qualified in self.rebuilt

    @property
    def full(self) -> bool:
        """Every incremental model is rebuilt in full."""
        return bool(self.incremental) and self.incremental <= set(self.rebuilt)

    @property
    def new_files(self) -> list[tuple[str, str, int]]:
        """The files not yet folded in."""
        return [f for f in self.files if f[0] not in self.built]

    @property
    def months(self) -> list[dt.date]:
        return sorted(self.touched)

    @property
    def days(self) -> list[dt.date]:
        return sorted(self.touched_days)

    def batches(self, kinds: set[str], every: bool = False) -> list[list[str]]:
        """The new files of these kinds (hashes; ``every``: all the files) in batches of at most ``batch_rows``
        rows (a larger file alone)."""
        batches: list[list[str]] = []
        size = self.batch_rows
        for file_hash, kind, rows in self.files if every else self.new_files:
            if kind not in kinds:
                continue
            if size + rows > self.batch_rows and (not batches or batches[-1]):
                batches.append([])
                size = 0
            batches[-1].append(file_hash)
            size += rows
        return batches

    def new_of(self, kinds: set[str]) -> list[str]:
        return [f for f, kind, _ in self.new_files if kind in kinds]


def _table_exists(con: duckdb.DuckDBPyConnection, qualified: str) -> bool:
    return table_exists(con, *qualified.split(".", 1))


def plan(con: duckdb.DuckDBPyConnection, models: list[Model], batch_rows: int) -> Plan:
    """Which incremental models are rebuilt in full and why (the planner's decisions), and the new files."""
    decided = planner.decide(con, models)  # a model whose header its strategy cannot follow fails here
    strategies = {m.qualified: strategy(m, models) for m in models if m.incremental}
    return Plan(
        rebuilt=decided.rebuilt,
        states=decided.states,
        files=planner.lake_files(con, file_kinds(models)),
        built=built_files(con),
        batch_rows=batch_rows,
        reread_kinds={kind for name in decided.rebuilt for kind in strategies[name].kinds_read_whole()},
        incremental=decided.incremental,
    )


def finish(con: duckdb.DuckDBPyConnection, p: Plan) -> None:
    """Record every file as built and the states the models were built from (in the build's transaction)."""
    done = [f for f, _, _ in p.new_files]
    if done:
        con.execute(
            f"INSERT INTO meta.built_files SELECT file_hash, kind FROM meta.loaded_files "
            f"WHERE file_hash IN ({planner.literals(done)})"
        )
    con.execute("DELETE FROM meta.build_state")
    con.executemany(
        "INSERT INTO meta.build_state VALUES (?, ?, ?, ?, ?, ?)",
        [(k, s.fingerprint, s.sql_hash, s.macros_hash, s.settings, s.data_hash) for k, s in p.states.items()],
    )


def _define(con: duckdb.DuckDBPyConnection, name: str, body: str) -> None:
    con.execute(f"CREATE OR REPLACE VIEW scoped.{name} AS {body}")


def _select(i: Input) -> str:
    return ", ".join(i.columns) if i.columns else "*"


class Strategy:
    """How an incremental model is built; ``run`` is called in dependency order."""

    def __init__(self, model: Model, models: list[Model]) -> None:
        self.model = model  # its header checked against the other models' by the planner (``planner.check``)
        self.by_name = {m.qualified: m for m in models}

    def run(
        self, con: duckdb.DuckDBPyConnection, p: Plan, run: Run, audit: Audit, progress: Callable[[str], None] | None
    ) -> None:
        raise NotImplementedError

    def kinds_read_whole(self) -> set[str]:
        """The kinds whose lake files the model reads, every file, when it is rebuilt in full."""
        return set()

    def create_empty(self, con: duckdb.DuckDBPyConnection, run: Run) -> None:
        """The table with no rows and the right types (its inputs defined as empty first), its columns stored with
        the compression the header names (``-- compression:``)."""
        m = self.model
        for i in m.inputs:
            _define(con, i.name, f"SELECT {_select(i)} FROM {i.source} WHERE false")
        run(m, f"CREATE OR REPLACE TABLE {m.qualified} AS\n{m.body}")
        if m.compression:
            schema, name = m.qualified.split(".")
            types = con.execute(
                "SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? "
                "AND database_name = current_database() ORDER BY column_index",
                [schema, name],
            ).fetchall()
            methods = dict(m.compression)
            if unknown := sorted(set(methods) - {c for c, _ in types}):
                raise ModelHeaderError(f"{m.path}:{m.compression_line}: compression: no column {', '.join(unknown)}")
            columns = ", ".join(
                f'"{c}" {t}' + (f" USING COMPRESSION {methods[c]}" if c in methods else "") for c, t in types
            )
            run(m, f"CREATE OR REPLACE TABLE {m.qualified} ({columns})")


class Keys(Strategy):
    """Recompute the rows of the keys with new input rows, after each batch of the append model it reads."""

    name = "keys"

    def __init__(self, model: Model, models: list[Model]) -> None:
        super().__init__(model, models)
        self.key = model.unique_key[0]
        (self.appended,) = [i for i in model.inputs if self.by_name[i.source].incremental == "append"]
        self.others = [i for i in model.inputs if i is not self.appended]
        self.other_kinds = input_kinds(self.others, self.by_name)

    def run(self, con, p, run, audit, progress) -> None:  # type: ignore[no-untyped-def]
        pass  # recomputed batch by batch, by the append model it reads

    def kinds_read_whole(self) -> set[str]:
        return self.other_kinds  # the append model's rows it reads from that model's table

    def all_rows(self, con: duckdb.DuckDBPyConnection, run: Run, audit: Audit) -> None:
        """A full build, after the append model's last batch: every input row is new, every key is computed."""
        for i in self.model.inputs:
            _define(con, i.name, f"SELECT {_select(i)} FROM {i.source}")
        run(self.model, f"INSERT INTO {self.model.qualified}\n{self.model.body}")
        audit(self.model, "true")

    @staticmethod
    def lookup(
        con: duckdb.DuckDBPyConnection, p: Plan, group: list["Keys"], batch: str, other_files: list[str]
    ) -> None:
        """Find the keys the keys models of ``group`` (one key column, one append model) recompute after a batch:
        the keys of the batch's rows and of the rows of ``other_files`` (``scoped.build_keys``), and the row ids of
        the keys' earlier rows of the append model (``touched_rowids``), and those rows with the batch's own, with
        the columns the group's models read (``scoped.keys_rows``). One lookup for the group: a model given keys it
        did not need recomputes them to the same rows. Records the days of the earlier rows (the append model
        records its batch's own) and the months of all of them. Incremental builds only."""
        key, source = group[0].key, group[0].appended.source
        con.execute(f"CREATE OR REPLACE TABLE scoped.build_keys AS SELECT DISTINCT {key} FROM {source} WHERE {batch}")
        for kind in sorted({k for f in group for k in f.other_kinds}):
            if other_files:
                con.execute(
                    f"INSERT INTO scoped.build_keys SELECT DISTINCT {key} FROM raw.{kind} "
                    f"WHERE {in_files(other_files)} "
                    f"EXCEPT SELECT {key} FROM scoped.build_keys"
                )
        # the earlier rows are found by one pass over the key alone, then fetched by row id; the pass reads only the
        # row groups whose keys overlap the range of the keys (zone maps): when keys grow with time and no batch
        # key is old, a few row groups at the end of the table (a semi join with millions of keys prunes nothing)
        in_range = _bound_range(con, "keys", key, "scoped.build_keys", key)
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE touched_rowids AS SELECT rowid AS rid FROM {source} "
            f"WHERE {in_range} AND {key} IN (SELECT {key} FROM scoped.build_keys) AND NOT ({batch})"
        )
        p.touched_days.update(_days_touched(con, group[0].by_name[source], "rowid IN (SELECT rid FROM touched_rowids)"))
        # the keys with earlier input rows: a keys model computes a key's rows from that key's input rows alone, so
        # a key without any (a new task: most keys of a new day) has no rows to delete in the group's models. Earlier
        # rows: of the append model (found above), and of the other inputs that are not keys models of this group
        # (whose rows for a key exist only when the key had earlier input rows)
        group_models = {f.model.qualified for f in group}
        earlier = [f"SELECT {key} FROM {source} WHERE rowid IN (SELECT rid FROM touched_rowids)"]
        for other in sorted({i.source for f in group for i in f.others} - group_models):
            earlier.append(f"SELECT {key} FROM {other} WHERE {key} IN (SELECT {key} FROM scoped.build_keys)")
        con.execute(
            f"CREATE OR REPLACE TABLE scoped.old_keys AS SELECT DISTINCT {key} FROM ({' UNION ALL '.join(earlier)})"
        )
        # the keys' rows of the append model, collected once for the group with the columns its models read: the
        # batch's own rows (its row groups, found by their min/max) and the earlier rows found above
        wanted = [c for f in group for c in f.appended.columns] if all(f.appended.columns for f in group) else ["*"]
        cols = ", ".join(dict.fromkeys(wanted))
        con.execute(
            f"CREATE OR REPLACE TABLE scoped.keys_rows AS SELECT {cols} FROM {source} WHERE {batch} UNION ALL "
            f"SELECT {cols} FROM {source} WHERE rowid IN (SELECT rid FROM touched_rowids)"
        )
        if "month" in table_columns(con, "scoped.keys_rows"):
            # the months of the keys' rows, old and new, are touched
            p.touched.update(
                m for (m,) in con.execute("SELECT DISTINCT month FROM scoped.keys_rows").fetchall() if m is not None
            )

    def some_rows(self, con: duckdb.DuckDBPyConnection, p: Plan, batch: str, run: Run, audit: Audit) -> None:
        """Recompute the keys ``lookup`` found; collect touched months."""
        m, key = self.model, self.key
        in_keys = f"{key} IN (SELECT {key} FROM scoped.build_keys)"
        _define(con, self.appended.name, f"SELECT {_select(self.appended)} FROM scoped.keys_rows")
        for i in self.others:
            _define(con, i.name, f"SELECT {_select(i)} FROM {i.source} WHERE {in_keys}")
        # the keys' rows are replaced (the delete also yields the months the old rows belonged to); only the keys with
        # earlier input rows (``lookup``) can have rows, so the delete, a scan of the whole table, runs only when
        # there are such keys, and looks for those only
        has_month = "month" in table_columns(con, m.qualified)
        old: list[tuple] = []
        if con.execute("SELECT count(*) FROM scoped.old_keys").fetchall()[0][0]:  # type: ignore[index]
            old = con.execute(
                f"WITH d AS (DELETE FROM {m.qualified} WHERE {key} IN (SELECT {key} FROM scoped.old_keys) "
                f"RETURNING {'month' if has_month else 'NULL'}) SELECT DISTINCT * FROM d"
            ).fetchall()
        # the keys' old rows are gone, so the grain holds if the new rows are unique among themselves: the audit
        # reads them in a scratch table (at 100 M rows and a day of new tasks: 7.3 s with the insert, against 10.5 s
        # for an audit of the keys' rows in the whole table, and 12.3 s for an INSERT ... RETURNING the keys)
        new = f"{m.name}_new"
        run(m, f"CREATE OR REPLACE TEMP TABLE {new} AS\n{m.body}")
        audit(m, "true", new)
        run(m, f"INSERT INTO {m.qualified} SELECT * FROM {new}")
        con.execute(f"DROP TABLE {new}")
        p.touched.update(month for (month,) in old if month is not None)

    def clear(self, con: duckdb.DuckDBPyConnection) -> None:
        """Drop the scratch tables; the input views read nothing again."""
        _define(con, self.appended.name, f"SELECT {_select(self.appended)} FROM {self.appended.source} WHERE false")
        for scratch in ("scoped.keys_rows", "touched_rowids", "scoped.build_keys", "scoped.old_keys"):
            con.execute(f"DROP TABLE IF EXISTS {scratch}")


class Append(Strategy):
    """Append the rows of the new lake files batch by batch; recompute the keys models that read this one."""

    name = "append"

    def __init__(self, model: Model, models: list[Model]) -> None:
        super().__init__(model, models)
        self.kinds = input_kinds(model.inputs, self.by_name)
        self.followers = [
            Keys(x, models)
            for x in models
            if x.incremental == "keys" and any(i.source == model.qualified for i in x.inputs)
        ]
        # the followers by key column, in model order (a follower that reads another runs after it)
        self.groups: dict[str, list[Keys]] = {}
        for f in self.followers:
            self.groups.setdefault(f.key, []).append(f)

    def kinds_read_whole(self) -> set[str]:
        return self.kinds

    def touch(self, con: duckdb.DuckDBPyConnection, p: Plan, batch: str) -> None:
        """Record the months (``months_touched``) and days (``days_touched``) the batch's rows touch."""
        m = self.model
        if touched := planner.months_sql(m, batch):
            p.touched.update(month for (month,) in con.execute(touched).fetchall() if month is not None)
        p.touched_days.update(_days_touched(con, m, batch))

    def run(self, con, p, run, audit, progress) -> None:  # type: ignore[no-untyped-def]
        m, full = self.model, p.is_full(self.model)
        # the followers rebuilt in full are computed once, after the last batch, from all rows; the others recompute
        # the keys of each batch
        whole = [f for f in self.followers if p.is_full(f.model)]
        groups = {key: [f for f in group if f not in whole] for key, group in self.groups.items()}
        groups = {key: group for key, group in groups.items() if group}
        batches = p.batches(self.kinds, every=full)
        other_files = p.new_of({k for group in groups.values() for f in group for k in f.other_kinds})
        if other_files and not batches:
            batches.append([])
        if full:
            self.create_empty(con, run)
        for f in whole:
            f.create_empty(con, run)
        for n, files in enumerate(batches):
            last = n == len(batches) - 1
            batch = in_files(files)
            for i in m.inputs:
                _define(con, i.name, f"SELECT {_select(i)} FROM {i.source} WHERE {batch}")
            run(m, f"INSERT INTO {m.qualified}\n{m.body}")
            audit(m, batch)
            if not full:
                self.touch(con, p, batch)
                for group in groups.values():
                    Keys.lookup(con, p, group, batch, other_files if last else [])
                    for f in group:
                        f.some_rows(con, p, batch, run, audit)
            if progress:
                names = " + ".join([m.qualified] + [f.model.qualified for g in groups.values() for f in g])
                progress(f"{names}: batch {n + 1}/{len(batches)} ({len(files)} file(s))")
        for f in self.followers:
            if f in whole:
                # every key is new: one pass over all the appended rows (DuckDB spills what does not fit in
                # memory), instead of recomputing after each batch the keys met before (a scan of all earlier rows
                # per batch)
                f.all_rows(con, run, audit)
                if progress:
                    progress(f"{f.model.qualified}: all keys")
            f.clear(con)


class Months(Strategy):
    """Recompute the touched months: the whole table on a full build."""

    name = "months"

    def run(self, con, p, run, audit, progress) -> None:  # type: ignore[no-untyped-def]
        m = self.model
        full = p.is_full(m) or not _table_exists(con, m.qualified)
        months = p.months
        for i in m.inputs:
            _define(
                con, i.name, f"SELECT {_select(i)} FROM {i.source} WHERE {'true' if full else month_rows(i, months)}"
            )
        if full:
            run(m, f"CREATE OR REPLACE TABLE {m.qualified} AS\n{m.body}")
            audit(m, "true")
            return
        where = date_filter(months)
        run(m, f"DELETE FROM {m.qualified} WHERE {where}")
        if months:
            run(m, f"INSERT INTO {m.qualified} SELECT * FROM (\n{m.body}\n) WHERE {where}")
        audit(m, where)


class Days(Strategy):
    """Recompute the touched days: the whole table on a full build."""

    name = "days"

    def run(self, con, p, run, audit, progress) -> None:  # type: ignore[no-untyped-def]
        m = self.model
        full = p.is_full(m) or not _table_exists(con, m.qualified)
        for i in sorted(m.inputs, key=lambda i: i.within is not None):  # the day inputs first
            if full:
                where = "true"
            elif i.within is None:
                where = day_rows(i.day, p.days, i.lookback)  # type: ignore[arg-type]
            else:
                where = _within(con, i)
            _define(con, i.name, f"SELECT {_select(i)} FROM {i.source} WHERE {where}")
        if full:
            run(m, f"CREATE OR REPLACE TABLE {m.qualified} AS\n{m.body}")
            audit(m, "true")
            return
        where = date_filter(p.days, "day")
        run(m, f"DELETE FROM {m.qualified} WHERE {where}")
        if p.days:
            run(m, f"INSERT INTO {m.qualified} SELECT * FROM (\n{m.body}\n) WHERE {where}")
        audit(m, where)


def _within(con: duckdb.DuckDBPyConnection, i: Input) -> str:
    """The rows of a ``within COLUMN of INPUT.COLUMN`` input: COLUMN between the least and the greatest value of
    INPUT.COLUMN (a day input, already defined), bound as DuckDB variables, which zone maps prune by (as constants;
    a subquery there would not be). Without a day row the range is NULL: no rows."""
    col, other, other_col = i.within  # type: ignore[misc]
    return _bound_range(con, i.name, col, f"scoped.{other}", other_col)


def _bound_range(con: duckdb.DuckDBPyConnection, name: str, col: str, table: str, of_col: str) -> str:
    """``col`` between the least and the greatest value of ``table.of_col``, bound as DuckDB variables named after
    ``name`` (NULL when the table is empty: no rows)."""
    low, high = f"costledger_{name}_low", f"costledger_{name}_high"
    bounds = con.execute(f"SELECT min({of_col}), max({of_col}) FROM {table}").fetchone()
    con.execute(f"SET VARIABLE {low} = ?", [bounds[0] if bounds else None])
    con.execute(f"SET VARIABLE {high} = ?", [bounds[1] if bounds else None])
    return f"{col} BETWEEN getvariable('{low}') AND getvariable('{high}')"


_STRATEGIES: dict[str, type[Strategy]] = {s.name: s for s in (Append, Keys, Months, Days)}  # type: ignore[attr-defined]
assert tuple(_STRATEGIES) == STRATEGIES, "pipeline.base.models.STRATEGIES names the strategies defined here"


def strategy(model: Model, models: list[Model]) -> Strategy:
    """The strategy object of an incremental model (its header already checked across models by the planner)."""
    return _STRATEGIES[model.incremental](model, models)  # type: ignore[index]
