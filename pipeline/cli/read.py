"""Commands that read the published ledger: sql, status, report, verify."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import typer
from rich.markup import escape

from pipeline.cli import toc
from pipeline.base.errors import ExitCode
from pipeline.cli.common import (
    DbOpt,
    JsonOpt,
    SettingsOpt,
    console,
    error,
    read_settings,
    open_read,
    out,
)

app = typer.Typer()  # merged into the root app; each command names its help panel


_SqlQuery = Annotated[str, typer.Argument(help='A SQL query, e.g. "select * from marts.monthly_break_even".')]
_SqlFmt = Annotated[Literal["table", "csv", "json"], typer.Option("--format", help="Output format.")]
_SqlLimit = Annotated[int, typer.Option(help="Rows shown at most in table format (csv/json print all).")]
_SqlSpreadsheetSafe = Annotated[
    bool,
    typer.Option(
        help="csv: text starting with = + - @ (a formula to a spreadsheet) gets a leading ' ; "
        "--no-spreadsheet-safe writes it exactly."
    ),
]


@app.command(rich_help_panel=toc.panel("sql"))
def sql(
    query: _SqlQuery,
    db: DbOpt = None,
    settings: SettingsOpt = None,
    fmt: _SqlFmt = "table",
    limit: _SqlLimit = 200,
    spreadsheet_safe: _SqlSpreadsheetSafe = True,
) -> None:
    """Run ad-hoc SQL against the published ledger, read-only and sandboxed.

    Only queries run (SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN [ANALYZE] of a query, CALL of a
    table function), judged from DuckDB's parse tree; COPY, EXPORT, ATTACH, INSTALL/LOAD, SET, PRAGMA,
    DDL and DML are refused before anything runs. No file outside the ledger's lake can be read, none
    can be written. A query stops after \\[sql] timeout_seconds and uses at most \\[sql] memory_limit, and
    spills at most \\[sql] max_spill to a folder of its own. csv and json stream (constant memory).
    Several statements separated by `;` each show their result. Exit 2 when a statement is refused,
    1 when DuckDB reports an error or the query times out.
    """
    import shutil
    import tempfile

    import duckdb

    from pipeline.storage.db import ReadLimits
    from pipeline.serve.shell import QueryTimeout, RefusedStatement

    s = read_settings(settings, db)
    spill = Path(tempfile.mkdtemp(prefix="costledger-sql-"))
    try:
        con = open_read(s, ReadLimits(s.sql_memory_limit, spill, s.sql_max_spill))
        try:
            _print_results(
                con,
                query,
                timeout=s.sql_timeout_seconds,
                fmt=fmt,
                limit=limit,
                spreadsheet_safe=spreadsheet_safe,
                on_kill=lambda: shutil.rmtree(spill, ignore_errors=True),
            )
        except RefusedStatement as exc:
            console.print(f"[red]refused:[/] {escape(str(exc))}")
            raise typer.Exit(ExitCode.USAGE) from None
        except QueryTimeout as exc:
            error(str(exc))
            raise typer.Exit(exc.exit_code) from None
        except duckdb.OutOfMemoryException as exc:
            _out_of_memory(exc)
        except duckdb.Error as exc:
            error(str(exc))
            raise typer.Exit(ExitCode.FAILURE) from None
        finally:
            con.close()
    finally:
        shutil.rmtree(spill, ignore_errors=True)


def _out_of_memory(exc: Exception) -> None:
    error(str(exc).splitlines()[0])
    console.print(
        escape(
            "hint: the query needs more than [sql] memory_limit and [sql] max_spill allow; narrow it "
            "or raise them in the settings file"
        ),
        highlight=False,
    )
    raise typer.Exit(ExitCode.FAILURE) from None


def _print_results(
    con, query: str, *, timeout: float, fmt: str, limit: int, spreadsheet_safe: bool, on_kill=None
) -> None:
    """Check every statement of ``query`` before any runs, then run each and stream its result to stdout, within the
    timeout and an address-space cap (``pipeline.serve.shell``)."""
    from pipeline.base.query import stream
    from pipeline.serve.shell import AddressSpaceCap, Deadline, check, run

    with Deadline(con, timeout, on_kill), AddressSpaceCap(con):
        checked = check(con, query)
        for number, result in enumerate(run(con, checked), start=1):
            title = f"statement {number} of {len(checked)}: {result.statement[:80]}" if len(checked) > 1 else None
            stream(
                result.names, result.batches(), fmt, limit, console=out, title=title, spreadsheet_safe=spreadsheet_safe
            )


_StatusFiles = Annotated[int, typer.Option(help="How many of the latest files to list.")]


@app.command(rich_help_panel=toc.panel("status"))
def status(
    db: DbOpt = None,
    settings: SettingsOpt = None,
    as_json: JsonOpt = False,
    files: _StatusFiles = 20,
) -> None:
    """Per kind and per file: rows in, loaded, quarantined; top quarantine reasons; the latest run's slowest steps."""
    import duckdb

    from pipeline.base.query import render, run_query

    con = open_read(read_settings(settings, db))
    try:
        names, kinds = run_query(con, "status_kinds")
        file_names, file_rows = run_query(con, "status_files", {"files": files})
        reasons = run_query(con, "status_reasons")[1]
        rejected = run_query(con, "status_rejected")[1]
        unpriced = run_query(con, "unpriced_requests")[1]
        variants = run_query(con, "name_variants")[1]
        try:  # ledgers published before 0.4 have no meta.run_steps
            slowest = run_query(con, "status_slowest_steps")[1]
        except duckdb.CatalogException:
            slowest = []
        try:  # a ledger loaded and never built has no marts
            budgets = run_query(con, "budgets_at_risk")[1]
            anomalies = run_query(con, "recent_anomalies")[1]
            unbilled = [m for (m,) in run_query(con, "cluster_unbilled_months")[1]]
            implausible = run_query(con, "implausible_meter_samples")[1]
        except duckdb.CatalogException:
            budgets, anomalies, unbilled, implausible = [], [], [], []
    finally:
        con.close()
    if as_json:
        _status_json(
            budgets=budgets,
            anomalies=anomalies,
            names=names,
            kinds=kinds,
            file_names=file_names,
            file_rows=file_rows,
            reasons=reasons,
            rejected=rejected,
            unpriced=unpriced,
            variants=variants,
            slowest=slowest,
            unbilled=unbilled,
            implausible=implausible,
        )
        return
    render(names, kinds, "table", 100, out, title="Loaded files by kind (rows in = loaded + quarantined)")
    render(file_names, file_rows, "table", files, out, title=f"Latest {files} files")
    if reasons:
        render(["kind", "reason", "rows"], reasons, "table", 100, out, title="Top quarantine reasons")
    else:
        out.print("No row has been quarantined.")
    _status_notes(unpriced=unpriced, variants=variants, rejected=rejected, slowest=slowest, implausible=implausible)
    _status_alerts(budgets, anomalies, unbilled)


def _status_json(
    *, names, kinds, file_names, file_rows, reasons, rejected, unpriced, variants, slowest, budgets, anomalies,
    unbilled, implausible,
) -> None:  # fmt: skip
    from pipeline.base.query import jsonable
    from pipeline.base.text import BUDGET_COLUMNS

    anomaly_keys = ["day", "kind", "provider", "team", "spend_effect_usd", "cause"]
    out.print_json(
        json.dumps(
            {
                "kinds": [dict(zip(names, r)) for r in kinds],
                "files": [{k: jsonable(v) for k, v in zip(file_names, r)} for r in file_rows],
                "top_quarantine_reasons": [{"kind": k, "reason": r, "rows": n} for k, r, n in reasons],
                "rejected_files": [{"kind": k, "path": p, "reason": r} for k, p, r in rejected],
                "unpriced_requests": [{"month": str(m), "provider": p, "requests": n} for m, p, n in unpriced],
                "names_differing_only_in_case": [{"what": w, "spellings": list(v)} for w, v in variants],
                "months_cluster_cost_missing": unbilled,
                "meter_samples_set_aside": [
                    {"path": p, "line": n, "cluster_id": c, "reason": r} for p, n, c, r in implausible
                ],
                "budgets_at_risk_or_over": [{k: jsonable(v) for k, v in zip(BUDGET_COLUMNS, r)} for r in budgets],
                "recent_anomalies": [{k: jsonable(v) for k, v in zip(anomaly_keys, r)} for r in anomalies],
                "slowest_steps_of_latest_run": [
                    {"step": a, "name": b, "seconds": c, "rows_in": d} for a, b, c, d in slowest
                ],
            }
        )
    )


def _status_notes(*, unpriced: list, variants: list, rejected: list, slowest: list, implausible: list) -> None:
    """The status tables shown only when they have rows."""
    from pipeline.base.query import render

    if implausible:
        render(
            ["path", "line", "cluster", "why"],
            implausible,
            "table",
            100,
            out,
            title="Meter samples set aside: counters that rose faster than any GPU or engine can (not counted)",
        )
    if unpriced:
        render(
            ["month", "provider", "unpriced API requests"],
            unpriced,
            "table",
            100,
            out,
            title="Unpriced: API requests with no price for their provider, model and time (not in metered cost)",
        )
    if variants:
        render(["what", "spellings"], variants, "table", 100, out, title="Names differing only in letter case")
    if rejected:
        render(["kind", "path", "reason"], rejected, "table", 100, out, title="Rejected files (latest)")
    if slowest:
        render(
            ["step", "name", "seconds", "rows_in"],
            slowest,
            "table",
            10,
            out,
            title="Slowest steps of the latest run (meta.run_steps)",
        )


def _status_alerts(budgets: list, anomalies: list, unbilled: list[str]) -> None:
    """The months whose cluster looks free for want of its bills, the latest month's budgets at risk or over, and the
    anomalies of the data's last 7 days (or none, said so)."""
    from pipeline.base.query import render

    if unbilled:
        out.print(
            f"The cluster served requests with none of its costs loaded in {', '.join(unbilled)}: its work looks free "
            "until its bills are loaded (cluster charges, hardware, FOCUS or operating costs).",
            highlight=False,
        )

    if budgets:
        rows = [(m, t, r, st, f"{sp:,.2f}", f"{pr:,.2f}", f"{b:,.2f}") for m, t, r, st, sp, pr, b in budgets]
        render(
            ["month", "team", "route", "status", "spent USD", "projected USD", "budget USD"],
            rows, "table", 100, out, title="Budgets at risk or over (marts.budget_status)",
        )  # fmt: skip
    if anomalies:
        rows = [(str(d), k, p, t, "" if e is None else f"{e:,.2f}", c) for d, k, p, t, e, c in anomalies]
        render(
            ["day", "kind", "provider", "team", "spend moved USD", "cause"],
            rows, "table", 100, out, title="Anomalies of the last 7 days (marts.daily_anomalies)",
        )  # fmt: skip
    else:
        out.print("No anomalies in the last 7 days of data (marts.daily_anomalies).", highlight=False)


@app.command(rich_help_panel=toc.panel("report"))
def report(
    month: Annotated[
        Optional[str], typer.Option(help="Month YYYY-MM. Default: the latest month in the ledger.")
    ] = None,
    db: DbOpt = None,
    settings: SettingsOpt = None,
    fmt: Annotated[
        Literal["html", "md", "text", "json", "csv", "xlsx"],
        typer.Option(
            "--format",
            help="html: self-contained file with charts (opens offline); md: Markdown for chat and email; text: print "
            "to the terminal; json: the report's figures, one section per table, exact decimals as text; csv: a "
            "folder with one CSV file per section; xlsx: a workbook with one sheet per section.",
        ),
    ] = "html",
    out_file: Annotated[
        Optional[Path],
        typer.Option(
            "--out",
            help="File (a folder for csv) to write, or - for standard output (csv: every section, each after a "
            "'# name' line). Default: reports/costledger-YYYY-MM.html (.md, .json, .xlsx, -csv/); text prints.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", metavar="", help="Print the report's figures as JSON on stdout (no file).")
    ] = False,
) -> None:
    """The monthly break-even report for leadership: verdict, trends, sensitivity, planning, trust.

    Exit codes: 0 written; 1 no ledger or no month yet; 2 --month is not a month (YYYY-MM) or not in the ledger.
    """
    from pipeline.base.errors import CostledgerError
    from pipeline.serve.report import gather, headline, plain_report, render_html, render_markdown

    con = open_read(read_settings(settings, db))
    to_stdout = as_json or str(out_file) == "-"
    try:
        if fmt == "text" and not as_json:
            _print_or_write(plain_report(con, month), None if to_stdout else out_file)
            return
        data = gather(con, month)
    except CostledgerError as exc:  # a month that is not one, or not in the ledger: 2; no months yet: 1
        error(str(exc))
        raise typer.Exit(exc.exit_code) from None
    if as_json or fmt in ("json", "csv", "xlsx"):
        _export(data, "json" if as_json else fmt, out_file, to_stdout=to_stdout)
        return
    text = render_html(data) if fmt == "html" else render_markdown(data)
    if to_stdout:
        sys.stdout.write(text)
        return
    target = out_file or Path("reports") / f"costledger-{data.month}.{fmt}"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    for line in headline(data):  # the verdict: a result, on standard output
        out.print(line, markup=False, highlight=False)
    where = "open it in a browser; it needs no network" if fmt == "html" else "paste it into chat or email"
    console.print(f"wrote {target} ({len(text.encode()) / 1024:,.0f} KiB): {where}", markup=False, highlight=False)


def _export(data: Any, fmt: str, out_file: Optional[Path], to_stdout: bool) -> None:
    """The report's figures as JSON (a file, or stdout) or as a folder of CSV files, one per section."""
    from pipeline.serve.export import as_json, csv_sections_text, write_csv_folder, write_xlsx

    if to_stdout:  # --json, or --out -
        if fmt == "xlsx":
            buffer = io.BytesIO()
            write_xlsx(data, buffer)
            sys.stdout.flush()
            sys.stdout.buffer.write(buffer.getvalue())
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(csv_sections_text(data) if fmt == "csv" else as_json(data))
        return
    if fmt == "csv":
        folder = out_file or Path("reports") / f"costledger-{data.month}-csv"
        files = write_csv_folder(data, folder)
        console.print(f"wrote {len(files)} CSV files to {folder}: one per section", markup=False, highlight=False)
        return
    target = out_file or Path("reports") / f"costledger-{data.month}.{fmt}"
    if fmt == "xlsx":
        write_xlsx(data, target)
        console.print(f"wrote {target}: the report's figures, one sheet per section", markup=False, highlight=False)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(as_json(data), encoding="utf-8")
    console.print(f"wrote {target}: the report's figures, one section per table", markup=False, highlight=False)


def _print_or_write(text: str, target: Path | None) -> None:
    """``text`` on standard output, or written to ``target``."""
    if target is None:
        out.print(text, markup=False, highlight=False)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    console.print(f"wrote {target}", markup=False, highlight=False)


@app.command(rich_help_panel=toc.panel("verify"))
def verify(
    db: DbOpt = None,
    settings: SettingsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check every lake file against the SHA-256 recorded when it was loaded.

    Names each missing or altered file and the landing file it came from.
    Re-delivering that landing file unchanged (same SHA-256) to the next nightly rewrites it.
    Exit 0 when all are intact, 1 when any is missing or altered (no build publishes until then).
    """
    from pipeline.storage.lake import damaged
    from pipeline.base.query import run_query
    from pipeline.storage.store import Store

    s = read_settings(settings, db)
    con = open_read(s)
    try:
        checked = run_query(con, "verify_counts")[1][0]
        problems = damaged(con, Store.for_db(s.db).lake)
    finally:
        con.close()
    files, recorded = checked
    if as_json:
        out.print_json(
            json.dumps(
                {
                    "lake_files": files,
                    "hashes_recorded": recorded,
                    "damaged": [
                        {"lake_file": d.lake_file, "problem": d.problem, "kind": d.kind, "landing_file": d.landing_path}
                        for d in problems
                    ],
                }
            )
        )
    else:
        for d in problems:
            out.print(f"[red]{d.problem}:[/] {escape(d.line())}", highlight=False)
        unrecorded = (
            f"; {files - recorded} loaded before 0.6.0 have no hash yet (the next build records it)"
            if files > recorded
            else ""
        )
        state = "all intact" if not problems else f"{len(problems)} missing or altered"
        out.print(f"{files} lake file(s) checked: {state}{unrecorded}")
    raise typer.Exit(ExitCode.FAILURE if problems else ExitCode.OK)
