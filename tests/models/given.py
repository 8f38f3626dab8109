"""Given/expect cases of one model: a few rows of each table the model reads, the rows it must give. A case runs the
model's SELECT alone on an in-memory DuckDB: each table it reads is created empty with its declared columns (a model's
``-- column`` lines, a raw table's row class), filled with the case's rows (a column left out is NULL), the settings
are the defaults unless the case sets some, and a model that reads nothing (a declared list) is what its SQL says
unless the case gives its rows; nothing else is built. The ledger's own tables (``meta.loaded_files``) are given the
same way.

A file ``tests/models/cases/<schema>.<model>.yml`` holds a list of cases::

    - case: what the case shows
      given:
        intermediate.int_requests_monthly:
          - {month: 2026-10-01, route: self_hosted, cluster_id: c1, output_tokens: 1000}
      settings: {review_rate_per_hour_usd: "60"}
      expect:
        - {month: 2026-10-01, cluster_id: c1, phase: generation, cost_usd: "600"}

``expect`` lists every row the model gives (in any order), each with the columns the case checks of it; YAML's
``null`` is SQL's NULL. Money is written as a string or a number and compared exactly as a DECIMAL; a DOUBLE to 12
significant digits; a TIMESTAMP as ISO text ("2026-10-01 00:02:00").
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import yaml

from pipeline.base.models import SQL_DIR, Model, define_macros, discover
from pipeline.base.settings import Settings
from pipeline.storage.catalog import META_DDL
from schemas.ddl import columns as raw_columns
from schemas.ddl import table_name
from schemas.tables import KINDS

CASES = Path(__file__).resolve().parent / "cases"
SETTINGS = "staging.stg_ledger__settings"


class CaseError(AssertionError):
    """A case that does not hold, or cannot run: the message names the file, the case and what differs."""


@dataclass(frozen=True)
class Case:
    path: Path
    model: str
    name: str
    given: dict[str, list[dict[str, Any]]]
    settings: dict[str, Any]
    expect: list[dict[str, Any]]

    @property
    def id(self) -> str:
        return f"{self.model}: {self.name}"


def load_cases(folder: Path = CASES) -> list[Case]:
    found = []
    for path in sorted(folder.glob("*.yml")):
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            found.append(
                Case(
                    path=path,
                    model=path.stem,
                    name=entry["case"],
                    given=entry.get("given") or {},
                    settings=entry.get("settings") or {},
                    expect=entry.get("expect") or [],
                )
            )
    return found


def declared_columns(models: dict[str, Model]) -> dict[str, list[tuple[str, str]]]:
    """Every table a model may read: its columns and DuckDB types, the models' as declared, the raw tables' from
    their row classes."""
    tables = {q: [(c.name, c.type) for c in m.columns] for q, m in models.items()}
    for kind in KINDS.values():
        tables[f"raw.{table_name(kind)}"] = [(c.name, c.duckdb_type) for c in raw_columns(kind)]
    return tables | _meta_columns()


@functools.cache
def _meta_columns() -> dict[str, list[tuple[str, str]]]:
    """The ledger's own tables (the manifest of loaded files, ...), as the store creates them."""
    con = duckdb.connect(":memory:")
    try:
        for statement in META_DDL:
            con.execute(statement)
        found = con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE schema_name = 'meta' "
            "ORDER BY table_name, column_index"
        ).fetchall()
    finally:
        con.close()
    tables: dict[str, list[tuple[str, str]]] = {}
    for table, column, sql_type in found:
        tables.setdefault(f"meta.{table}", []).append((column, sql_type))
    return tables


@functools.cache
def _models(sql_dir: Path) -> dict[str, Model]:
    return {m.qualified: m for m in discover(sql_dir)}


def run_case(case: Case, sql_dir: Path = SQL_DIR) -> None:
    """Run the case's model on its given rows; a difference from ``expect`` raises CaseError naming it."""
    models = _models(sql_dir)
    if case.model not in models:
        raise CaseError(f"{case.path}: no model {case.model}")
    model = models[case.model]
    tables = declared_columns(models)
    con = duckdb.connect(":memory:")
    try:
        define_macros(con, sql_dir)
        reads = model.reads()
        for name in case.given:
            if name not in reads:
                raise CaseError(f"{case.path}: {case.id}: {case.model} does not read {name}")
        for schema in ("raw", "meta", "staging", "intermediate", "marts"):
            con.execute(f"CREATE SCHEMA {schema}")
        for name in reads:
            if name == SETTINGS:
                _settings(con, case, models[SETTINGS])
            elif name in models and not models[name].reads() and name not in case.given:
                # a model that reads nothing (a declared list, such as the cost classes) is what its SQL says
                con.execute(f"CREATE TABLE {name} AS {models[name].body}")
            elif name not in tables:
                raise CaseError(f"{case.path}: {case.id}: {case.model} reads {name}, which a case cannot give")
            else:
                _table(con, case, name, tables[name], case.given.get(name, []))
        cursor = con.execute(f"SELECT * FROM (\n{model.published_body()}\n)")
        names = [d[0] for d in cursor.description]
        got = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    finally:
        con.close()
    _compare(case, dict(tables[case.model]), got)


def _table(con: duckdb.DuckDBPyConnection, case: Case, name: str, cols: list[tuple[str, str]], rows: list) -> None:
    con.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {t}' for c, t in cols)})")
    types = dict(cols)
    for row in rows:
        if unknown := sorted(set(row) - set(types)):
            raise CaseError(f"{case.path}: {case.id}: {name} has no column {unknown[0]}")
        given = list(row)
        casts = ", ".join(f"CAST(? AS {types[c]})" for c in given)
        try:
            con.execute(f"INSERT INTO {name} ({', '.join(given)}) SELECT {casts}", [_bind(row[c]) for c in given])
        except duckdb.Error as exc:
            raise CaseError(f"{case.path}: {case.id}: {name} row {row}: {str(exc).splitlines()[0]}") from None


def _settings(con: duckdb.DuckDBPyConnection, case: Case, settings_model: Model) -> None:
    """The settings view's one row: the defaults' (as a build writes them), with the case's values put in."""
    con.execute("CREATE TABLE meta.settings (key VARCHAR, value VARCHAR)")
    con.executemany("INSERT INTO meta.settings VALUES (?, ?)", Settings().sql_rows())
    con.execute(f"CREATE TABLE {SETTINGS} AS {settings_model.body}")
    types = {c.name: c.type for c in settings_model.columns}
    for key, value in case.settings.items():
        if key not in types:
            raise CaseError(f"{case.path}: {case.id}: no setting column {key}")
        con.execute(f"UPDATE {SETTINGS} SET {key} = CAST(? AS {types[key]})", [_bind(value)])


def _bind(value: Any) -> Any:
    """A YAML value as a parameter: numbers as text, so that a DECIMAL takes them exactly."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return [_bind(v) for v in value]
    return value


def _same(sql_type: str, got: Any, want: Any) -> bool:
    if got is None or want is None:
        return got is None and want is None
    if sql_type.endswith("[]"):
        return (
            isinstance(want, list)
            and len(got) == len(want)
            and all(_same(sql_type[:-2], g, w) for g, w in zip(got, want))
        )
    if sql_type.startswith("STRUCT("):
        return isinstance(want, dict) and all(k in got and _same(_type_of(got[k]), got[k], want[k]) for k in want)
    if sql_type == "DOUBLE":
        return math.isclose(got, float(want), rel_tol=1e-12, abs_tol=1e-12)
    if sql_type.startswith("DECIMAL") or sql_type in ("HUGEINT", "BIGINT", "INTEGER"):
        return Decimal(str(got)) == Decimal(str(want))
    if sql_type == "TIMESTAMP" and isinstance(want, str):
        return bool(got == dt.datetime.fromisoformat(want))
    if sql_type == "DATE" and isinstance(want, str):
        return bool(got == dt.date.fromisoformat(want))
    return bool(got == want)


def _type_of(value: Any) -> str:
    """A STRUCT field's type, told from the value DuckDB gave (its declaration names the struct, not each field)."""
    if isinstance(value, bool) or value is None:
        return "BOOLEAN"
    if isinstance(value, float):
        return "DOUBLE"
    if isinstance(value, (int, Decimal)):
        return "DECIMAL"
    return "VARCHAR"


def _compare(case: Case, types: dict[str, str], got: list[dict[str, Any]]) -> None:
    checked = list(dict.fromkeys(c for row in case.expect for c in row))
    if unknown := [c for c in checked if c not in types]:
        raise CaseError(f"{case.path}: {case.id}: {case.model} has no column {unknown[0]}")
    left = list(got)
    for want in case.expect:
        match = next((g for g in left if all(_same(types[c], g[c], want[c]) for c in want)), None)
        if match is None:
            shown = "\n".join(f"    {_shown(g, checked)}" for g in got) or "    (no rows)"
            raise CaseError(
                f"{case.path}: {case.id}: no row of {case.model} is\n    {_shown(want, list(want))}\nit gives\n{shown}"
            )
        left.remove(match)
    if left:
        shown = "\n".join(f"    {_shown(g, checked)}" for g in left)
        raise CaseError(f"{case.path}: {case.id}: {case.model} gives rows the case does not expect:\n{shown}")


def _shown(row: dict[str, Any], columns: list[str]) -> str:
    return ", ".join(f"{c}={row.get(c)!r}" for c in columns)
