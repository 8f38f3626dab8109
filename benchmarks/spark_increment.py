"""One more day on Spark against a full Spark build, in the same run, and the marts of both engines compared.

    python -m benchmarks.spark_increment --requests 10000000 --work /tmp/spark-increment

(1) ``costledger sample --requests N --months 1`` and one ``costledger nightly`` on DuckDB;
(2) on a copy of that ledger, a full build on Spark (``build --engine spark``: no earlier Spark build);
(3) one more day (``sample --extra-day``) loaded into that copy by a nightly on Spark, which goes on from (2);
(4) the same day loaded into the DuckDB ledger by a nightly on DuckDB, and every mart and intermediate of the two
    compared value for value (``scripts/marts_equal.py``).

Each step runs in its own process, wall seconds from the parent's clock; the incremental models' own seconds come from
the ledger's ``meta.run_steps``. Needs pyspark and Java (``pip install costledger[spark]``). Not part of the tests.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from benchmarks.benchmark import machine
from pipeline.base.models import discover
from scripts.marts_equal import compare, copy_ledger


def _run(*args: object) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *map(str, args)], capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 4):  # 4: a reconciliation mismatch, which the sample's invoices may show
        raise SystemExit(f"costledger {' '.join(map(str, args))} failed (exit {done.returncode}):\n{done.stderr}")
    return seconds, done


def _model_seconds(db: Path) -> dict[str, float]:
    """The last build's seconds per incremental model (``meta.run_steps`` of the last run)."""
    incremental = [m.qualified for m in discover() if m.incremental]
    con = duckdb.connect(str(Path(f"{db}.d") / "work.duckdb"), read_only=True)
    try:
        rows = con.execute(
            "SELECT name, seconds FROM meta.run_steps WHERE step = 'build' AND name IN (SELECT unnest(?)) "
            "AND run_id = (SELECT run_id FROM meta.runs ORDER BY started_at DESC LIMIT 1)",
            [incremental],
        ).fetchall()
    finally:
        con.close()
    return {name: seconds for name, seconds in rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000_000)
    parser.add_argument("--work", type=Path, required=True, help="a folder for the data and ledgers (emptied)")
    parser.add_argument("--memory-limit", default="4GB")
    args = parser.parse_args()
    work: Path = args.work
    shutil.rmtree(work, ignore_errors=True)
    landing = work / "landing"
    work.mkdir(parents=True)
    on_duckdb, on_spark = work / "duckdb" / "ledger.duckdb", work / "spark" / "ledger.duckdb"
    settings, spark_settings = work / "duckdb.toml", work / "spark.toml"
    settings.write_text(f'[ledger]\nmemory_limit = "{args.memory_limit}"\n', encoding="utf-8")
    spark_settings.write_text(
        settings.read_text(encoding="utf-8") + '\n[engine]\nname = "spark"\nmaster = "local[2]"\n', encoding="utf-8"
    )
    print(machine())
    n = args.requests
    seconds, _ = _run("sample", "--requests", n, "--months", 1, "--out", landing, "--format", "parquet")
    print(f"(1) sample of {n:,} requests: {seconds:.1f} s")
    on_duckdb.parent.mkdir()
    seconds, _ = _run("nightly", landing, "--db", on_duckdb, "--settings", settings)
    print(f"(1) nightly on DuckDB: {seconds:.1f} s")
    on_spark.parent.mkdir()
    on_spark = copy_ledger(on_duckdb, on_spark.parent)
    full, _ = _run("build", "--engine", "spark", "--db", on_spark, "--settings", spark_settings)
    full_models = _model_seconds(on_spark)
    print(f"(2) full build on Spark: {full:.1f} s")
    _run("sample", "--requests", n, "--months", 1, "--out", landing, "--format", "parquet", "--extra-day")
    day, done = _run("nightly", landing, "--db", on_spark, "--settings", spark_settings, "--json")
    summary = json.loads(done.stdout)
    day_models = _model_seconds(on_spark)
    print(f"(3) one more day on Spark (nightly, its ingest included): {day:.1f} s")
    print(f"    files loaded {summary['files_loaded']}, models rebuilt in full: {summary['models_rebuilt_in_full']}")
    print("    | incremental model | full build | one more day |")
    for name in sorted(full_models):
        print(f"    | {name} | {full_models[name]:.1f} s | {day_models.get(name, float('nan')):.1f} s |")
    seconds, _ = _run("nightly", landing, "--db", on_duckdb, "--settings", settings)
    print(f"(4) one more day on DuckDB: {seconds:.1f} s")
    work_files = [str(Path(f"{db}.d") / "work.duckdb") for db in (on_duckdb, on_spark)]
    results = compare(*work_files, ["marts", "intermediate"])
    differs = [f"{table}: {detail}" for table, same, detail in results if not same]
    print(f"(4) {len(results) - len(differs)} of {len(results)} marts and intermediates equal")
    for line in differs:
        print(f"    differs: {line}")
    if differs:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
