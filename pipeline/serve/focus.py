"""The ledger's own spend as FOCUS 1.2 (``costledger export focus``): the rows of ``sql/queries/focus_export.sql``,
written as CSV or Parquet.

CSV writes every date/time as FOCUS's 'YYYY-MM-DDTHH:mm:ssZ' and every amount as its exact decimal text; a text cell
that a spreadsheet would run as a formula (it starts with =, +, -, @, a tab or a carriage return: a team named
``=cmd|' /C calc'!A0``) gets a leading ``'``, as every CSV the ledger writes. Parquet keeps DECIMAL(38, 12) amounts,
UTC timestamps and text as it is. A file is written whole or not at all: to a temporary file beside it,
renamed over the target when complete."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.base.query import FORMULA_PATTERN, QUERIES

if TYPE_CHECKING:
    import duckdb
    import polars as pl

#: the FOCUS 1.2 columns the specification marks mandatory, all in every export
MANDATORY = (
    "BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodEnd",
    "BillingPeriodStart", "ChargeCategory", "ChargeClass", "ChargeDescription", "ChargePeriodEnd", "ChargePeriodStart",
    "ContractedCost", "EffectiveCost", "InvoiceIssuerName", "ListCost", "PricingQuantity", "PricingUnit",
    "ProviderName", "PublisherName", "ServiceCategory", "ServiceName",
)  # fmt: skip

FORMATS = ("csv", "parquet")
_TIMES = ("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd")


def focus_frame(con: duckdb.DuckDBPyConnection, month: str, tag_key: str) -> pl.DataFrame:
    """The month's FOCUS rows (``month``: YYYY-MM) from the published ledger ``con`` (with the SQL macros defined)."""
    import polars as pl

    sql = (QUERIES / "focus_export.sql").read_text(encoding="utf-8")
    return pl.from_arrow(con.sql(sql, params={"month": f"{month}-01", "tag_key": tag_key}).to_arrow_table())


def format_for(path: Path) -> str:
    """The file format a path's suffix names (``.csv`` or ``.parquet``)."""
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ValueError(f"{path}: the export is written as .csv or .parquet, not {path.suffix or 'no suffix'}")
    return fmt


def write_focus(frame: pl.DataFrame, path: Path) -> None:
    """Write the rows to ``path`` (its suffix picks CSV or Parquet), whole or not at all."""
    import polars as pl

    fmt = format_for(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        if fmt == "csv":
            times = [pl.col(c).dt.strftime("%Y-%m-%dT%H:%M:%SZ") for c in _TIMES]
            texts = [c for c, t in frame.schema.items() if t == pl.String and c not in _TIMES]
            safe = [
                pl.when(pl.col(c).str.contains(FORMULA_PATTERN)).then("'" + pl.col(c)).otherwise(pl.col(c)).alias(c)
                for c in texts
            ]
            frame.with_columns(times + safe).write_csv(tmp)
        else:
            frame.with_columns([pl.col(c).dt.replace_time_zone("UTC") for c in _TIMES]).write_parquet(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
