"""Are two ledgers' marts equal, table by table? (the check for behaviour-preserving changes, and for the engines)

    .venv/bin/python scripts/marts_equal.py BEFORE.duckdb AFTER.duckdb [--schema marts --schema intermediate]
    .venv/bin/python scripts/marts_equal.py --engines LEDGER.duckdb

Both files are opened read-only. For every table or view of the schemas (default: marts)
in either file, the rows must be the same multiset: ``EXCEPT ALL`` both ways is empty and
the counts agree. DECIMAL, integer, text and time columns compare exactly, so "equal" is
equal to the cent and beyond. DOUBLE columns (ratios and fitted statistics, never money)
compare to 12 significant digits: a floating-point sum depends on the order it adds in,
which differs between engines and between thread counts. Both sides must have the same
columns, of the same type family (``type_family``: any integer type and DECIMAL(p, 0) hold
the same whole numbers; a DECIMAL's precision may differ, not its scale; TIMESTAMP and
TIMESTAMP WITH TIME ZONE differ). Exit 0 when all are equal, 1 otherwise, with one line per
table.

``--engines LEDGER`` builds the ledger's lake twice, with ``costledger build --engine duckdb``
and ``--engine spark``, each in a copy of the ledger in a temporary folder (the lake files
hard-linked, they are read-only), and compares the two work files' marts and
intermediates (the Spark build's unpublished intermediates are views over its Parquet).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import re
import tempfile
from pathlib import Path

import duckdb


def tables(con: duckdb.DuckDBPyConnection, db: str, schemas: list[str]) -> set[str]:
    rows = con.execute(
        "SELECT schema_name || '.' || table_name FROM duckdb_tables() "
        "WHERE database_name = ? AND schema_name IN (SELECT unnest(?)) "
        "UNION SELECT schema_name || '.' || view_name FROM duckdb_views() "
        "WHERE database_name = ? AND schema_name IN (SELECT unnest(?)) AND NOT internal",
        [db, schemas, db, schemas],
    ).fetchall()
    return {r[0] for r in rows}


def columns(con: duckdb.DuckDBPyConnection, db: str, table: str) -> dict[str, str]:
    """Column name -> its type."""
    schema, name = table.split(".")
    return dict(
        con.execute(
            "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = ? AND schema_name = ? "
            "AND table_name = ? ORDER BY column_index",
            [db, schema, name],
        ).fetchall()
    )


#: integer types and DECIMAL(p, 0): whole numbers, the same value in any of them (DuckDB's HUGEINT is Spark's
#: DECIMAL(38, 0), its BIGINT Spark's LONG, a count may be either)
_WHOLE = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT")
_DECIMAL = re.compile(r"^DECIMAL\((\d+),\s*(\d+)\)$")


def type_family(data_type: str) -> str:
    """What a column's type says of its values, for comparing two engines' tables: whole numbers of any integer type or
    DECIMAL(p, 0) are one family, a DECIMAL is its scale (its precision only bounds it), DOUBLE and FLOAT are one;
    every other type is itself (TIMESTAMP and TIMESTAMP WITH TIME ZONE differ: the same digits, another instant)."""
    t = data_type.upper().strip()
    m = _DECIMAL.match(t)
    if t in _WHOLE or (m and m.group(2) == "0"):
        return "whole number"
    if m:
        return f"DECIMAL(*, {m.group(2)})"
    if t in ("DOUBLE", "FLOAT"):
        return "floating point"
    return t


def _compared(name: str, types: set[str]) -> str:
    """A column as compared: a DOUBLE to 12 significant digits."""
    if types & {"DOUBLE", "FLOAT"}:
        return f"""CASE WHEN isfinite("{name}") THEN format('{{:.12g}}', "{name}") ELSE CAST("{name}" AS VARCHAR) END"""
    return f'"{name}"'


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
        cols = ", ".join(_compared(c, {ca[c], cb[c]}) for c in common)
        na, nb = (con.execute(f"SELECT count(*) FROM {side}.{table}").fetchall()[0][0] for side in ("a", "b"))
        diff = con.execute(
            f"SELECT (SELECT count(*) FROM (SELECT {cols} FROM a.{table} EXCEPT ALL SELECT {cols} FROM b.{table})), "
            f"(SELECT count(*) FROM (SELECT {cols} FROM b.{table} EXCEPT ALL SELECT {cols} FROM a.{table}))"
        ).fetchall()[0]
        extra = sorted(set(ca) ^ set(cb))
        retyped = [f"{c} {ca[c]} vs {cb[c]}" for c in common if type_family(ca[c]) != type_family(cb[c])]
        note = f"; columns on one side only: {', '.join(extra)}" if extra else ""
        note += f"; types that differ: {', '.join(retyped)}" if retyped else ""
        same = na == nb and diff == (0, 0) and not extra and not retyped
        out.append((table, same, f"{na} vs {nb} rows, {diff[0]} only before, {diff[1]} only after{note}"))
    return out


def copy_ledger(db: Path, to: Path) -> Path:
    """A copy of a ledger (its published file and state folder) in the folder ``to``, of the same name (the published
    file and its snapshots read the lake by paths that begin with it); the lake files, written once and read-only, are
    hard links."""
    state = Path(f"{db}.d")
    copy = to / db.name
    published = db.exists()  # a ledger never published (a test's work file alone) has its state folder only
    if published:
        shutil.copy2(db, copy)

    def link_or_copy(src: str, dst: str) -> None:
        if Path(src).is_relative_to(state / "lake"):
            try:
                os.link(src, dst)
                return
            except OSError:  # another file system
                pass
        shutil.copy2(src, dst)

    shutil.copytree(
        state, Path(f"{copy}.d"), copy_function=link_or_copy, ignore=shutil.ignore_patterns("spark", "lock")
    )
    # the published file is a hard link to its snapshot (a rollback tells the published snapshot by it): so is the copy
    for snap in sorted((state / "snapshots").glob("*.duckdb")) if published else []:
        if snap.samefile(db):
            copy.unlink()
            os.link(Path(f"{copy}.d") / "snapshots" / snap.name, copy)
    return copy


def build_with_engines(db: Path, folder: Path, engines: tuple[str, ...] = ("duckdb", "spark")) -> list[Path]:
    """Build a copy of the ledger on each engine (``costledger build --engine E``); returns their work files."""
    command = Path(sys.executable).with_name("costledger")
    works = []
    for engine in engines:
        (folder / engine).mkdir(parents=True, exist_ok=True)
        copy = copy_ledger(db, folder / engine)
        run = subprocess.run(
            [str(command), "build", "--engine", engine, "--db", str(copy)], capture_output=True, text=True, check=False
        )
        if run.returncode not in (0, 4):  # 4: a reconciliation mismatch, which the build reports and publishes
            raise SystemExit(
                f"costledger build --engine {engine} failed (exit {run.returncode}):\n{run.stderr[-3000:]}"
            )
        works.append(Path(f"{copy}.d") / "work.duckdb")
    return works


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", nargs="?")
    parser.add_argument("after", nargs="?")
    parser.add_argument(
        "--schema", action="append", dest="schemas", help="schema to compare (repeatable; default marts)"
    )
    parser.add_argument(
        "--engines", metavar="LEDGER", help="build LEDGER's lake on DuckDB and on Spark and compare the two builds"
    )
    args = parser.parse_args(argv)
    if args.engines:
        with tempfile.TemporaryDirectory(prefix="marts-equal-") as folder:
            before, after = build_with_engines(Path(args.engines), Path(folder))
            return _report(compare(str(before), str(after), args.schemas or ["marts", "intermediate"]))
    if not (args.before and args.after):
        parser.error("give BEFORE and AFTER ledgers, or --engines LEDGER")
    return _report(compare(args.before, args.after, args.schemas or ["marts"]))


def _report(results: list[tuple[str, bool, str]]) -> int:
    for table, same, detail in results:
        print(f"{'equal  ' if same else 'DIFFERS'} {table}: {detail}")
    return 0 if results and all(same for _, same, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
