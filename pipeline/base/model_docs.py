"""The marts described for people, made from the models' declarations (``-- grain``, ``-- description``,
``-- column NAME TYPE: MEANING``): the contract table of docs/marts.md and the column reference docs/mart-columns.md.
A test holds both files to what this module makes, so the docs cannot drift from the models."""

from __future__ import annotations

from pipeline.base.models import Model

#: docs/marts.md's generated table sits between these lines
BEGIN, END = "<!-- marts:begin -->\n", "<!-- marts:end -->"
COLUMNS_DOC = "mart-columns.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _grain(m: Model) -> str:
    return m.grain.removeprefix("one row per ").strip()


def _marts(models: list[Model]) -> list[Model]:
    return sorted((m for m in models if m.layer == "marts"), key=lambda m: m.name)


def contract_markdown(models: list[Model]) -> str:
    """The table of the marts: each one's grain and the columns beside its key, in the mart's order."""
    lines = ["| mart | grain | columns |", "|---|---|---|"]
    for m in _marts(models):
        rest = [c.name for c in m.columns if c.name not in m.unique_key]
        # a heading's anchor, as Markdown renderers make it: lower case, the dot and backticks dropped
        link = f"{COLUMNS_DOC}#marts{m.name}"
        lines.append(f"| [`{m.qualified}`]({link}) | {_cell(_grain(m))} | {', '.join(rest)} |")
    return "\n".join(lines) + "\n"


def columns_markdown(models: list[Model]) -> str:
    """Every mart's description, grain and key, and a table of its columns: name, DuckDB type, meaning."""
    out = [
        "# The marts' columns",
        "",
        "[Back to the marts](marts.md)",
        "",
        "Made from the models' declarations in `sql/marts/` (`.venv/bin/python scripts/model_docs.py` writes it",
        "again); the same meanings are the columns' `COMMENT`s in the ledger. The published file holds a `HUGEINT`",
        "column (a whole number beyond 64 bits) as `DECIMAL(38,0)`.",
    ]
    for m in _marts(models):
        key = f"; key: {', '.join(m.unique_key)}" if m.unique_key else ""
        out += ["", f"## `{m.qualified}`", "", m.description, "", f"One row per {_grain(m)}{key}.", ""]
        out += ["| column | type | meaning |", "|---|---|---|"]
        out += [f"| `{c.name}` | `{c.type}` | {_cell(c.meaning)} |" for c in m.columns]
    return "\n".join(out) + "\n"
