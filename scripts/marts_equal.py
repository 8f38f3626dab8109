"""Are two ledgers' marts equal, table by table? (the check for behaviour-preserving changes)

    .venv/bin/python scripts/marts_equal.py BEFORE.duckdb AFTER.duckdb [--schema marts --schema intermediate]

Both files are opened read-only. For every table of the schemas (default: marts) in
either file, the rows must be the same multiset: ``EXCEPT ALL`` both ways is empty and
the counts agree (DECIMAL columns compare exactly, so "equal" is equal to the cent and
beyond). Columns only one side has are reported, not compared. Exit 0 when all are
equal, 1 otherwise, with one line per table.
"""

from __future__ import annotations

import argparse
import sys

import duckdb


def tables(con: duckdb.DuckDBPyConnection, db: str, schemas: list[str]) -> set[str]:
    rows = con.execute(
        "SELECT schema_name || '.' || table_name FROM duckdb_tables() "
        "WHERE database_name = ? AND schema_name IN (SELECT unnest(?))",
        [db, schemas],
    ).fetchall()
    return {r[0] for r in rows}


def columns(con: duckdb.DuckDBPyConnection, db: str, table: str) -> list[str]:
    schema, name = table.split(".")
    return [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE database_name = ? AND schema_name = ? AND table_name = ? "
            "ORDER BY column_index",
            [db, schema, name],
        ).fetchall()
    ]


def compare(before: str, after: str, schemas: list[str]) -> list[tuple[str, bool, str]]:
    con = duckdb.connect()
    con.execute("ATTACH ? AS a (READ_ONLY)", [before])
    con.execute("ATTACH ? AS b (READ_ONLY)", [after])
    out = []
    for table in sorted(tables(con, "a", schemas) | tables(con, "b", schemas)):
        ca, cb = columns(con, "a", table), columns(con, "b", table)
        if not ca or not cb:
            out.append((table, False, f"only in {'after' if not ca else 'before'}"))
            continue
        common = [c for c in ca if c in cb]
        cols = ", ".join(f'"{c}"' for c in common)
        na, nb = (con.execute(f"SELECT count(*) FROM {side}.{table}").fetchall()[0][0] for side in ("a", "b"))
        diff = con.execute(
            f"SELECT (SELECT count(*) FROM (SELECT {cols} FROM a.{table} EXCEPT ALL SELECT {cols} FROM b.{table})), "
            f"(SELECT count(*) FROM (SELECT {cols} FROM b.{table} EXCEPT ALL SELECT {cols} FROM a.{table}))"
        ).fetchall()[0]
        extra = sorted(set(ca) ^ set(cb))
        note = f"; columns on one side only (not compared): {', '.join(extra)}" if extra else ""
        same = na == nb and diff == (0, 0)
        out.append((table, same, f"{na} vs {nb} rows, {diff[0]} only before, {diff[1]} only after{note}"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument(
        "--schema", action="append", dest="schemas", help="schema to compare (repeatable; default marts)"
    )
    args = parser.parse_args(argv)
    results = compare(args.before, args.after, args.schemas or ["marts"])
    for table, same, detail in results:
        print(f"{'equal  ' if same else 'DIFFERS'} {table}: {detail}")
    return 0 if results and all(same for _, same, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
