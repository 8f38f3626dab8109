"""How a model that goes on from the last Spark build is computed (``pipeline.transform.planner`` says which do, and
the slices): which rows of its inputs it reads, and how its new rows meet the earlier build's.

- ``AppendRows``: the rows of the new lake files, written beside the earlier build's files (linked into the folder).
- ``KeyRows``: the rows of the keys with new input rows; the earlier build's rows of every other key carried over.
- ``PartitionRows``: the rows of the touched months or days (``touched``); the earlier build's rows of every other
  month or day carried over.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pipeline.base.models import Input, Model
from pipeline.transform import planner
from pipeline.transform.planner import in_files
from pipeline.transform.spark import incremental
from pipeline.transform.spark.translate import Macro, to_spark, view_name


def keep(df: Any) -> Any:
    """``df`` computed once and kept for the reads that follow. Caching, not a checkpoint: a cached result can be
    freed through the session alone, on a local session and over Spark Connect alike."""
    from pyspark import StorageLevel

    df = df.persist(StorageLevel.MEMORY_AND_DISK)
    df.count()
    return df


class GoingOn:
    """A model computed from part of its inputs (``where``), its result then joined to the earlier build's rows
    (``combine``); ``appends``: its rows are written beside the files already in its folder."""

    appends = False

    def start(self, spark: Any, m: Model) -> list[Any]:
        """What the model's inputs need first; the results kept, to free once the model is written."""
        return []

    def where(self, i: Input) -> str:
        raise NotImplementedError

    def combine(self, spark: Any, result: Any) -> Any:
        return result


@dataclass(kw_only=True)
class AppendRows(GoingOn):
    new_files: list[str]
    appends = True

    def where(self, i: Input) -> str:
        return in_files(self.new_files)


@dataclass(kw_only=True)
class KeyRows(GoingOn):
    scope: incremental.KeysScope
    earlier: Path
    keys: Any
    """The keys it recomputes (``recomputed_keys``), kept by the engine: ``touched`` reads them too."""
    _view: str = ""

    def start(self, spark: Any, m: Model) -> list[Any]:
        self._view = f"{view_name(m.layer, m.name)}__keys"
        self.keys.createOrReplaceTempView(self._view)
        return []

    def where(self, i: Input) -> str:
        key = self.scope.key
        return f"`{key}` IN (SELECT `{key}` FROM {self._view})"

    def combine(self, spark: Any, result: Any) -> Any:
        # the other keys' rows as the earlier build left them (a NULL key is no key: its rows stay, as on DuckDB)
        earlier = spark.read.schema(result.schema).parquet(str(self.earlier))
        return earlier.join(self.keys, on=self.scope.key, how="left_anti").unionByName(result)


@dataclass(kw_only=True)
class PartitionRows(GoingOn):
    """A ``months`` model (``column`` month) or a ``days`` model (``column`` day): its inputs' rows of the touched
    months or days, computed anew."""

    column: str
    dates: list[dt.date]
    earlier: Path
    _scoped: str = ""

    def start(self, spark: Any, m: Model) -> list[Any]:
        self._scoped = f"{view_name(m.layer, m.name)}__scoped__"
        return []

    def where(self, i: Input) -> str:
        if self.column == "month":
            return planner.month_rows(i, self.dates)
        if i.within is not None:  # between the least and the greatest value of a day input (defined before it)
            col, other, other_col = i.within
            bounds = f"SELECT {{}}(`{other_col}`) FROM {self._scoped}{other}"
            return f"`{col}` BETWEEN ({bounds.format('min')}) AND ({bounds.format('max')})"
        return planner.day_rows(i.day, self.dates, i.lookback)  # type: ignore[arg-type]

    def combine(self, spark: Any, result: Any) -> Any:
        chosen = planner.date_filter(self.dates, self.column)
        earlier = spark.read.schema(result.schema).parquet(str(self.earlier))
        # the touched partitions' rows anew (a lookback row may give a row of another one: not this model's to
        # replace)
        return earlier.where(f"({chosen}) IS NOT TRUE").unionByName(result.where(chosen))


def recomputed_keys(spark: Any, scope: incremental.KeysScope, new_appended: list[str]) -> Any:
    """The keys a keys model recomputes (``keys_sql``), computed once and kept: the model reads them, and so does
    ``touched`` (the months and days of their rows). The caller frees them."""
    return keep(spark.sql(keys_sql(scope, new_appended)))


def keys_sql(scope: incremental.KeysScope, new_appended: list[str]) -> str:
    """The keys a keys model recomputes: of the append model's new rows and of its other inputs' new files."""
    key = scope.key
    parts = [f"SELECT `{key}` FROM {view_name(*scope.appended.split('.', 1))} WHERE {in_files(new_appended)}"]
    if scope.new_other_files:
        parts += [
            f"SELECT `{key}` FROM {view_name('raw', kind)} WHERE {in_files(scope.new_other_files)}"
            for kind in scope.other_kinds
        ]
    return " UNION ".join(parts)


def touched(
    spark: Any,
    models: list[Model],
    p: incremental.SparkPlan,
    macros: dict[str, Macro],
    keys_of: Callable[[str], Any],
) -> tuple[list[dt.date], list[dt.date]]:
    """The months and the days the build recomputes (the planner's rules): those the append models' new rows touch,
    and those of every row of a recomputed key (``keys_of``: a keys model's, ``recomputed_keys``): the append model's
    rows of the key and the key's earlier rows in a keys model. Called once the append and keys models are
    written."""
    months: set[dt.date] = set()
    pairs: list[tuple[dt.date | None, dt.date | None]] = []

    def collect(sql: str | None) -> list[tuple]:
        return [tuple(row) for row in spark.sql(to_spark(sql, macros)).collect()] if sql else []

    for m in models:
        if m.qualified not in p.new_files:
            continue
        new = in_files(p.new_files[m.qualified])
        months.update(month for (month,) in collect(planner.months_sql(m, new)))
        pairs += collect(planner.day_pairs_sql(m, new))
        appended = spark.table(view_name(m.layer, m.name))
        for name, scope in p.keys.items():
            if scope.appended != m.qualified:
                continue
            keys = keys_of(name)
            keys.createOrReplaceTempView(f"{view_name(m.layer, m.name)}__touched_keys")
            rows = f"{scope.key} IN (SELECT {scope.key} FROM {view_name(m.layer, m.name)}__touched_keys)"  # DuckDB's
            pairs += collect(planner.day_pairs_sql(m, rows))
            if "month" in appended.columns:
                months.update(month for (month,) in collect(f"SELECT DISTINCT month FROM {m.qualified} WHERE {rows}"))
            earlier = spark.read.parquet(str(p.previous / name.replace(".", "/", 1)))  # type: ignore[operator]
            if "month" in earlier.columns:
                old = earlier.join(keys, on=scope.key, how="left_semi").select("month").distinct().collect()
                months.update(row[0] for row in old)
    return sorted(mo for mo in months if mo is not None), planner.touched_days(pairs)
