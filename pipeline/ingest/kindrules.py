"""The checks a kind adds to every row's: rules that look beyond the row, at the ledger's other files.

Prices must not overlap another price of the same name; an amount in a currency without an ``fx`` rate on or
before its date is never converted at 1; an invoice delivered again under another id or format is not counted
twice. Each adds verdicts to the file's work tables (``pipeline.ingest.worktables``) or rejects the file.
"""

from __future__ import annotations

import duckdb

from pipeline.ingest.loading import LoadingFile
from pipeline.ingest.worktables import WorkTables
from pipeline.storage.catalog import refresh_stale_raw_views
from schemas.tables import FX_DATE_COLUMNS, LEDGER_CURRENCY


def quarantines_and_counts(con: duckdb.DuckDBPyConnection, f: LoadingFile) -> tuple[int, int]:
    """The kind's own quarantines (overlapping prices; amounts without an exchange rate), then (rows to load, rows
    quarantined: the verdicts and the unreadable lines)."""
    st = f.tables
    if f.kind == "prices":
        _quarantine_price_overlaps(con, st)
    if f.kind in FX_DATE_COLUMNS:
        _quarantine_without_rate(con, st, FX_DATE_COLUMNS[f.kind])
    total, quarantined = con.execute(  # type: ignore[misc]
        f"SELECT (SELECT count(*) FROM {st.flags}), (SELECT count(*) FROM {st.verdicts})"
    ).fetchall()[0]
    bad_lines = len(f.read.bad_lines) if f.read else 0
    return total - quarantined, quarantined + bad_lines


def _quarantine_without_rate(con: duckdb.DuckDBPyConnection, st: WorkTables, date_column: str) -> None:
    """Quarantine the file's rows in a currency other than USD that has no ``fx`` rate on or before the row's
    date: an amount is never converted at 1."""
    refresh_stale_raw_views(con, ["fx"])  # rates loaded earlier in this run
    con.execute(
        f"""
        INSERT INTO {st.verdicts}
        SELECT f._line,
               'no fx rate for ' || f.currency || ' on or before ' || CAST(CAST(f."{date_column}" AS DATE) AS VARCHAR)
               || ' (load one as an fx file: currency, date, usd_per_unit); an amount is never converted at 1',
               'currency'
        FROM {st.flags} AS f
        WHERE NOT f._bad AND f._line NOT IN (SELECT _line FROM {st.verdicts}) AND f.currency <> ?
          AND NOT EXISTS (SELECT 1 FROM raw.fx AS x
                          WHERE x.currency = f.currency AND x.date <= CAST(f."{date_column}" AS DATE))
    """,
        [LEDGER_CURRENCY],
    )


def same_invoice_again(con: duckdb.DuckDBPyConnection, f: LoadingFile) -> str | None:
    """The rejection message when an invoice of this file is one loaded before under another id or in another
    format: the same provider and the same lines by period, amount and currency as an invoice of an earlier file,
    without restating any of its lines (a re-export with the same invoice and line ids restates; that is not a
    copy). Invoice ids in ``wanted`` (``[invoices] duplicates_wanted``) load all the same."""
    st, shown, wanted = f.tables, f.shown, f.options.invoice_duplicates_wanted
    refresh_stale_raw_views(con, ["invoices"])  # invoices loaded earlier in this run
    lines = (
        "list(struct_pack(s := period_start, e := period_end, a := amount, c := upper(currency)) "
        "ORDER BY period_start, period_end, amount, upper(currency))"
    )
    found = con.execute(
        f"""
        WITH new AS (
            SELECT provider, invoice_id, {lines} AS lines, list(line_id) AS line_ids
            FROM {st.flags} AS f
            WHERE f._line NOT IN (SELECT _line FROM {st.verdicts}) AND NOT list_contains(?, invoice_id)
            GROUP BY provider, invoice_id
        ),
        old AS (
            SELECT provider, invoice_id, source_file_hash, {lines} AS lines, list(line_id) AS line_ids
            FROM raw.invoices
            GROUP BY provider, invoice_id, source_file_hash
        )
        SELECT n.provider, n.invoice_id, o.invoice_id, l.path, len(n.lines)
        FROM new AS n
        JOIN old AS o
            ON o.provider = n.provider AND o.lines = n.lines
           AND (o.invoice_id <> n.invoice_id OR NOT list_has_any(o.line_ids, n.line_ids))
        JOIN meta.loaded_files AS l ON l.file_hash = o.source_file_hash
        ORDER BY l.load_seq
        LIMIT 1
    """,
        [list(wanted)],
    ).fetchall()
    if not found:
        return None
    provider, new_id, old_id, old_path, n = found[0]
    return (
        f"{shown}: invoice {new_id} of {provider} is the same invoice as {old_id}, loaded from {old_path} (the same "
        f"{n} line(s): periods, amounts and currency), delivered again under another id or format; nothing loaded, "
        f"so it is not counted twice. If both are real, list {new_id!r} in [invoices] duplicates_wanted"
    )


def _quarantine_price_overlaps(con: duckdb.DuckDBPyConnection, st: WorkTables) -> None:
    """Quarantine the file's price rows whose time range overlaps another price of the same provider, model,
    service tier and min_input_tokens: one in the current catalogue (the latest-loaded row of each key; keys
    this file restates are replaced, so not compared), or an earlier line of this file. The reason names both
    ranges."""
    refresh_stale_raw_views(con, ["prices"])  # prices loaded earlier in this run
    good = st.good

    def rng(a: str) -> str:
        return (
            f"strftime({a}.effective_from, '%Y-%m-%d %H:%M') || ' to ' || "
            f"coalesce(strftime({a}.effective_to, '%Y-%m-%d %H:%M'), 'the next price')"
        )

    overlap = (
        "n.provider = o.provider AND n.model = o.model AND n.service_tier = o.service_tier "
        "AND n.min_input_tokens = o.min_input_tokens AND n.effective_from <> o.effective_from "
        "AND ((o.effective_from < n.effective_from AND o.effective_to > n.effective_from) "
        "OR (n.effective_from < o.effective_from AND n.effective_to > o.effective_from))"
    )
    con.execute(f"""
        INSERT INTO {st.verdicts}
        SELECT n._line,
               'overlaps another price of ' || n.provider || '/' || n.model
               || CASE WHEN n.service_tier <> 'standard' OR n.min_input_tokens > 0
                  THEN ' (' || n.service_tier || ', from ' || n.min_input_tokens || ' input tokens)' ELSE '' END
               || ': this row runs ' || {rng("n")}
               || ', the ' || o.source || ' runs ' || {rng("o")} || '; restate one of them so they do not overlap',
               'effective_from, effective_to'
        FROM {good} AS n
        JOIN (
            SELECT c.provider, c.model, c.service_tier, c.min_input_tokens, c.effective_from, c.effective_to,
                   'loaded price' AS source, NULL AS _line
            FROM raw.prices AS c JOIN meta.loaded_files AS l ON l.file_hash = c.source_file_hash
            WHERE (c.provider, c.model, c.service_tier, c.min_input_tokens, c.effective_from) NOT IN
                  (SELECT provider, model, service_tier, min_input_tokens, effective_from FROM {good})
            QUALIFY row_number() OVER (PARTITION BY c.provider, c.model, c.service_tier, c.min_input_tokens,
                                       c.effective_from ORDER BY l.load_seq DESC, c.source_line DESC) = 1
            UNION ALL
            SELECT provider, model, service_tier, min_input_tokens, effective_from, effective_to,
                   'price on line ' || _line, _line FROM {good}
        ) AS o ON {overlap} AND (o._line IS NULL OR o._line < n._line)
        QUALIFY row_number() OVER (PARTITION BY n._line ORDER BY o._line NULLS FIRST) = 1
    """)
