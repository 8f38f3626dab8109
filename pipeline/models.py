"""Model files: their header (one fixed set of keys), their parsed body and their order.

Model layer: reads ``sql/`` only; knows neither storage nor ingest. Each model file holds
one SELECT and a header of ``-- key: value`` lines (see ``pipeline.build`` for their
meaning); any other ``-- key:`` line is an error naming the file and line.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from pipeline.errors import CostledgerError

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"
LAYERS = ("staging", "intermediate", "marts")

#: The incremental strategies (``-- incremental:``), see ``pipeline.incremental``.
STRATEGIES = ("append", "tasks", "months")

#: What each scoped view reads (for the dependency order of the models that read it).
SCOPED_SOURCES = {
    "requests_new": "staging.stg_ledger__requests",
    "requests_of_tasks": "intermediate.int_requests_priced",
    "outcomes_of_tasks": "staging.stg_ledger__outcomes",
    "requests_of_months": "intermediate.int_requests_priced",
    "requests_near_months": "intermediate.int_requests_priced",
    "tasks_of_months": "intermediate.int_tasks_resolved",
}


@dataclass(frozen=True)
class Model:
    layer: str
    name: str
    path: Path
    body: str
    materialized: str
    grain: str
    unique_key: tuple[str, ...]
    description: str
    column_docs: dict[str, str] = field(default_factory=dict)
    published: bool = True
    incremental: str | None = None
    key_enforced_by: str | None = None
    column_lines: dict[str, int] = field(default_factory=dict)
    """Line of each ``-- column NAME:`` comment (for errors)."""

    @property
    def qualified(self) -> str:
        return f"{self.layer}.{self.name}"

    def depends_on(self, known: set[str]) -> set[str]:
        refs = {f"{s}.{n}" for s, n in re.findall(r"\b(staging|intermediate|marts)\.(\w+)", self.body)}
        refs |= {SCOPED_SOURCES[n] for n in re.findall(r"\bscoped\.(\w+)", self.body)
                 if n in SCOPED_SOURCES}
        return (refs & known) - {self.qualified}


_HEADER = re.compile(r"^--\s*(column\s+\w+|[a-z_]+)\s*:\s*(.*)$")

#: The header keys a model may state (plus ``column NAME``); any other ``-- key:`` line is an error.
HEADER_KEYS = ("grain", "materialized", "unique_key", "description", "published", "incremental", "key_enforced_by")


class ModelHeaderError(CostledgerError, ValueError):
    """A model file's header has an unknown key or a bad value; the message names file and line."""


def parse_model(layer: str, path: Path) -> Model:
    meta: dict[str, str] = {}
    cols: dict[str, str] = {}
    col_lines: dict[str, int] = {}
    body_lines: list[str] = []
    in_header = True
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        m = _HEADER.match(line) if in_header else None
        if m:
            key, value = m.group(1), m.group(2).strip()
            if key.startswith("column"):
                cols[key.split()[1]] = value
                col_lines[key.split()[1]] = number
            elif key in HEADER_KEYS:
                meta[key] = value
            else:
                import difflib

                near = difflib.get_close_matches(key, HEADER_KEYS, n=1)
                hint = f"did you mean {near[0]}? " if near else ""
                raise ModelHeaderError(f"{path}:{number}: unknown header key {key!r}; {hint}"
                                       f"(known: {', '.join(HEADER_KEYS)}, column NAME)")
            continue
        if in_header and line.startswith("--"):
            continue
        in_header = False
        body_lines.append(line)
    materialized = meta.get("materialized", "table")
    if materialized not in ("view", "table"):
        raise ModelHeaderError(f"{path}: materialized must be view or table, not {materialized!r}")
    if "grain" not in meta:
        raise ModelHeaderError(f"{path}: every model states its grain (-- grain: one row per ...)")
    key = tuple(k.strip() for k in meta.get("unique_key", "").split(",") if k.strip())
    strategy = meta.get("incremental")
    if strategy is not None and (strategy not in STRATEGIES or materialized != "table"):
        raise ModelHeaderError(f"{path}: incremental must be one of {', '.join(STRATEGIES)} (tables only), "
                               f"not {strategy!r}")
    if meta.get("published", "yes") not in ("yes", "no"):
        raise ModelHeaderError(f"{path}: published must be yes or no, not {meta['published']!r}")
    return Model(layer, path.stem, path, "\n".join(body_lines).strip().rstrip(";"), materialized,
                 meta["grain"], key, meta.get("description", ""), cols, meta.get("published", "yes") != "no",
                 strategy, meta.get("key_enforced_by"), col_lines)


def discover(sql_dir: Path = SQL_DIR) -> list[Model]:
    """All models, in an order where each runs after the models it reads."""
    models = [parse_model(layer, p) for layer in LAYERS for p in sorted((sql_dir / layer).glob("*.sql"))]
    by_name = {m.qualified: m for m in models}
    ordered: list[Model] = []
    state: dict[str, int] = {}

    def visit(m: Model, chain: tuple[str, ...]) -> None:
        if state.get(m.qualified) == 2:
            return
        if state.get(m.qualified) == 1:
            raise ValueError(f"models form a cycle: {' -> '.join(chain + (m.qualified,))}")
        state[m.qualified] = 1
        for dep in sorted(m.depends_on(set(by_name))):
            visit(by_name[dep], chain + (m.qualified,))
        state[m.qualified] = 2
        ordered.append(m)

    for m in models:
        visit(m, ())
    return ordered


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
