"""Write the docs made from the models' declarations: the contract table of docs/marts.md, docs/mart-columns.md and
docs/model-columns.md.

    .venv/bin/python scripts/model_docs.py

A test holds them to what ``pipeline.base.model_docs`` makes; run this after changing a model's header.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.base.model_docs import generated_docs
from pipeline.base.models import discover

DOCS = Path(__file__).resolve().parents[1] / "docs"


def main() -> None:
    docs = generated_docs(discover(), (DOCS / "marts.md").read_text(encoding="utf-8"))
    for name, text in docs.items():
        (DOCS / name).write_text(text, encoding="utf-8")
    print("wrote " + ", ".join(str(DOCS / name) for name in docs))


if __name__ == "__main__":
    main()
