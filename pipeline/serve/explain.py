"""Every figure explained (``costledger explain MART.COLUMN``): a headline column's meaning, its formula with the
month's own values put in, and the landing files behind each value.

The words and formulas of the headline columns are written once, beside each mart, in
``sql/marts/<mart>.explain.toml``; the report's "How the numbers are computed" reads the same files. Any other column
of a mart is explained by its declared meaning (its model's ``-- column`` line), with its value. The values are the
mart's row, as stored: the formula is shown with them, never recomputed here (the arithmetic is the model's)."""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, Any

from pipeline.base.text import counted, printable
from pipeline.base.errors import CostledgerError, ExitCode
from pipeline.base.models import SQL_DIR, Model, discover
from pipeline.base.query import dict_rows, run_query, table_exists

if TYPE_CHECKING:
    import duckdb

MARTS = SQL_DIR / "marts"
#: a letter of a formula: one capital letter standing alone
_LETTER = re.compile(r"\b[A-Z]\b")


@cache
def _declared() -> dict[str, Model]:
    """The marts as their model files declare them, by name, each column's meaning resolved (a column declared
    without one takes that of the column it passes on): a name given is looked up here, never made a path."""
    return {m.name: m for m in discover(SQL_DIR) if m.layer == "marts"}


def _keys(mart: str) -> tuple[str, ...]:
    """The key columns a mart's row has beside the month, as its model declares its grain."""
    model = _declared().get(mart)
    return tuple(k for k in model.unique_key if k != "month") if model else ()


class ExplainError(CostledgerError):
    """A column with no explanation, a month or key with no row."""

    exit_code = ExitCode.USAGE


@dataclass(frozen=True)
class Letter:
    symbol: str
    column: str
    words: str
    kinds: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Definition:
    """One column's explanation, as its mart's ``.explain.toml`` writes it."""

    mart: str
    column: str
    title: str
    words: str
    formula: str
    letters: tuple[Letter, ...]
    """The letters the formula uses, in its order."""
    kinds: tuple[str, ...] = ()
    """For a formula in words only: the kinds of landing file behind it."""


@dataclass(kw_only=True)
class Explanation:
    definition: Definition
    month: str
    key: dict[str, str]
    value: Any
    values: dict[str, Any]
    """Each letter's value in the row."""
    files: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Per kind of landing file: the files whose rows fed the month (path, sha256, rows, lines)."""
    verdict: str | None = None
    """The month's break-even verdict in words, when the value is missing and the row has one (no self-hosted route,
    no API price, ...): what the reader needs to know why."""

    @property
    def with_values(self) -> str | None:
        """The formula with each letter's value put in; None for a formula in words."""
        if not self.definition.letters:
            return None
        symbols = {letter.symbol: number(self.values[letter.symbol]) for letter in self.definition.letters}
        return _LETTER.sub(lambda m: symbols.get(m.group(0), m.group(0)), self.definition.formula)


@cache
def _explained_marts() -> tuple[str, ...]:
    """The marts with a definitions file beside them, in the files' order."""
    return tuple(path.name.removesuffix(".explain.toml") for path in sorted(MARTS.glob("*.explain.toml")))


@cache
def _spec(mart: str) -> dict[str, Any] | None:
    """A mart's definitions; None for a name that is not one of the marts explained (a name is never made a path:
    ``explain marts./etc/x.y`` reads nothing outside the package)."""
    if mart not in _explained_marts():
        return None
    with (MARTS / f"{mart}.explain.toml").open("rb") as f:
        return tomllib.load(f)


def explained_columns() -> list[str]:
    """Every ``marts.<mart>.<column>`` that ``explain`` knows, in the files' order."""
    return [
        f"marts.{mart}.{column}" for mart in _explained_marts() for column in (_spec(mart) or {}).get("columns", {})
    ]


def definition(name: str, row: dict[str, Any] | None = None) -> Definition:
    """The definition of ``marts.MART.COLUMN`` (``row``: the mart's row, for a formula that depends on it)."""
    parts = name.split(".")
    if len(parts) == 2:
        parts = ["marts", *parts]
    spec = _spec(parts[1]) if len(parts) == 3 and parts[0] == "marts" else None
    entry = (spec or {}).get("columns", {}).get(parts[-1]) if spec else None
    if entry is None:
        return _declared_definition(name, parts)
    formula = entry["formula"]
    when = entry.get("formula_when")
    if when and row is not None and row.get(when["column"]) != when["value"]:
        formula = entry["otherwise"]
    letters = tuple(
        Letter(symbol=s, column=spec["letters"][s]["column"], words=spec["letters"][s]["words"],
               kinds=tuple(spec["letters"][s]["kinds"]))
        for s in dict.fromkeys(_LETTER.findall(formula)) if s in spec["letters"]
    )  # fmt: skip
    return Definition(
        mart=parts[1], column=parts[2], title=entry["title"], words=entry["words"], formula=formula,
        letters=letters, kinds=tuple(entry.get("kinds", ())),
    )  # fmt: skip


def _declared_definition(name: str, parts: list[str]) -> Definition:
    """A mart column with no formula: its declared meaning."""
    model = _declared().get(parts[1]) if len(parts) == 3 and parts[0] == "marts" else None
    column = model.column(parts[2]) if model and model.column("month") else None
    if model is None or column is None:
        shown = printable(name[:120]) + ("..." if len(name) > 120 else "")
        raise ExplainError(
            f"{shown}: no explanation for it: not a column of a mart with a row a month (docs/mart-columns.md lists "
            f"them); the columns with a formula are {', '.join(explained_columns())}"
        )
    return Definition(mart=parts[1], column=parts[2], title=parts[2], words=column.meaning, formula="", letters=())


def explain(con: duckdb.DuckDBPyConnection, name: str, month: str, key: dict[str, str]) -> Explanation:
    """The explanation of column ``name`` for ``month`` (YYYY-MM) and the row ``key`` picks."""
    base = definition(name)
    row = _row(con, base.mart, month, key)
    d = definition(name, row)
    explanation = Explanation(
        definition=d,
        month=month,
        key={k: row[k] for k in _keys(d.mart)},
        value=row[d.column],
        values={letter.symbol: row[letter.column] for letter in d.letters},
    )
    if explanation.value is None and row.get("verdict") is not None:
        explanation.verdict = _verdict_words(con, row["verdict"])
    start = dt.datetime.fromisoformat(f"{month}-01")
    end = (start + dt.timedelta(days=32)).replace(day=1)
    names, rows = run_query(con, "month_files", {"month_start": start, "month_end": end})
    kinds = {k for letter in d.letters for k in letter.kinds} | set(d.kinds)
    for r in (dict(zip(names, r)) for r in rows):
        if r["kind"] in kinds:
            explanation.files.setdefault(r["kind"], []).append(r)
    return explanation


def _verdict_words(con: duckdb.DuckDBPyConnection, verdict: str) -> str:
    """The verdict as the report's headline says it, and when the break-even gives it (its name alone in a ledger
    without the declared verdicts)."""
    if not table_exists(con, "staging", "stg_ledger__verdicts", "VIEW"):
        return verdict
    found = dict_rows(con, "SELECT headline, given_when FROM staging.stg_ledger__verdicts WHERE verdict = ?", [verdict])
    if not found:
        return verdict
    headline, when = found[0]["headline"], found[0]["given_when"]
    # when the headline already says the condition, only what the condition adds in brackets follows it
    said = when.split(" (", 1)[0]
    rest = when[len(said) :].strip() if said.lower() in headline.lower() else f"({when})"
    return f"{headline} {rest}".strip()


def _row(con: duckdb.DuckDBPyConnection, mart: str, month: str, key: dict[str, str]) -> dict[str, Any]:
    keys = _keys(mart)
    unknown = sorted(set(key) - set(keys))
    if unknown:
        raise ExplainError(
            f"--key {unknown[0]}: marts.{mart} has no such key"
            + (f" (its key: {', '.join(keys)})" if keys else " (it has one row a month)")
        )
    # the mart and key names are this module's own (checked above), the values are bound
    where = " AND ".join(["month = CAST(? AS DATE)", *(f"{k} = ?" for k in key)])
    rows = dict_rows(con, f"SELECT * FROM marts.{mart} WHERE {where}", [f"{month}-01", *key.values()])
    if not rows:
        shown = "".join(f", {k} {v}" for k, v in key.items())
        raise ExplainError(f"marts.{mart} has no row for {month}{shown}")
    if len(rows) > 1:
        choices = "; ".join(", ".join(f"{k}={r[k]}" for k in keys) for r in rows)
        raise ExplainError(f"marts.{mart} has {len(rows)} rows for {month}: pick one with --key ({choices})")
    return rows[0]


def number(value: Any) -> str:
    """A value as stored, with thousands separators: every digit the mart holds, so the formula recomputes."""
    if value is None:
        return "(none)"
    if isinstance(value, Decimal):
        return f"{value:,f}"
    if isinstance(value, float):
        return f"{value:,.15g}" if abs(value) >= 1 else repr(value)
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def explanation_lines(e: Explanation) -> list[str]:
    """The explanation for a terminal."""
    d = e.definition
    where = "".join(f", {k} {v}" for k, v in e.key.items())
    lines = [f"marts.{d.mart}.{d.column}, {e.month}{where}", f"{d.title}: {d.words}", ""]
    verdict = [f"  the month's verdict: {e.verdict}"] if e.verdict else []
    if d.letters:
        lines += [f"  {d.formula}", f"  = {e.with_values}", f"  = {number(e.value)}", *verdict, ""]
        for letter in d.letters:
            lines.append(f"  {letter.symbol} = {number(e.values[letter.symbol])}: {letter.words} ({letter.column})")
            lines += _file_lines(e, letter.kinds)
    elif d.formula:
        lines += [f"  {d.formula}", f"  = {number(e.value)}", *verdict, ""]
        lines += _file_lines(e, d.kinds)
    else:
        lines += [f"  = {number(e.value)}", *verdict]
    return lines


def _file_lines(e: Explanation, kinds: tuple[str, ...]) -> list[str]:
    lines = []
    for kind in kinds:
        for f in e.files.get(kind, []):
            rows = counted(f["rows"], "row")
            where = ""
            if f["lines"]:
                where = f", line{'s' if len(f['lines']) > 1 else ''} {', '.join(map(str, f['lines']))}"
            lines.append(f"      {kind}: {f['path']} (sha256 {f['sha256']}; {rows}{where})")
    if not any(e.files.get(k) for k in kinds):
        lines.append(f"      (no landing file of {', '.join(kinds)} fed this month)")
    return lines


def explanation_json(e: Explanation) -> dict[str, Any]:
    from pipeline.base.query import jsonable

    d = e.definition
    return {
        "column": f"marts.{d.mart}.{d.column}",
        "month": e.month,
        "key": e.key,
        "title": d.title,
        "definition": d.words,
        "formula": d.formula or None,
        "formula_with_values": e.with_values,
        "value": jsonable(e.value),
        "verdict_when_missing": e.verdict,
        "terms": [
            {
                "letter": letter.symbol,
                "column": letter.column,
                "value": jsonable(e.values[letter.symbol]),
                "definition": letter.words,
                "files": [{**f, "kind": kind} for kind in letter.kinds for f in e.files.get(kind, [])],
            }
            for letter in d.letters
        ],  # fmt: skip
        "files": [{**f} for kind in d.kinds for f in e.files.get(kind, [])],
    }


def report_definitions() -> list[tuple[str, str, str]]:
    """(title, formula with its letters said, meaning) of every column explained, for the report's appendix."""
    out = []
    for name in explained_columns():
        d = definition(name)
        said = "; ".join(f"{letter.symbol}: {letter.words}" for letter in d.letters)
        out.append((d.title, f"{d.formula}" + (f" ({said})" if said else ""), d.words))
    return out
