"""Every row of a file typed and checked in one pass, its duplicates found, and Great Expectations asked to agree.

``check_rows`` builds the file's ``flags`` (every row typed, with its raw text where typing may fail, whether a
type check failed and whether any check failed), ``flag_detail`` (the bad rows, one flag per expectation) and
``verdicts`` (the rows not to load: line, reason, columns at fault). The kind's expectation suite is evaluated
by DuckDB on every row and by Great Expectations on the well-typed rows (all, or a deterministic sample beyond
``gx_max_rows``); the two must agree. Duplicates are found by grouping the file's keys (inside the file) and by
probing the key index ``meta.key_index`` (keys already loaded; only the rows the probe hits are read back).
"""

from __future__ import annotations

from concurrent.futures import Future

import duckdb

from pipeline.ingest.loading import CORRECTIONS_FOLDER, LoadingFile
from pipeline.ingest.sqltypes import (
    as_is_sql,
    control_checks,
    is_nested,
    native_columns,
    native_expr,
    text_expr,
    type_checks,
    typed_expr,
)
from pipeline.ingest.worktables import WorkTables
from pipeline.storage.catalog import key_hash_sql, refresh_stale_raw_views
from schemas.ddl import sql_string
from schemas.expectations import suites
from schemas.tables import READ_OPTIONS, ReadOptions

#: pandas holds timestamps from 1677 to 2262 only: rows beyond are not handed to GX (they fail the plausibility
#: bound in SQL, and GX checks that bound on every row it does get)
PANDAS_SAFE_DATES = ("1900-01-01", "2200-01-01")


def check_rows(con: duckdb.DuckDBPyConnection, f: LoadingFile) -> Future[int]:
    """Type, flag and judge every row of ``f`` (its work tables, see the module's text); sets
    ``f.raw_cols``. Returns GX's pending result (the rows it validated; it runs in GX's process while DuckDB
    finds the verdicts and writes the lake file)."""
    suite = suites(f.options.bounds)[f.kind]
    checks = _flag_rows(con, f, suite)
    validated = _great_expectations(con, f, suite)
    _verdicts(con, f, checks, suite)
    return validated


def _flag_rows(con: duckdb.DuckDBPyConnection, f: LoadingFile, suite: list) -> list[tuple[str, str, str]]:
    """Temp table ``flags``: every row typed, its raw text where typing may fail, ``_mistyped``, ``_bad`` and
    ``_as_is`` (``as_is_sql``; only a file read verbatim may be kept byte for byte); view ``flag_detail``.
    Returns the type checks."""
    st, kind, cols, present = f.tables, f.kind, f.columns, f.present
    options = READ_OPTIONS.get(kind, ReadOptions())
    source_types = {r[0]: r[1] for r in con.execute(f"DESCRIBE SELECT * FROM {st.incoming}").fetchall()}
    native = native_columns(kind, cols, source_types)
    # a Parquet list, struct or map where the ledger keeps one value: its rows are quarantined, never loaded as text
    nested = frozenset(c.name for c in cols if c.name in present and is_nested(source_types[c.name]))
    # VARCHAR columns kept as they came (trimmed, NULL tokens removed) are their own raw text
    plain_text = {
        c.name
        for c in cols
        if c.duckdb_type == "VARCHAR"
        and c.name in present
        and c.name not in native
        and c.name not in options.lower
        and c.name != "currency"
        and c.default is None
        and c.name not in nested
    }
    typed_exprs = {}
    for c in cols:
        if c.name in nested:
            expr = f"CAST(NULL AS {c.duckdb_type})"
        elif c.name in native:
            expr = native_expr(c, source_types[c.name])
        else:
            expr = typed_expr(kind, c, present)
        if c.default_sql is not None:  # an optional column with a default (opex.cluster_id '' = shared costs)
            expr = f"coalesce({expr}, {c.default_sql})"
        typed_exprs[c.name] = expr
    typed_parts = [f'{expr} AS "{name}"' for name, expr in typed_exprs.items()]
    verbatim = f.read is not None and f.read.verbatim
    as_is = as_is_sql(kind, cols, present, native, source_types, typed_exprs) if verbatim else "false"
    f.raw_cols = [c.name for c in cols if c.name not in native and c.name not in plain_text]
    raws = "".join(
        (f", {text_expr(kind, n)} AS _raw_{n}" if n in present else f", CAST(NULL AS VARCHAR) AS _raw_{n}")
        for n in f.raw_cols
    )
    checks = type_checks(
        kind, cols, present, native | plain_text, nested=nested, max_text_bytes=f.options.max_text_bytes
    )
    control, any_control = control_checks(cols)
    suite_flags = [(f'"_chk_{chk.name}"', f"coalesce({chk.sql_bad_when()}, false)") for chk in suite]
    # the table keeps only whether a row is mistyped and whether it is bad; each expectation's flag is a view over
    # the bad rows alone (one materialised column per check for every row costs about a quarter of the pass)
    mistyped = " OR ".join([f"({p})" for _, p, _ in checks] + [f"({any_control})"])
    checks += control  # a bad row's reasons name the column that holds the control character
    any_flag = " OR ".join([mistyped] + [e for _, e in suite_flags])
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {st.flags} AS SELECT *, coalesce({mistyped}, false) AS _mistyped, "
        f"coalesce({any_flag}, false) AS _bad "
        f"FROM (SELECT i._line, {', '.join(typed_parts)}{raws}, {as_is} AS _as_is FROM {st.incoming} i)"
    )
    detail = ", ".join(f"{e} AS {name}" for name, e in suite_flags) or "false AS _none"
    con.execute(f"CREATE OR REPLACE TEMP VIEW {st.flag_detail} AS SELECT *, {detail} FROM {st.flags} WHERE _bad")
    return checks


def _great_expectations(con: duckdb.DuckDBPyConnection, f: LoadingFile, suite: list) -> Future[int]:
    """The kind's suite run by GX on the well-typed rows (all, or beyond ``gx_max_rows`` every step-th line of the
    rows the SQL rules pass and of those they flag, so GX sees both), checked against the SQL flags of the same
    rows; returns the rows GX validated."""
    from pipeline.ingest.validate import gx_worker, validate_rows

    st, cols, gx_max_rows = f.tables, f.columns, f.options.gx_max_rows
    n_good, n_flagged = con.execute(  # type: ignore[misc]
        f"SELECT count(*) FILTER (WHERE NOT _bad), count(*) FILTER (WHERE _bad) FROM {st.flags} WHERE NOT _mistyped"
    ).fetchall()[0]
    step_good = max(1, -(-n_good // gx_max_rows))
    step_flagged = max(1, -(-n_flagged // gx_max_rows))
    low, high = PANDAS_SAFE_DATES
    in_pandas = (
        " AND ".join(
            f"(\"{c.name}\" IS NULL OR \"{c.name}\" BETWEEN '{low}' AND '{high}')"
            for c in cols
            if c.duckdb_type in ("TIMESTAMP", "DATE")
        )
        or "true"
    )
    sample = (
        f"NOT _mistyped AND {in_pandas} "
        f"AND CASE WHEN _bad THEN _line % {step_flagged} = 0 ELSE _line % {step_good} = 0 END"
    )
    col_list = ", ".join(f'"{c.name}"' for c in cols)
    rows = con.sql(f"SELECT _line, {col_list} FROM {st.flags} WHERE {sample}").to_arrow_table()
    timestamps = [c.name for c in cols if c.duckdb_type in ("TIMESTAMP", "DATE")]
    sql_flags: dict[str, set[int]] = {chk.name: set() for chk in suite}
    if suite:
        chk_cols = ", ".join(f'"_chk_{chk.name}"' for chk in suite)
        for line, *hits in con.execute(f"SELECT _line, {chk_cols} FROM {st.flag_detail} WHERE {sample}").fetchall():
            for chk, hit in zip(suite, hits):
                if hit:
                    sql_flags[chk.name].add(line)
    return gx_worker().submit(validate_rows, f.kind, rows, timestamps, sql_flags, f.shown, f.options.bounds)


def key_match(a: str, b: str, key: list[str]) -> str:
    """SQL: rows ``a`` and ``b`` have the same key. A key part may be empty (a self-hosted request has no provider,
    shared opex no cluster): empty matches empty."""
    return " AND ".join(f'{a}."{k}" IS NOT DISTINCT FROM {b}."{k}"' for k in key)


def _duplicate_sources(con: duckdb.DuckDBPyConnection, f: LoadingFile) -> str:
    """Temp table ``dup_first`` (keys more than once among the file's good rows, with their first line) and the
    rows already loaded with one of the file's keys (the key index probed, only its hits read back from the
    lake); returns the name of the relation holding those rows."""
    st, key = f.tables, f.key
    key_part = ", ".join(f'"{k}"' for k in key)
    key_hash = key_hash_sql(key)
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {st.dup_first} AS SELECT {key_part}, min(_line) AS first_line "
        f"FROM {st.flags} WHERE NOT _bad GROUP BY ALL HAVING count(*) > 1"
    )
    # keys already loaded: probe the key index (the file's hashes are the build side), then read back only those rows
    if not f.check_existing:
        return f"(SELECT * FROM {f.table} WHERE false)"
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {st.hit_keys} AS SELECT DISTINCT {key_part} FROM {st.flags} "
        f"WHERE NOT _bad AND {key_hash} IN (SELECT key_hash FROM meta.key_index WHERE kind = ? "
        f"AND key_hash IN (SELECT {key_hash} FROM {st.flags} WHERE NOT _bad))",
        [f.kind],
    )
    if not con.execute(f"SELECT count(*) FROM {st.hit_keys}").fetchall()[0][0]:  # type: ignore[index]
        return f"(SELECT * FROM {f.table} WHERE false)"
    refresh_stale_raw_views(con, [f.kind])  # the rows of files loaded (or open) in this run too
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {st.existing} AS SELECT e.* FROM {f.table} e SEMI JOIN {st.hit_keys} h ON "
        f"{key_match('e', 'h', key)}"
    )
    return st.existing


def _reasons_sql(checks: list[tuple[str, str, str]], suite: list) -> tuple[str, str]:
    """SQL over ``flag_detail``: (the reasons a row is bad, joined by '; '; the columns at fault)."""
    messages = list(checks) + [(chk.column, f'"_chk_{chk.name}"', sql_string(chk.message)) for chk in suite]
    reasons = (
        "array_to_string(list_filter(["
        + ", ".join(f"CASE WHEN {p} THEN {m} END" for _, p, m in messages)
        + "], lambda x: x IS NOT NULL), '; ')"
    )
    bad_cols = (
        "array_to_string(list_distinct(list_filter(["
        + ", ".join(f"CASE WHEN {p} THEN '{c}' END" for c, p, _ in messages)
        + "], lambda x: x IS NOT NULL)), ', ')"
    )
    return reasons, bad_cols


def _verdicts(con: duckdb.DuckDBPyConnection, f: LoadingFile, checks: list[tuple[str, str, str]], suite: list) -> None:
    """Temp table ``verdicts``: the rows not to load (bad rows, duplicates inside the file, keys already
    loaded), with the reason and the columns at fault; and temp table ``superseding``: in a correction file,
    the rows that restate a row loaded earlier (same key, other content), with that row's file and line."""
    st, key = f.tables, f.key
    reasons, bad_cols = _reasons_sql(checks, suite)
    con.execute(f"CREATE OR REPLACE TEMP TABLE {st.superseding} (_line BIGINT, file_hash VARCHAR, line BIGINT)")
    bad_rows = f"SELECT _line, {reasons} AS verdict, {bad_cols} AS bad_columns FROM {st.flag_detail}"
    if not key:  # rows without a natural key (FOCUS): nothing to deduplicate
        con.execute(f"CREATE OR REPLACE TEMP TABLE {st.verdicts} AS {bad_rows}")
        return
    existing = _duplicate_sources(con, f)
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE {st.verdicts} AS {bad_rows} UNION ALL "
        f"SELECT * FROM ({_duplicates_sql(f, existing)}) WHERE verdict IS NOT NULL"
    )
    if f.correction:
        _superseding(con, st, existing, key)


def _duplicates_sql(f: LoadingFile, existing: str) -> str:
    """A query: (line, verdict or NULL, key columns) for each good row whose key repeats inside the file or was
    loaded before (rows in ``existing``)."""
    st, key_names = f.tables, ", ".join(f.key)

    def same(a: str, b: str) -> str:
        return " AND ".join(f'{a}."{c.name}" IS NOT DISTINCT FROM {b}."{c.name}"' for c in f.columns)

    return f"""
        SELECT c._line,
               CASE
                 WHEN c._line <> d.first_line AND ({same("c", "f")})
                   THEN 'identical duplicate of line ' || d.first_line || ' (counted once)'
                 WHEN c._line <> d.first_line
                   THEN 'conflict: same key ({key_names}) as line ' || d.first_line
                        || ' with different content; not loaded'
                 WHEN e.source_line IS NOT NULL AND ({same("c", "e")})
                   THEN 'identical duplicate of a row already loaded (file ' || left(e.source_file_hash, 12)
                        || ', line ' || e.source_line || '); counted once'
                 WHEN e.source_line IS NOT NULL AND NOT {"true" if f.correction else "false"}
                   THEN 'conflict: key ({key_names}) already loaded from '
                        || coalesce((SELECT l.path FROM meta.loaded_files AS l
                                     WHERE l.file_hash = e.source_file_hash), 'file ' || e.source_file_hash)
                        || ', line ' || e.source_line || ', with different content; not overwritten. If this '
                        || 'row corrects that one, deliver the file in a {CORRECTIONS_FOLDER}/ folder of its kind '
                        || 'folder (or ingest --correction)'
               END AS verdict,
               '{key_names}' AS bad_columns
        FROM {st.flags} c
        LEFT JOIN {st.dup_first} d ON {key_match("d", "c", f.key)}
        LEFT JOIN {st.flags} f ON f._line = d.first_line
        LEFT JOIN {existing} e ON {key_match("e", "c", f.key)}
        WHERE NOT c._bad AND (d.first_line IS NOT NULL OR e.source_line IS NOT NULL)
    """


def _superseding(con: duckdb.DuckDBPyConnection, st: WorkTables, existing: str, key: list[str]) -> None:
    """A correction file's rows that load and share a key with a row loaded earlier: they restate it (rows with the
    same content were found duplicates, so every such row has other content)."""
    con.execute(f"""
        INSERT INTO {st.superseding}
        SELECT c._line, e.source_file_hash, e.source_line
        FROM {st.flags} c JOIN {existing} e ON {key_match("e", "c", key)}
        WHERE NOT c._bad AND c._line NOT IN (SELECT _line FROM {st.verdicts})
    """)
