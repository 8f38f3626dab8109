"""The report's figures for finance: one section per table, exact decimals, as JSON, a folder of CSV files or an
XLSX workbook (one sheet per section).

The figures are the marts' own (``ReportData``); nothing is computed here. Decimals stay exact: JSON carries them as
strings, CSV as their full decimal text, XLSX as a number when it has at most 15 significant digits, else as text.
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
from pathlib import Path
from typing import Any, BinaryIO

from pipeline.base.query import csv_cell, jsonable
from pipeline.serve.report import ReportData
from pipeline.serve.words import headline

#: the sections, in the report's order: (name, what it holds)
SECTIONS = {
    "first_screen": "the verdict and what it rests on, in sentences",
    "break_even": "the month's row of marts.monthly_break_even",
    "verdict_sensitivity": "break-even and the verdict under each named assumption",
    "routes": "the month by route (the cash view)",
    "self_hosted_cost": "what self-hosting cost, by cluster and category",
    "utilisation": "each cluster's hours, capacity and token utilisation",
    "reconciliation": "invoices against the request logs, by provider",
    "invoices": "the invoices that count this month",
    "planning": "the month's break-even as a cluster rate",
    "chargeback": "who spent what: the month's spend by route, team and cost class, to the cent",
}


def sections(data: ReportData) -> dict[str, list[dict[str, Any]]]:
    """Each section's rows (dicts of column -> value) for the report's month."""
    be = {k: v for k, v in data.be_row.items() if k != "verdict_sensitivity"}
    return {
        "first_screen": [{"line": i + 1, "text": line} for i, line in enumerate(headline(data))],
        "break_even": [be],
        "verdict_sensitivity": [{"month": data.be.month, **r} for r in data.be.verdict_sensitivity or []],
        "routes": [r.as_row() for r in data.routes],
        "self_hosted_cost": data.month_costs,
        "utilisation": data.utilisation,
        "reconciliation": [r.as_row() for r in data.reconciliation],
        "invoices": data.invoices,
        "planning": data.measured_plan,
        "chargeback": data.chargeback,
        "hybrid_plan": [r.as_row() for r in data.hybrid],
        "break_even_curve": [p.as_row() for p in data.curve],
        "workload_moves": [m.as_row() for m in data.moves],
        "cost_bridge": data.bridge,
        "gate_comparison": data.gate.comparison if data.gate else [],
        "gate_criteria": [c.as_row() for c in data.gate.criteria] if data.gate else [],
    }


def as_json(data: ReportData) -> str:
    """One JSON document: the month and each section's rows (decimals as strings, never through float)."""
    doc = {"month": data.month, "sections": sections(data)}
    return json.dumps(jsonable(doc), indent=1, ensure_ascii=False) + "\n"


def write_csv_folder(data: ReportData, folder: Path) -> list[Path]:
    """One CSV file per section in ``folder`` (created); returns the files written. Text a spreadsheet would run as
    a formula is guarded with a leading ``'``."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in sections(data).items():
        path = folder / f"{name}.csv"
        with path.open("w", encoding="utf-8", newline="") as f:
            _write_csv_rows(f, rows)
        written.append(path)
    return written


def csv_sections_text(data: ReportData) -> str:
    """Every section as CSV in one text (for standard output): each after a line ``# <section>``, apart by a blank
    line."""
    parts = []
    for name, rows in sections(data).items():
        buffer = io.StringIO(newline="")
        _write_csv_rows(buffer, rows)
        parts.append(f"# {name}\n{buffer.getvalue()}")
    return "\n".join(parts)


def _write_csv_rows(f: Any, rows: list[dict[str, Any]]) -> None:
    columns = list(rows[0]) if rows else ["(no rows)"]
    w = csv.writer(f)
    w.writerow(columns)
    for r in rows:
        w.writerow([csv_cell(r.get(c), spreadsheet_safe=True) for c in columns])


def _xlsx_value(value: Any) -> Any:
    """A cell value: a decimal as a number, always, so that a spreadsheet sums it (a spreadsheet keeps 15 significant
    digits of a number: a figure with more reads back as its nearest double; the exact decimals are in the CSV and
    JSON formats); lists and structs as JSON text."""
    if isinstance(value, decimal.Decimal) and value.is_finite():
        return float(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(jsonable(value))
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.replace(tzinfo=None)  # XLSX has no time zones; the ledger's times are UTC
    return value


def write_xlsx(data: ReportData, path: Path | BinaryIO) -> None:
    """One sheet per section, a header row first; text a spreadsheet would run as a formula is written as text."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for name, rows in sections(data).items():
        sheet = book.create_sheet(title=name[:31])
        columns = list(rows[0]) if rows else ["(no rows)"]
        sheet.append(columns)
        for r in rows:
            sheet.append([_xlsx_value(r.get(c)) for c in columns])
        for row in sheet.iter_rows(min_row=2):
            for cell in row:
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    cell.data_type = "s"  # a value, never a formula
    if isinstance(path, Path):
        path.parent.mkdir(parents=True, exist_ok=True)
    book.save(path)
