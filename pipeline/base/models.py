"""Model files: their header (one fixed set of keys), their parsed body and their order.

Model layer: reads ``sql/`` only; knows neither storage nor ingest. Each model file holds
one SELECT and a header of ``-- key: value`` lines (see ``pipeline.transform.build`` for their
meaning); any other ``-- key:`` line is an error naming the file and line.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import duckdb

from pipeline.base.errors import CostledgerError


def _sql_dir() -> Path:
    """The models' folder: pipeline/sql in an installed package (a wheel carries sql/ there), else the checkout's
    sql/ beside pipeline/ (an editable install maps it)."""
    package = Path(__file__).resolve().parents[1]
    return package / "sql" if (package / "sql" / "marts").is_dir() else package.parent / "sql"


SQL_DIR = _sql_dir()


def macro_statements(sql_dir: Path = SQL_DIR) -> list[str]:
    """The statements of ``sql/macros.sql``: separated by a line holding only ``;`` (none for a folder of models
    without the file)."""
    path = sql_dir / "macros.sql"
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    return [s.strip() for s in re.split(r"^;\s*$", text, flags=re.MULTILINE) if s.strip() and not _only_comments(s)]


def _only_comments(text: str) -> bool:
    return all(not line.strip() or line.strip().startswith("--") for line in text.splitlines())


def define_macros(con: duckdb.DuckDBPyConnection, sql_dir: Path = SQL_DIR) -> None:
    """Define the SQL macros (sql/macros.sql) on ``con``: temporary, a connection's own. The models and the report's
    queries use them."""
    for statement in macro_statements(sql_dir):
        con.execute(statement)


def persistent_macro_statements(sql_dir: Path = SQL_DIR) -> list[str]:
    """The SQL macros as the published file keeps them (``CREATE MACRO``, not temporary): its views that call one
    then work in any DuckDB client that opens the file, and ad-hoc SQL can call them too."""
    return [
        re.sub(r"CREATE\s+OR\s+REPLACE\s+TEMP\s+MACRO", "CREATE OR REPLACE MACRO", s, count=1, flags=re.I)
        for s in macro_statements(sql_dir)
    ]


LAYERS = ("staging", "intermediate", "marts")

#: The incremental strategies (``-- incremental:``), see ``pipeline.transform.incremental``.
STRATEGIES = ("append", "keys", "months", "days")


@dataclass(kw_only=True, frozen=True)
class Input:
    """An incremental model's input, ``-- input NAME: SOURCE [(COLUMNS)] [, day COLUMN] [, lookback COLUMN]
    [, within COLUMN of INPUT.COLUMN]``: the model reads ``scoped.NAME``, a view of the model SOURCE that its strategy
    restricts to what is new."""

    name: str
    source: str
    columns: tuple[str, ...] = ()
    """The columns the model reads (an input from an ``append`` model is collected into a table of just these)."""
    lookback: str | None = None
    """``months``: also the rows of the month before each touched month whose COLUMN reaches into it; ``days``: also
    the earlier rows whose COLUMN reaches into a touched day."""
    day: str | None = None
    """``days`` only: the timestamp column whose day puts a row in a day partition."""
    within: tuple[str, str, str] | None = None
    """``days`` only, ``within COLUMN of INPUT.COLUMN``: not a day partition but the rows whose COLUMN lies between
    the least and the greatest INPUT.COLUMN of the model's input INPUT (the touched days' rows): a range that zone
    maps prune when keys grow with time, e.g. the tasks of the touched days' requests."""
    line: int = 0


@dataclass(frozen=True)
class Column:
    """A declared column, ``-- column NAME TYPE[: MEANING]``: its DuckDB type as DuckDB names it (``DECIMAL(38,12)``,
    ``VARCHAR[]``) and what it means (a mart's columns all say; another model's column without one takes the
    meaning of the same column of the first table it reads that has it)."""

    name: str
    type: str
    meaning: str
    line: int


@dataclass(kw_only=True, frozen=True)
class Model:
    layer: str
    name: str
    path: Path
    body: str
    materialized: str
    grain: str
    unique_key: tuple[str, ...]
    description: str
    columns: tuple[Column, ...] = ()
    """Every column the model gives, in its SELECT's order."""
    published: str = "yes"
    """``yes``: the published file holds a copy of the table; ``no``: only the work file holds it; ``view``: the
    published file holds the model as a view over its inputs (``published_body``), computed when read."""
    incremental: str | None = None
    key_enforced_by: str | None = None
    inputs: tuple[Input, ...] = ()
    months_touched: tuple[str, ...] = ()
    """``append`` only: SQL expressions giving the months a new row touches (``-- months_touched:``)."""
    days_touched: tuple[str, ...] = ()
    """``append`` only: two SQL expressions, the first and the last day a new row touches (``-- days_touched:``)."""
    compression: tuple[tuple[str, str], ...] = ()
    """``append`` and ``keys`` only, ``-- compression: COLUMN METHOD[, COLUMN METHOD]``: the DuckDB compression the
    table's columns are stored with (``USING COMPRESSION``) instead of the one DuckDB picks; the table is created
    with it on a full build. E.g. zstd for columns of unique ids: half DuckDB's own choice's write time and size."""
    compression_line: int = 0
    settings: tuple[str, ...] = ()
    """The settings the model reads (``-- settings: NAME[, NAME]``): their values are part of its fingerprint."""

    @property
    def qualified(self) -> str:
        return f"{self.layer}.{self.name}"

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)

    def published_body(self) -> str:
        """The model's SELECT over its whole inputs: each ``scoped.NAME`` read as its source (what a full build
        reads), for a view that needs no build."""
        body = self.body
        for i in self.inputs:
            body = re.sub(rf"\bscoped\.{i.name}\b", i.source, body)
        return body

    def reads(self) -> list[str]:
        """Every table the model's SELECT names (``schema.name``; a scoped input as its source), in the order first
        named, the model itself left out."""
        code = _NOT_CODE.sub(" ", self.published_body())  # a name in a string or a comment is not read
        names = dict.fromkeys(f"{s}.{n}" for s, n in _REFERENCE.findall(code))
        names.pop(self.qualified, None)
        return list(names)

    def depends_on(self, known: set[str]) -> set[str]:
        return (set(self.reads()) | {i.source for i in self.inputs}) & known


_HEADER = re.compile(r"^--\s*(input\s+\w+|[a-z_]+)\s*:\s*(.*)$")
_REFERENCE = re.compile(r"\b(raw|meta|staging|intermediate|marts)\.(\w+)")
#: SQL string literals ('' inside one is a quote), line comments and block comments
_NOT_CODE = re.compile(r"'(?:[^']|'')*'|--[^\n]*|/\*.*?\*/", re.DOTALL)
#: ``-- column NAME TYPE[: MEANING]``: a type holds no colon, so the first colon ends it
_COLUMN = re.compile(r"^--\s*column\s+(\w+)\s+([^:]*?)\s*(?::\s*(.*))?$")
_INPUT = re.compile(
    r"^(\w+\.\w+)\s*(?:\(([\w\s,]+)\))?\s*(?:,\s*day\s+(\w+))?\s*(?:,\s*lookback\s+(\w+))?"
    r"\s*(?:,\s*within\s+(\w+)\s+of\s+(\w+)\.(\w+))?$"
)

#: The header keys a model may state (plus ``column NAME`` and ``input NAME``); any other ``-- key:`` line is an error.
HEADER_KEYS = (
    "grain",
    "materialized",
    "unique_key",
    "description",
    "published",
    "incremental",
    "key_enforced_by",
    "months_touched",
    "days_touched",
    "compression",
    "settings",
)

_COMPRESSION = re.compile(r"^(\w+)\s+([a-z_]+)$")


class ModelHeaderError(CostledgerError, ValueError):
    """A model file's header has an unknown key or a bad value; the message names file and line."""


def _read_header(path: Path, text: str | None = None) -> tuple[dict[str, tuple[str, int]], list[str]]:
    """The header's ``key: (value, line)`` (``input NAME`` keys as written; each column line whole, under a key
    ``column N`` in the header's order) and the body lines, of the file's ``text`` (read from ``path`` when not
    given)."""
    meta: dict[str, tuple[str, int]] = {}
    body_lines: list[str] = []
    in_header = True
    if text is None:
        text = path.read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), start=1):
        if in_header and re.match(r"^--\s*column\b", line):
            meta[f"column {len(meta)}"] = (line, number)  # parsed by _columns, in the header's order
            continue
        m = _HEADER.match(line) if in_header else None
        if m:
            key, value = m.group(1), m.group(2).strip()
            if key.split()[0] != "input" and key not in HEADER_KEYS:
                near = difflib.get_close_matches(key, HEADER_KEYS, n=1)
                hint = f"did you mean {near[0]}? " if near else ""
                raise ModelHeaderError(
                    f"{path}:{number}: unknown header key {key!r}; {hint}"
                    f"(known: {', '.join(HEADER_KEYS)}, column NAME, input NAME)"
                )
            meta[" ".join(key.split())] = (value, number)
            continue
        if in_header and line.startswith("--"):
            continue
        in_header = False
        body_lines.append(line)
    return meta, body_lines


def _parse_input(path: Path, name: str, value: str, line: int) -> Input:
    m = _INPUT.match(value)
    if not m:
        raise ModelHeaderError(
            f"{path}:{line}: input {name}: expected SCHEMA.MODEL [(COLUMN, ...)] [, day COLUMN] [, lookback COLUMN] "
            f"[, within COLUMN of INPUT.COLUMN], not {value!r}"
        )
    columns = tuple(c.strip() for c in (m.group(2) or "").split(",") if c.strip())
    within = (m.group(5), m.group(6), m.group(7)) if m.group(5) else None
    return Input(
        name=name, source=m.group(1), columns=columns, lookback=m.group(4), day=m.group(3), within=within, line=line
    )


def _check_incremental(
    path: Path, meta: dict[str, tuple[str, int]], body: str, key: tuple[str, ...], inputs: tuple[Input, ...]
) -> None:
    """What each strategy needs of its model, stated in the header (file and line when not)."""
    strategy, line = meta.get("incremental", (None, 0))
    if strategy is not None and (strategy not in STRATEGIES or meta.get("materialized", ("table",))[0] != "table"):
        raise ModelHeaderError(
            f"{path}:{line}: incremental must be one of {', '.join(STRATEGIES)} (tables only), not {strategy!r}"
        )
    declared = {i.name for i in inputs}
    for name in sorted(set(re.findall(r"\bscoped\.(\w+)", body)) - declared):
        number = next(
            n
            for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
            if f"scoped.{name}" in text
        )
        raise ModelHeaderError(
            f"{path}:{number}: the model reads scoped.{name}, which no "
            f"'-- input {name}: SCHEMA.MODEL' header line declares"
        )
    touched = [k for k in ("months_touched", "days_touched") if k in meta]
    if strategy is None:
        if inputs or touched:
            line = inputs[0].line if inputs else meta[touched[0]][1]
            raise ModelHeaderError(
                f"{path}:{line}: inputs, months_touched and days_touched are for incremental models only"
            )
        return
    if not inputs:
        raise ModelHeaderError(
            f"{path}:{line}: an incremental model reads its inputs through scoped views; "
            "declare them with '-- input NAME: SCHEMA.MODEL'"
        )
    _check_inputs(path, strategy, inputs)
    _check_partitions(path, meta, strategy, key, touched)


def _check_inputs(path: Path, strategy: str, inputs: tuple[Input, ...]) -> None:
    """Each input's options fit the model's strategy."""
    for i in inputs:
        if i.lookback and strategy not in ("months", "days"):
            raise ModelHeaderError(f"{path}:{i.line}: lookback is for months and days models only")
        if strategy == "days" and (i.day is None) == (i.within is None):
            raise ModelHeaderError(
                f"{path}:{i.line}: a days model's input names its day column (, day COLUMN) or the range of keys it "
                "reads (, within COLUMN of INPUT.COLUMN), one of the two"
            )
        for option, value in (("day", i.day), ("within", i.within)):
            if strategy != "days" and value is not None:
                raise ModelHeaderError(f"{path}:{i.line}: {option} is for days models only")
        if i.within is not None:
            _check_within(path, i, inputs)


def _check_partitions(
    path: Path, meta: dict[str, tuple[str, int]], strategy: str, key: tuple[str, ...], touched: list[str]
) -> None:
    """The touched ranges are an append model's, and a partitioned model's key includes its partition."""
    line = meta.get("incremental", (None, 0))[1]
    for k in touched:
        if strategy != "append":
            raise ModelHeaderError(f"{path}:{meta[k][1]}: {k} is for append models only")
    if "days_touched" in meta and len(_split_top_level(meta["days_touched"][0])) != 2:
        raise ModelHeaderError(
            f"{path}:{meta['days_touched'][1]}: days_touched is two expressions: FIRST_DAY, LAST_DAY"
        )
    for partition in ("month", "day"):
        if strategy == f"{partition}s" and partition not in key:
            raise ModelHeaderError(
                f"{path}:{meta.get('unique_key', ('', line))[1]}: a {partition}s model is partitioned by "
                f"{partition}: its unique_key must include {partition}"
            )
    if strategy == "keys" and not key:
        raise ModelHeaderError(
            f"{path}:{line}: a keys model is recomputed by its key, the first column of its unique_key: "
            "it needs a unique_key"
        )


def _check_within(path: Path, i: Input, inputs: tuple[Input, ...]) -> None:
    """``within COLUMN of INPUT.COLUMN`` names a day-partitioned input of the same model and columns both read."""
    col, other, other_col = i.within  # type: ignore[misc]
    by_name = {x.name: x for x in inputs}
    if other not in by_name or by_name[other].day is None:
        raise ModelHeaderError(f"{path}:{i.line}: input {i.name}: within ... of {other}: not a day input of this model")
    for x, c in ((i, col), (by_name[other], other_col)):
        if x.columns and c not in x.columns:
            raise ModelHeaderError(f"{path}:{i.line}: input {i.name}: within: input {x.name} does not read {c}")


def parse_model(layer: str, path: Path, text: str | None = None) -> Model:
    meta, body_lines = _read_header(path, text)
    value = {k: v for k, (v, _) in meta.items()}
    materialized = value.get("materialized", "table")
    if materialized not in ("view", "table"):
        raise ModelHeaderError(
            f"{path}:{meta['materialized'][1]}: materialized must be view or table, not {materialized!r}"
        )
    if "grain" not in meta:
        raise ModelHeaderError(f"{path}: every model states its grain (-- grain: one row per ...)")
    if value.get("published", "yes") not in ("yes", "no", "view"):
        raise ModelHeaderError(
            f"{path}:{meta['published'][1]}: published must be yes, no or view, not {value['published']!r}"
        )
    key = tuple(k.strip() for k in value.get("unique_key", "").split(",") if k.strip())
    body = "\n".join(body_lines).strip().rstrip(";")
    inputs = tuple(_parse_input(path, k.split()[1], v, line) for k, (v, line) in meta.items() if k.startswith("input "))
    _check_incremental(path, meta, body, key, inputs)
    columns = _columns(path, meta)
    touched = tuple(e.strip() for e in _split_top_level(value.get("months_touched", "")) if e.strip())
    compression = _parse_compression(path, meta)
    settings = _parse_settings(path, meta, body)
    return Model(
        layer=layer,
        name=path.stem,
        path=path,
        body=body,
        materialized=materialized,
        grain=value["grain"],
        unique_key=key,
        description=value.get("description", ""),
        columns=columns,
        published=value.get("published", "yes"),
        incremental=value.get("incremental"),
        key_enforced_by=value.get("key_enforced_by"),
        inputs=inputs,
        months_touched=touched,
        days_touched=tuple(e.strip() for e in _split_top_level(value.get("days_touched", "")) if e.strip()),
        compression=compression,
        compression_line=meta.get("compression", ("", 0))[1],
        settings=settings,
    )


def _columns(path: Path, meta: dict[str, tuple[str, int]]) -> tuple[Column, ...]:
    """The ``-- column NAME TYPE[: MEANING]`` lines, in order; a line without a type, or a column twice, is an error
    naming the file and line."""
    columns: list[Column] = []
    for key, (text, line) in meta.items():
        if not key.startswith("column "):
            continue
        m = _COLUMN.match(text)
        if not m or not m.group(2):
            name = re.sub(r"^--\s*column\s+", "", text).split(":")[0].strip() or "NAME"
            raise ModelHeaderError(
                f"{path}:{line}: a column is declared with its type, as DuckDB names it: "
                f"'-- column {name} TYPE: what it means' (e.g. DECIMAL(38,12), VARCHAR[])"
            )
        name, sql_type, meaning = m.group(1), " ".join(m.group(2).split()), (m.group(3) or "").strip()
        if twice := next((c for c in columns if c.name == name), None):
            raise ModelHeaderError(f"{path}:{line}: column {name} is declared twice (first on line {twice.line})")
        columns.append(Column(name, sql_type, meaning, line))
    return tuple(columns)


def _parse_settings(path: Path, meta: dict[str, tuple[str, int]], body: str) -> tuple[str, ...]:
    """``-- settings: NAME[, NAME]``: exactly the settings the body names. A model that reads ``meta.settings``
    itself is where settings become columns; it declares none (its readers declare the ones they use)."""
    from pipeline.base.settings import SQL_SETTINGS

    value, line = meta.get("settings", ("", 0))
    declared = tuple(s.strip() for s in value.split(",") if s.strip())
    if unknown := [s for s in declared if s not in SQL_SETTINGS]:
        near = difflib.get_close_matches(unknown[0], SQL_SETTINGS, n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        raise ModelHeaderError(f"{path}:{line}: settings: {unknown[0]} is not a setting the models read{hint}")
    if re.search(r"\bmeta\.settings\b", body):
        if declared:
            raise ModelHeaderError(f"{path}:{line}: settings: a model that reads meta.settings declares none")
        return ()
    words = set(re.findall(r"\w+", body))  # a setting is read where its name is a whole word of the body
    named = tuple(s for s in SQL_SETTINGS if s in words)
    if missing := [s for s in named if s not in declared]:
        raise ModelHeaderError(
            f"{path}: the model reads the setting {missing[0]}: name it in its header (-- settings: "
            f"{', '.join(named)}), so that a change of its value rebuilds this model"
        )
    if unused := [s for s in declared if s not in named]:
        raise ModelHeaderError(f"{path}:{line}: settings: {unused[0]} is declared but the model does not read it")
    return tuple(sorted(declared))


def _parse_compression(path: Path, meta: dict[str, tuple[str, int]]) -> tuple[tuple[str, str], ...]:
    """``-- compression: COLUMN METHOD[, COLUMN METHOD]``, for the models whose table is created empty and then
    filled (``append``, ``keys``)."""
    if "compression" not in meta:
        return ()
    text, line = meta["compression"]
    if meta.get("incremental", ("",))[0] not in ("append", "keys"):
        raise ModelHeaderError(f"{path}:{line}: compression is for append and keys models only")
    pairs = []
    for part in text.split(","):
        m = _COMPRESSION.match(part.strip())
        if not m:
            raise ModelHeaderError(f"{path}:{line}: compression: expected COLUMN METHOD[, COLUMN METHOD], not {text!r}")
        pairs.append((m.group(1), m.group(2)))
    return tuple(pairs)


def _split_top_level(text: str) -> list[str]:
    """Split a list of SQL expressions at the commas outside parentheses."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return parts + [current]


#: discover's answers by the model files' names and texts: a build discovers the models twice, and a process (a test
#: run, a nightly's builds) discovers the same files many times; the models are frozen, so one answer serves them all
_DISCOVERED: dict[str, tuple[Model, ...]] = {}


def discover(sql_dir: Path = SQL_DIR) -> list[Model]:
    """All models, in an order where each runs after the models it reads."""
    files = [
        (layer, p, p.read_text(encoding="utf-8")) for layer in LAYERS for p in sorted((sql_dir / layer).glob("*.sql"))
    ]
    digest = hashlib.sha256()
    for _, p, text in files:
        digest.update(f"{p}\0{len(text)}\0{text}".encode())
    key = digest.hexdigest()
    if key not in _DISCOVERED:
        if len(_DISCOVERED) >= 16:
            _DISCOVERED.clear()
        _DISCOVERED[key] = tuple(_discover([parse_model(layer, p, text) for layer, p, text in files]))
    return list(_DISCOVERED[key])


def _discover(models: list[Model]) -> list[Model]:
    """The models ordered so that each runs after the models it reads, each column with its meaning."""
    by_name = {m.qualified: m for m in models}
    ordered: list[Model] = []
    state: dict[str, int] = {}
    runs_with = _runs_with(models)

    def visit(m: Model, chain: tuple[str, ...]) -> None:
        if state.get(m.qualified) == 2:
            return
        if state.get(m.qualified) == 1:
            raise ValueError(f"models form a cycle: {' -> '.join(chain + (m.qualified,))}")
        state[m.qualified] = 1
        for dep in sorted(m.depends_on(set(by_name)) | (runs_with.get(m.qualified, set()) & set(by_name))):
            visit(by_name[dep], chain + (m.qualified,))
        state[m.qualified] = 2
        ordered.append(m)

    for m in models:
        visit(m, ())
    return _with_meanings(ordered)


def _runs_with(models: list[Model]) -> dict[str, set[str]]:
    """Per ``append`` model, the other inputs of the ``keys`` models that read it: the DuckDB engine computes those
    models batch by batch with it, so what they read must be built before it."""
    keys = [m for m in models if m.incremental == "keys"]
    found: dict[str, set[str]] = {}
    for m in models:
        if m.incremental == "append":
            followers = [k for k in keys if any(i.source == m.qualified for i in k.inputs)]
            names = {k.qualified for k in followers} | {m.qualified}
            found[m.qualified] = {i.source for k in followers for i in k.inputs if i.source not in names}
    return found


def _raw_meanings() -> dict[str, dict[str, str]]:
    """The column meanings of what the models read that is not a model: the raw tables', as their row classes
    describe them, and ``meta.settings``' (one column per setting the models read, as the settings view names it),
    as the setting's own doc says it."""
    from dataclasses import fields

    from pipeline.base.settings import Settings
    from pipeline.base.settings_docs import FIELD_DOCS
    from schemas.ddl import columns, table_name
    from schemas.tables import KINDS

    known = {
        f"raw.{table_name(t)}": {c.name: c.description for c in columns(t) if c.description} for t in KINDS.values()
    }
    docs = FIELD_DOCS()
    known["meta.settings"] = {
        f.name: f"The setting {f.metadata['toml']}: {docs[f.name]}"
        for f in fields(Settings)
        if f.metadata.get("sql") and docs.get(f.name)
    }
    return known


def _with_meanings(ordered: list[Model]) -> list[Model]:
    """The models (each after what it reads), a column declared without a meaning given that of the same column in
    the first table its model names that has one: a column passed on keeps what it means, said once. Every column
    must end up with a meaning (the published file's COMMENTs, the docs, ``explain``)."""
    known = _raw_meanings()
    done: list[Model] = []
    for m in ordered:
        reads = m.reads()
        columns = []
        for c in m.columns:
            meaning = c.meaning or next((known[r][c.name] for r in reads if c.name in known.get(r, {})), "")
            if not meaning:
                raise ModelHeaderError(
                    f"{m.path}:{c.line}: column {c.name} of {m.qualified} has no meaning, and no table it reads has "
                    f"a column {c.name} to take one from: '-- column {c.name} {c.type}: what it means'"
                )
            columns.append(Column(c.name, c.type, meaning, c.line))
        known[m.qualified] = {c.name: c.meaning for c in columns if c.meaning}
        done.append(replace(m, columns=tuple(columns)))
    return done


def sql_fingerprint(con: duckdb.DuckDBPyConnection, body: str) -> str:
    """A hash of what a model's SQL *means*: DuckDB's parse tree (``json_serialize_sql``) without the
    positions of tokens, so comments, whitespace and layout never change it. Unparsable SQL (which the
    build reports anyway) falls back to its text."""
    tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [body]).fetchall()[0][0])
    if tree.get("error"):
        return hashlib.sha256(body.encode()).hexdigest()

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in ("query_location", "query_location_length")}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return hashlib.sha256(json.dumps(strip(tree), sort_keys=True).encode()).hexdigest()
