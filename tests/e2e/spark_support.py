"""What the Spark tests share: whether Spark can run here, a build of a ledger's copy on Spark, and the comparison of
its marts and intermediates with DuckDB's, value for value (scripts/marts_equal.py)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from pipeline.base.models import discover
from pipeline.transform.spark.session import java_present
from scripts.marts_equal import compare, copy_ledger
from tests.conftest import ROOT, cli

_missing = [
    why
    for why, ok in (("pyspark", importlib.util.find_spec("pyspark") is not None), ("Java", java_present()))
    if not ok
]
if _missing and os.environ.get("COSTLEDGER_REQUIRE_SPARK"):
    raise RuntimeError(f"COSTLEDGER_REQUIRE_SPARK is set but {' and '.join(_missing)} is missing")

#: every Spark test: skipped without pyspark or Java, and run in one pytest worker (xdist group "spark"), one after
#: another, so no two JVMs share the machine's two cores
MARKS = [
    pytest.mark.skipif(bool(_missing), reason=f"the Spark engine needs {' and '.join(_missing)}"),
    pytest.mark.xdist_group("spark"),
]


def every_model() -> set[str]:
    return {m.qualified for m in discover() if m.layer in ("intermediate", "marts")}


def spark_copy(
    db: Path, folder: Path, settings: Path = ROOT / "costledger.toml", run: Callable[..., Any] = cli
) -> tuple[Path, Path]:
    """Two copies of the ledger ``db``: the first as DuckDB built it, the second rebuilt on Spark by ``run`` (the
    command line in this process, or another's)."""
    (folder / "duckdb").mkdir(parents=True)
    (folder / "spark").mkdir()
    on_duckdb = copy_ledger(db, folder / "duckdb")
    on_spark = copy_ledger(db, folder / "spark")
    res = run("build", "--engine", "spark", "--db", on_spark, "--settings", settings)
    # exit 4: the demo's cometapi invoices are 3 % above metered (a reconciliation mismatch the build reports)
    assert res.exit_code in (0, 4), res.output
    assert f"built {len(discover())} models" in res.output
    return Path(f"{on_duckdb}.d") / "work.duckdb", Path(f"{on_spark}.d") / "work.duckdb"


def assert_equal(before: Path, after: Path) -> None:
    results = compare(str(before), str(after), ["marts", "intermediate"])
    differs = [f"{t}: {detail}" for t, same, detail in results if not same]
    assert differs == []
    # every model was compared: the unpublished intermediates are views over the Spark build's Parquet
    assert {t for t, _, _ in results} == every_model()
