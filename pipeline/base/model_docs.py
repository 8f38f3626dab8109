"""The models described for people, made from their declarations (``-- grain``, ``-- description``,
``-- column NAME TYPE: MEANING``): the contract table of docs/marts.md, the marts' column reference
docs/mart-columns.md and the staging and intermediate models' docs/model-columns.md. A test holds the files to what
this module makes, so the docs cannot drift from the models."""

from __future__ import annotations

from pipeline.base.models import Model

#: docs/marts.md's generated table sits between these lines
BEGIN, END = "<!-- marts:begin -->\n", "<!-- marts:end -->"
COLUMNS_DOC = "mart-columns.md"
#: the staging and intermediate models' column reference
MODELS_DOC = "model-columns.md"


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
    intro = [
        "Made from the models' declarations in `sql/marts/` (`.venv/bin/python scripts/model_docs.py` writes it",
        "again); the same meanings are the columns' `COMMENT`s in the ledger. The published file holds a `HUGEINT`",
        "column (a whole number beyond 64 bits) as `DECIMAL(38,0)`.",
    ]
    return _reference("The marts' columns", intro, _marts(models))


def _section(m: Model) -> list[str]:
    """A model's heading, description, grain and key, and a table of its columns: name, DuckDB type, meaning."""
    key = f"; key: {', '.join(m.unique_key)}" if m.unique_key else ""
    out = ["", f"## `{m.qualified}`", "", m.description, "", f"One row per {_grain(m)}{key}.", ""]
    if m.published == "no":
        out += ["In the work file only: the published file does not hold it.", ""]
    out += ["| column | type | meaning |", "|---|---|---|"]
    return out + [f"| `{c.name}` | `{c.type}` | {_cell(c.meaning)} |" for c in m.columns]


def models_markdown(models: list[Model]) -> str:
    """The staging and intermediate models, each as the marts are in ``columns_markdown``, staging first."""
    intro = [
        "What the marts are made from, for ad-hoc SQL: the staging views (the loaded rows typed, in USD) and the",
        "intermediate models (`sql/staging/`, `sql/intermediate/`). Made from their declarations",
        "(`.venv/bin/python scripts/model_docs.py` writes it again); the same meanings are the columns' `COMMENT`s",
        "in the ledger. These models may change between versions ([migration.md](migration.md) says how); the marts",
        "are the contract.",
    ]
    below = sorted((m for m in models if m.layer != "marts"), key=lambda m: (m.layer != "staging", m.name))
    return _reference("The staging and intermediate models' columns", intro, below)


def _reference(title: str, intro: list[str], models: list[Model]) -> str:
    """A column reference: its title, the way back to the marts, ``intro``, then each model's section in order."""
    out = [f"# {title}", "", "[Back to the marts](marts.md)", "", *intro]
    for m in models:
        out += _section(m)
    return "\n".join(out) + "\n"


def generated_docs(models: list[Model], marts_md: str) -> dict[str, str]:
    """Every doc made from the declarations, by its name in docs/, with the text it must hold: ``marts_md`` (the text
    of docs/marts.md) with the contract table in place between BEGIN and END, and the two column references. The
    script writes them, the docs test compares them: one list of what is generated."""
    head, rest = marts_md.split(BEGIN, 1)
    return {
        "marts.md": head + BEGIN + contract_markdown(models) + END + rest.split(END, 1)[1],
        COLUMNS_DOC: columns_markdown(models),
        MODELS_DOC: models_markdown(models),
    }
