"""Write the docs made from the models' declarations: the contract table of docs/marts.md, docs/mart-columns.md and
docs/model-columns.md.

    .venv/bin/python scripts/model_docs.py

A test holds them to what ``pipeline.base.model_docs`` makes; run this after changing a model's header.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.base.model_docs import (
    BEGIN,
    COLUMNS_DOC,
    END,
    MODELS_DOC,
    columns_markdown,
    contract_markdown,
    models_markdown,
)
from pipeline.base.models import discover

DOCS = Path(__file__).resolve().parents[1] / "docs"


def main() -> None:
    models = discover()
    marts = DOCS / "marts.md"
    text = marts.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    marts.write_text(head + BEGIN + contract_markdown(models) + END + rest.split(END, 1)[1], encoding="utf-8")
    (DOCS / COLUMNS_DOC).write_text(columns_markdown(models), encoding="utf-8")
    (DOCS / MODELS_DOC).write_text(models_markdown(models), encoding="utf-8")
    print(f"wrote {marts}, {DOCS / COLUMNS_DOC} and {DOCS / MODELS_DOC}")


if __name__ == "__main__":
    main()
