"""What a DuckDB client reads in the published file besides the rows: each model's description and each column's
meaning, as the model's file declares them, for ``duckdb_tables()``, ``duckdb_views()`` and ``duckdb_columns()``."""

from __future__ import annotations

import re

from tests.conftest import ROOT, open_published

#: a declared column with its meaning (``-- column NAME TYPE: meaning``), read from the file's text
DECLARED = re.compile(r"^-- column (\w+) [^:]+: (.+)$")


def _declared(layer: str) -> dict[tuple[str, str], str]:
    """(model, column) -> the meaning its file gives it, for every model of ``layer`` in sql/."""
    found = {}
    for path in sorted((ROOT / "sql" / layer).glob("*.sql")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if m := DECLARED.match(line):
                found[(path.stem, m.group(1))] = m.group(2).strip()
    return found


def test_every_published_column_carries_the_meaning_its_model_declares(demo_db):
    con = open_published(demo_db)
    try:
        comments = {
            (schema, table, column): comment
            for schema, table, column, comment in con.execute(
                "SELECT schema_name, table_name, column_name, comment FROM duckdb_columns() "
                "WHERE database_name = current_database()"
            ).fetchall()
        }
        described = {
            (schema, name): comment
            for schema, name, comment in con.execute(
                "SELECT schema_name, table_name, comment FROM duckdb_tables() WHERE database_name = current_database() "
                "UNION ALL SELECT schema_name, view_name, comment FROM duckdb_views() "
                "WHERE database_name = current_database() AND NOT internal"
            ).fetchall()
        }
    finally:
        con.close()
    checked = 0
    for layer in ("staging", "intermediate", "marts"):
        for (model, column), meaning in _declared(layer).items():
            if (layer, model, column) in comments:  # a model left out of the published file has no columns there
                assert comments[layer, model, column] == meaning, f"{layer}.{model}.{column}"
                checked += 1
    # every mart is published, with its description, and the gate's measurements (views) are there too
    for path in (ROOT / "sql" / "marts").glob("*.sql"):
        description = re.search(r"^-- description: (.+)$", path.read_text(encoding="utf-8"), re.M).group(1)
        assert described[("marts", path.stem)].startswith(description.strip()), path.stem
    assert described[("intermediate", "int_gate_paired_acceptance")]
    assert checked > 500, checked  # not a vacuous pass: some 600 declared meanings are published
