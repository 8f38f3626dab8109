"""The ledger's catalogue in the work file: the meta tables, the raw views over the lake and the key index.

Storage layer: knows the lake's files (through the manifest) and the canonical tables of
``schemas``, never the models or the ingest steps. ``pipeline.storage.store`` opens the work file
and calls ``init_ledger``; ingest marks a kind's raw view stale when it loads a file, and the view is refreshed
when it is next read (``refresh_stale_raw_views``).
"""

from __future__ import annotations

import os

from pathlib import Path

import duckdb

from pipeline.base.query import table_exists

from schemas.ddl import comment_sql, natural_key, raw_view_sql, sql_string, table_name
from schemas.expectations import RESTATING_KINDS, SNAPSHOT_KINDS
from schemas.tables import KINDS

#: Kinds whose rows are not deduplicated against history (snapshots and restatements).
UNDEDUPLICATED = SNAPSHOT_KINDS | RESTATING_KINDS


def sql_literal(text: str) -> str:
    """A SQL string literal for a path we constructed (DuckDB cannot bind file names in views)."""
    if "\x00" in text or "\n" in text:
        raise ValueError(f"unusable path {text!r}")
    return sql_string(text)


META_DDL = [
    "CREATE SCHEMA IF NOT EXISTS meta",
    """CREATE TABLE IF NOT EXISTS meta.loaded_files (
        file_hash VARCHAR NOT NULL, kind VARCHAR NOT NULL, path VARCHAR NOT NULL, size_bytes BIGINT NOT NULL,
        rows_in BIGINT NOT NULL, rows_loaded BIGINT NOT NULL, rows_quarantined BIGINT NOT NULL,
        loaded_at TIMESTAMP NOT NULL, run_id VARCHAR, load_seq BIGINT NOT NULL, lake_file VARCHAR,
        rows_gx_validated BIGINT)""",
    # added in 0.6.0 (older ledgers gain them; NULL for files loaded before: the next build records them)
    "ALTER TABLE meta.loaded_files ADD COLUMN IF NOT EXISTS lake_sha256 VARCHAR",
    "ALTER TABLE meta.loaded_files ADD COLUMN IF NOT EXISTS relative_path VARCHAR",
    "ALTER TABLE meta.loaded_files ADD COLUMN IF NOT EXISTS notes VARCHAR",
    "ALTER TABLE meta.loaded_files ADD COLUMN IF NOT EXISTS read_with VARCHAR",
    "COMMENT ON TABLE meta.loaded_files IS 'Manifest: one row per landing file loaded (key: file_hash, its SHA-256), "
    "in load order (load_seq). rows_in = rows_loaded + rows_quarantined. lake_file: the Parquet file holding its "
    "loaded rows; lake_sha256: that file''s SHA-256, checked by every build and by costledger verify. relative_path: "
    "the file''s identity, its path relative to its kind folder. rows_gx_validated: rows Great Expectations validated "
    "(all well-typed rows up to gx_max_rows, then a sample). notes: what the reader did to a value on the way in "
    "(a float''s artefact in a price list read as the nearest decimal of 15 digits), else NULL. read_with: a "
    "fingerprint of the settings it was read under (its kind''s entries, the bounds and limits); a file with rows "
    "quarantined is read again by the first nightly under other settings (NULL: loaded by a version before 0.36).'",
    """CREATE TABLE IF NOT EXISTS meta.quarantine (
        file_hash VARCHAR NOT NULL, path VARCHAR NOT NULL, kind VARCHAR NOT NULL, line BIGINT NOT NULL,
        columns VARCHAR, reason VARCHAR NOT NULL, raw_row VARCHAR)""",
    "COMMENT ON TABLE meta.quarantine IS 'Rows not loaded, each with file, line, the columns at fault, the reason and "
    "the raw allow-listed values (JSON). Never content.'",
    """CREATE TABLE IF NOT EXISTS meta.rejected_files (
        file_hash VARCHAR, kind VARCHAR NOT NULL, path VARCHAR NOT NULL, reason VARCHAR NOT NULL,
        rejected_at TIMESTAMP NOT NULL, run_id VARCHAR)""",
    "COMMENT ON TABLE meta.rejected_files IS 'Files rejected whole (missing column, unreadable, ...): nothing of them "
    "was loaded.'",
    """CREATE TABLE IF NOT EXISTS meta.runs (
        run_id VARCHAR NOT NULL, command VARCHAR NOT NULL, started_at TIMESTAMP NOT NULL, finished_at TIMESTAMP,
        files_seen BIGINT, files_loaded BIGINT, files_skipped BIGINT, files_rejected BIGINT,
        rows_in BIGINT, rows_loaded BIGINT, rows_quarantined BIGINT, months_changed VARCHAR,
        seconds DOUBLE, outcome VARCHAR)""",
    "COMMENT ON TABLE meta.runs IS 'One row per ingest / build / nightly run: files seen, loaded, skipped, rejected; "
    "rows in, loaded, quarantined; the months whose marts changed; duration; outcome (NULL while running, interrupted "
    "if it died).'",
    "ALTER TABLE meta.runs ADD COLUMN IF NOT EXISTS alerts VARCHAR",
    "COMMENT ON COLUMN meta.runs.alerts IS 'What became of the run''s alerts webhook: sent (with the HTTP status), or "
    "failed (with why, after its retries); NULL when nothing was sent.'",
    """CREATE TABLE IF NOT EXISTS meta.alerted_anomalies (
        day DATE NOT NULL, kind VARCHAR NOT NULL, provider VARCHAR NOT NULL, team VARCHAR NOT NULL,
        subject VARCHAR NOT NULL, run_id VARCHAR NOT NULL, recorded_at TIMESTAMP NOT NULL)""",
    "COMMENT ON TABLE meta.alerted_anomalies IS 'The anomalies (marts.daily_anomalies) a run has seen: a nightly "
    "alerts on the others only, so each is named once.'",
    """CREATE TABLE IF NOT EXISTS meta.alerted_budgets (
        month VARCHAR NOT NULL, team VARCHAR NOT NULL, route VARCHAR NOT NULL, status VARCHAR NOT NULL,
        run_id VARCHAR NOT NULL, recorded_at TIMESTAMP NOT NULL)""",
    "COMMENT ON TABLE meta.alerted_budgets IS 'The budgets at risk or over (marts.budget_status) a run has named, with "
    "their status: a nightly alerts on a budget when it crosses into a status, once.'",
    """CREATE TABLE IF NOT EXISTS meta.settings (key VARCHAR NOT NULL, value VARCHAR NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS meta.run_steps (
        run_id VARCHAR NOT NULL, step VARCHAR NOT NULL, name VARCHAR NOT NULL, seconds DOUBLE NOT NULL,
        rows_in BIGINT)""",
    "COMMENT ON TABLE meta.run_steps IS 'Where each run''s time went: one row per file loaded (step ingest), per "
    "model built (step build; the request models include their batches) and per publication (step publish, visible "
    "from the next publication on).'",
    "CREATE TABLE IF NOT EXISTS meta.key_index (kind VARCHAR NOT NULL, key_hash UBIGINT NOT NULL)",
    "COMMENT ON TABLE meta.key_index IS 'Hash of the natural key of every loaded row of the deduplicated kinds, "
    "written in the transaction that loads the file: ingest probes it so a new file is checked against all history "
    "without reading the lake (only rows whose hash hits are read back). Work file only; rebuilt from the lake when "
    "DuckDB (and so its hash function) changes.'",
    "CREATE TABLE IF NOT EXISTS meta.key_index_built (duckdb_version VARCHAR NOT NULL)",
    """CREATE TABLE IF NOT EXISTS meta.rolled_back_files (
        file_hash VARCHAR NOT NULL, kind VARCHAR NOT NULL, path VARCHAR NOT NULL, rolled_back_at TIMESTAMP NOT NULL,
        snapshot VARCHAR NOT NULL)""",
    "COMMENT ON TABLE meta.rolled_back_files IS 'Files a costledger rollback took back: loaded after the snapshot "
    "published again. A nightly does not load them again (costledger reprocess FILE does).'",
    """CREATE TABLE IF NOT EXISTS meta.superseded_rows (
        kind VARCHAR NOT NULL, file_hash VARCHAR NOT NULL, line BIGINT NOT NULL,
        by_file_hash VARCHAR NOT NULL, by_line BIGINT NOT NULL)""",
    "COMMENT ON TABLE meta.superseded_rows IS 'Rows a correction restated: a row of a file delivered as a correction "
    "(a corrections/ folder of its kind, or ingest --correction) with the key of a row loaded earlier and other "
    "content replaces it. The earlier row stays in the lake (history is never edited); the raw view leaves it out.'",
    "COMMENT ON TABLE meta.settings IS 'The settings the last build used (the SQL models read them from here).'",
    "CREATE TABLE IF NOT EXISTS meta.raw_views_made (kind VARCHAR NOT NULL, statements VARCHAR NOT NULL)",
    "COMMENT ON TABLE meta.raw_views_made IS 'The statements that made each raw view (the view and its comments), and "
    "those that made the meta tables (kind (meta tables)): a command that opens the ledger runs them again only when "
    "they have changed. Work file only.'",
]


#: the key under which ``meta.raw_views_made`` records the statements that made the meta tables
_META_MADE = "(meta tables)"


def init_ledger(con: duckdb.DuckDBPyConnection, lake: Path) -> None:
    """Create the meta tables and the raw views if missing (idempotent). Every command opens the ledger: the meta
    tables' statements (some 30, each comment a write to the catalogue) run only when they are not the ones that made
    them, and a raw view is made again only when its statements changed (``refresh_raw_views``)."""
    statements = "\n".join(META_DDL)
    try:
        made = con.execute(f"SELECT count(*) FROM {_MADE} WHERE kind = ? AND statements = ?", [_META_MADE, statements])
        current = bool(made.fetchall()[0][0])
    except duckdb.CatalogException:
        current = False  # a new ledger, or one made before the record was kept
    if not current:
        for stmt in META_DDL:
            con.execute(stmt)
        con.execute(f"DELETE FROM {_MADE} WHERE kind = ?", [_META_MADE])
        con.execute(f"INSERT INTO {_MADE} VALUES (?, ?)", [_META_MADE, statements])
    con.execute("CREATE SCHEMA IF NOT EXISTS raw")
    refresh_raw_views(con, lake, list(KINDS))
    # the marks of views that lag the manifest (``mark_raw_view_stale``): none, every view was just refreshed
    con.execute(f"CREATE TEMP TABLE IF NOT EXISTS {_STALE} (kind VARCHAR NOT NULL, lake VARCHAR NOT NULL)")
    con.execute(f"DELETE FROM {_STALE}")
    _ensure_key_index(con)


def key_hash_sql(key: list[str], alias: str = "") -> str:
    """The expression ``meta.key_index`` stores for a row: one definition for the writes and the probe."""
    prefix = f"{alias}." if alias else ""
    return "hash(" + ", ".join(f'{prefix}"{k}"' for k in key) + ")"


def _ensure_key_index(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)build ``meta.key_index`` from the loaded rows when it was built by another DuckDB version (its hash may
    differ), for other keys (a kind's natural key changed), or never."""
    keys = ";".join(f"{kind}={','.join(natural_key(model))}" for kind, model in KINDS.items())
    version = f"{duckdb.__version__} keys {keys}"
    built = [v for (v,) in con.execute("SELECT duckdb_version FROM meta.key_index_built").fetchall()]
    if built == [version]:
        return
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute("DELETE FROM meta.key_index")
        for kind, model in KINDS.items():
            key = natural_key(model)
            if key and kind not in UNDEDUPLICATED:
                con.execute(
                    f"INSERT INTO meta.key_index SELECT ?, {key_hash_sql(key)} FROM raw.{table_name(model)}", [kind]
                )
        con.execute("DELETE FROM meta.key_index_built")
        con.execute("INSERT INTO meta.key_index_built VALUES (?)", [version])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def raw_view_statements(
    con: duckdb.DuckDBPyConnection, lake: Path, kinds: list[str] | None = None, spelled_from: Path | None = None
) -> list[tuple[str, str]]:
    """(name, CREATE VIEW) for the raw views (all, or those of ``kinds``) over the files the manifest names; with
    ``spelled_from`` (the folder that holds the published file), each lake file is named relative to it, so that the
    published file finds its lake wherever the ledger's folder is copied or moved (``pipeline.storage.db``). The
    manifest, the corrections and the lake files' footers are each read once for all the kinds."""
    wanted = kinds or list(KINDS)
    files: dict[str, list[str]] = {kind: [] for kind in wanted}
    for kind, lake_file in con.execute(
        "SELECT kind, lake_file FROM meta.loaded_files WHERE lake_file IS NOT NULL AND list_contains(?, kind) "
        "ORDER BY load_seq",
        [wanted],
    ).fetchall():
        # a missing lake file is left out of the view (so the ledger still opens and the original landing
        # file can be re-delivered to rewrite it); every build refuses to run while one is missing
        if (lake / lake_file).is_file():
            files[kind].append(str(lake / lake_file))
    superseded = {
        kind
        for (kind,) in con.execute(
            "SELECT DISTINCT kind FROM meta.superseded_rows WHERE list_contains(?, kind)", [wanted]
        ).fetchall()
    }
    footers = _footers(con, [p for kind in wanted for p in files[kind]])
    out = []
    for kind in wanted:
        model = KINDS[kind]
        paths = files[kind]
        literals = [sql_literal(p) for p in paths]
        spelled = {lit: sql_literal(os.path.relpath(p, spelled_from)) for p, lit in zip(paths, literals)}
        file_columns = None
        if literals:
            # the columns each lake file has, in the files' order (footers only): older files may lack a column
            # added since, and a copied landing file lacks the provenance columns
            if footers is not None:
                file_columns = [footers[p] for p in paths]
            else:
                literals, file_columns = _readable_footers(con, literals)
        if spelled_from is not None:
            literals = [spelled[lit] for lit in literals]
        out.append(
            (
                f"raw.{table_name(model)}",
                raw_view_sql(model, literals, file_columns, kind if kind in superseded else None),
            )
        )
    return out


def _footers(con: duckdb.DuckDBPyConnection, paths: list[str]) -> dict[str, set[str]] | None:
    """The column names in each lake file's footer, read in one pass; None when some footer does not read (then
    each file is read alone, ``_readable_footers``)."""
    if not paths:
        return {}
    try:
        return {
            file_name: set(names)
            for file_name, names in con.execute(
                f"SELECT file_name, list(name) FROM parquet_schema([{', '.join(sql_literal(p) for p in paths)}]) "
                "GROUP BY file_name"
            ).fetchall()
        }
    except duckdb.Error:
        return None


def _readable_footers(con: duckdb.DuckDBPyConnection, literals: list[str]) -> tuple[list[str], list[set[str]]]:
    """File by file, the lake files whose footer reads (a corrupt one is left out of the view, so the
    ledger still opens; the build's hash check refuses to run until it is rewritten)."""
    kept, columns = [], []
    for literal in literals:
        try:
            names = con.execute(f"SELECT list(name) FROM parquet_schema({literal})").fetchall()[0][0]
        except duckdb.Error:
            continue
        kept.append(literal)
        columns.append(set(names))
    return kept, columns


#: the raw views made in this work file, with the statements that made them (the view, then its ~30 comments): a view
#: whose statements would be the same again is left as it is. A table of the work file, so that a rollback takes a
#: view's record back with the view and the next command that opens the ledger does not make the views again (some
#: 450 catalog statements). The table is made by ``init_ledger`` (``META_DDL``).
_MADE = "meta.raw_views_made"


def refresh_raw_view(con: duckdb.DuckDBPyConnection, lake: Path, kind: str) -> None:
    """(Re)make the kind's raw view (``refresh_raw_views``)."""
    refresh_raw_views(con, lake, [kind])


def refresh_raw_views(con: duckdb.DuckDBPyConnection, lake: Path, kinds: list[str]) -> None:
    """(Re)make the kinds' raw views over the files the manifest names, with their comments, except those made with
    these very statements and still there (every command opens the ledger and a build reopens every raw view; most
    have not changed since they were made)."""
    made = _made_views(con, kinds)
    for kind, (_, stmt) in zip(kinds, raw_view_statements(con, lake, kinds)):
        comments = comment_sql(KINDS[kind])
        statements = "\n".join([stmt, *comments])
        if made.get(kind) == statements:
            continue
        con.execute(stmt)
        for comment in comments:
            con.execute(comment)
        con.execute(f"DELETE FROM {_MADE} WHERE kind = ?", [kind])
        con.execute(f"INSERT INTO {_MADE} VALUES (?, ?)", [kind, statements])


def _made_views(con: duckdb.DuckDBPyConnection, kinds: list[str]) -> dict[str, str]:
    """The statements that made each of the kinds' raw views, for the views still there."""
    views = {
        name
        for (name,) in con.execute(
            "SELECT view_name FROM duckdb_views() WHERE database_name = current_database() AND schema_name = 'raw'"
        ).fetchall()
    }
    return {
        kind: statements
        for kind, statements in con.execute(
            f"SELECT kind, statements FROM {_MADE} WHERE list_contains(?, kind)", [kinds]
        ).fetchall()
        if table_name(KINDS[kind]) in views
    }


#: the raw views of this connection that lag the manifest: a temp table, so that a rollback takes a mark back with
#: the file that set it, and a refresh rolled back leaves its mark in place
_STALE = "temp.main.stale_raw_views"


def mark_raw_view_stale(con: duckdb.DuckDBPyConnection, lake: Path, kind: str) -> None:
    """The kind's raw view lags the manifest (a file was written in this transaction): it is refreshed when it is
    next read (``refresh_stale_raw_views``), not once per file (a refresh reads every lake file's footer and
    comments every column: some 30 statements). The mark's table is made by ``init_ledger``."""
    con.execute(f"INSERT INTO {_STALE} VALUES (?, ?)", [kind, str(lake)])


def refresh_stale_raw_views(con: duckdb.DuckDBPyConnection, kinds: list[str] | None = None) -> None:
    """Refresh the raw views (of ``kinds``, default all) that this connection marked stale: before ingest reads a
    raw view (the rows a duplicate key points at, exchange rates, prices), and once a load is done. The marks'
    table is made by ``init_ledger``, as for ``mark_raw_view_stale``."""
    stale = con.execute(
        f"SELECT DISTINCT kind, lake FROM {_STALE} WHERE ? IS NULL OR list_contains(?, kind) ORDER BY ALL",
        [kinds, kinds],
    ).fetchall()
    for kind, lake in stale:
        refresh_raw_view(con, Path(lake), kind)
    if stale:
        con.execute(f"DELETE FROM {_STALE} WHERE list_contains(?, kind)", [[k for k, _ in stale]])


def table_columns(con: duckdb.DuckDBPyConnection, qualified: str) -> set[str]:
    """The columns of a table or view ``schema.name`` of the current database."""
    schema, name = qualified.split(".")
    return {
        c
        for (c,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? "
            "AND database_name = current_database()",
            [schema, name],
        ).fetchall()
    }


def rebuild_in_full(con: duckdb.DuckDBPyConnection, file_hash: str | None = None) -> None:
    """The next build recomputes the incremental models from every row: rows they folded in were replaced (a file
    loaded again, ``file_hash``: no longer counted as built; or a correction)."""
    if table_exists(con, "meta", "build_state"):
        con.execute("DELETE FROM meta.build_state")
        if file_hash is not None:
            con.execute("DELETE FROM meta.built_files WHERE file_hash = ?", [file_hash])


def forget_file(con: duckdb.DuckDBPyConnection, lake: Path, kind: str, file_hash: str) -> None:
    """Inside the caller's transaction: what the ledger holds of a loaded file gone (its keys, quarantined rows,
    manifest row and the corrections it made), and the next build full. Its lake file is left for the next run's
    clean-up (``Store.remove_orphans``); the lake is never edited in a transaction that may roll back."""
    model = KINDS[kind]
    key = natural_key(model)
    if key and kind not in UNDEDUPLICATED:
        # the keys of its rows (read through the raw view, typed as when they were indexed)
        con.execute(
            f"DELETE FROM meta.key_index WHERE kind = ? AND key_hash IN "
            f"(SELECT {key_hash_sql(key)} FROM raw.{table_name(model)} WHERE source_file_hash = ?)",
            [kind, file_hash],
        )
    con.execute("DELETE FROM meta.quarantine WHERE file_hash = ?", [file_hash])
    con.execute("DELETE FROM meta.loaded_files WHERE file_hash = ?", [file_hash])
    con.execute("DELETE FROM meta.superseded_rows WHERE by_file_hash = ?", [file_hash])
    rebuild_in_full(con, file_hash)  # its rows are folded into the incremental models
    mark_raw_view_stale(con, lake, kind)


def restore_file(con: duckdb.DuckDBPyConnection, lake: Path, snapshot: Path, kind: str, file_hash: str) -> None:
    """Inside the caller's transaction, after ``forget_file``: a file's load as ``snapshot`` holds it (its manifest
    row, quarantined rows and the corrections it made, copied from the snapshot; its keys indexed again from its lake
    file there), for a rollback past a reload of the same file."""
    con.execute(f"ATTACH {sql_literal(str(snapshot))} AS rollback_snapshot (READ_ONLY)")
    try:
        con.execute(
            "INSERT INTO meta.loaded_files BY NAME "
            "SELECT * FROM rollback_snapshot.meta.loaded_files WHERE file_hash = ?",
            [file_hash],
        )
        con.execute(
            "INSERT INTO meta.quarantine SELECT * FROM rollback_snapshot.meta.quarantine WHERE file_hash = ?",
            [file_hash],
        )
        con.execute(
            "INSERT INTO meta.superseded_rows SELECT * FROM rollback_snapshot.meta.superseded_rows "
            "WHERE by_file_hash = ?",
            [file_hash],
        )
    finally:
        con.execute("DETACH rollback_snapshot")
    refresh_raw_view(con, lake, kind)
    model = KINDS[kind]
    key = natural_key(model)
    if key and kind not in UNDEDUPLICATED:
        con.execute(
            f"INSERT INTO meta.key_index SELECT ?, {key_hash_sql(key)} FROM raw.{table_name(model)} "
            "WHERE source_file_hash = ?",
            [kind, file_hash],
        )
