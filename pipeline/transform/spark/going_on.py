"""How a model that goes on from the last Spark build is computed (``pipeline.transform.spark.incremental`` says
which do): which rows of its inputs it reads, and how its new rows meet the earlier build's.

- ``AppendRows``: the rows of the new lake files, written beside the earlier build's files (linked into the folder).
- ``KeyRows``: the rows of the keys with new input rows; the earlier build's rows of every other key carried over.
- ``DayRows``: the rows of the days the new rows touch (and the earlier rows a ``lookback`` column reaches into them);
  the earlier build's rows of every other day carried over.

The conditions are SQL this program makes from file hashes and dates, never from user input.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.base.models import Input, Model
from pipeline.transform.incremental import date_filter, day_rows, in_files
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
    new_appended: list[str]
    """The new files of the append model it reads."""
    _keys: Any = None
    _view: str = ""

    def start(self, spark: Any, m: Model) -> list[Any]:
        key, scope = self.scope.key, self.scope
        parts = [f"SELECT `{key}` FROM {view_name(*scope.appended.split('.', 1))} WHERE {in_files(self.new_appended)}"]
        if scope.new_other_files:
            parts += [
                f"SELECT `{key}` FROM {view_name('raw', kind)} WHERE {in_files(scope.new_other_files)}"
                for kind in scope.other_kinds
            ]
        self._view = f"{view_name(m.layer, m.name)}__keys"
        self._keys = keep(spark.sql(" UNION ".join(parts)))
        self._keys.createOrReplaceTempView(self._view)
        return [self._keys]

    def where(self, i: Input) -> str:
        key = self.scope.key
        return f"`{key}` IN (SELECT `{key}` FROM {self._view})"

    def combine(self, spark: Any, result: Any) -> Any:
        # the other keys' rows as the earlier build left them (a NULL key is no key: its rows stay, as on DuckDB)
        earlier = spark.read.schema(result.schema).parquet(str(self.earlier))
        return earlier.join(self._keys, on=self.scope.key, how="left_anti").unionByName(result)


@dataclass(kw_only=True)
class DayRows(GoingOn):
    days: list[dt.date]
    earlier: Path

    def where(self, i: Input) -> str:
        return day_rows(i.day, self.days, i.lookback)  # type: ignore[arg-type]

    def combine(self, spark: Any, result: Any) -> Any:
        chosen = date_filter(self.days, "day")
        earlier = spark.read.schema(result.schema).parquet(str(self.earlier))
        # the touched days' rows anew (a lookback row may give a row of another day: not this model's to replace)
        return earlier.where(f"({chosen}) IS NOT TRUE").unionByName(result.where(chosen))


def new_days(
    spark: Any, models: list[Model], new_files: dict[str, list[str]], macros: dict[str, Macro]
) -> list[dt.date]:
    """The days the append models' new rows touch (each one's ``days_touched``: every day from the first to the
    last of a row)."""
    pairs: list[tuple[dt.date | None, dt.date | None]] = []
    for m in models:
        if m.qualified in new_files and m.days_touched:
            first, last = m.days_touched
            sql = (
                f"SELECT DISTINCT CAST({first} AS DATE) AS f, CAST({last} AS DATE) AS l FROM {m.qualified} "
                f"WHERE {in_files(new_files[m.qualified])}"
            )
            pairs += [(row[0], row[1]) for row in spark.sql(to_spark(sql, macros)).collect()]
    return incremental.touched_days(pairs)
