"""How a landing file's text becomes the ledger's types, in SQL over its incoming rows (alias ``i``).

Each column is typed in one expression (``typed_expr``: trimmed, NULL tokens removed, names normalised, numbers
parsed strictly); ``type_checks`` turn a value that did not type into a reason naming the column; a column that
arrived in the ledger's type already (Parquet) is read as it is (``native_columns``).
"""

from __future__ import annotations

from schemas.ddl import ColumnSpec, view_value_sql
from schemas.expectations import SPECIAL_FORMATS
from schemas.tables import READ_OPTIONS, ReadOptions


def text_expr(kind: str, col: str) -> str:
    """The column's value as trimmed text, NULL for empty (and the kind's null tokens, e.g. FOCUS 'NULL')."""
    expr = f"NULLIF(trim(CAST(i.\"{col}\" AS VARCHAR)), '')"
    for token in READ_OPTIONS.get(kind, ReadOptions()).null_tokens:
        expr = f"NULLIF({expr}, '{token}')"
    return expr


#: Names that identify what is priced: one spelling per name, whatever the file's Unicode form
NAME_COLUMNS = frozenset({"provider", "model"})
#: zero-width space, non-joiner and joiner, word joiner, byte-order mark
_ZERO_WIDTH = "[\\x{200B}-\\x{200D}\\x{2060}\\x{FEFF}]"


def typed_expr(kind: str, c: ColumnSpec, present: set[str]) -> str:
    options = READ_OPTIONS.get(kind, ReadOptions())
    if c.name not in present:
        if c.name in options.defaults:
            return f"CAST('{options.defaults[c.name]}' AS {c.duckdb_type})"
        return f"CAST(NULL AS {c.duckdb_type})"
    t = text_expr(kind, c.name)
    if c.name in NAME_COLUMNS:
        # NFC (a composed é, not e + combining accent), no zero-width characters, trimmed; the letter case is kept.
        # ASCII text (as many bytes as characters), which most names are, has neither to change: the regular
        # expression and NFC, several times the cost of a trim on every row, are skipped for it
        normalised = f"NULLIF(trim(nfc_normalize(regexp_replace({t}, '{_ZERO_WIDTH}', '', 'g'))), '')"
        return f"CASE WHEN strlen({t}) = length({t}) THEN {t} ELSE {normalised} END"
    if c.name in options.lower:
        return f"lower({t})"
    fmt = SPECIAL_FORMATS.get((kind, c.name))
    if fmt == "year_month":
        return (
            f"CASE WHEN regexp_full_match({t}, '\\d{{4}}-\\d{{2}}') THEN TRY_CAST({t} || '-01' AS DATE) "
            f"WHEN regexp_full_match({t}, '\\d{{4}}-\\d{{2}}-01') THEN TRY_CAST({t} AS DATE) END"
        )
    if c.duckdb_type in ("BIGINT", "INTEGER"):
        return f"CASE WHEN regexp_full_match({t}, '[+-]?\\d+') THEN TRY_CAST({t} AS {c.duckdb_type}) END"
    if c.duckdb_type == "TIMESTAMP":
        return f"CAST(TRY_CAST({t} AS TIMESTAMPTZ) AT TIME ZONE 'UTC' AS TIMESTAMP)"
    if c.name == "currency":
        return f"upper({t})"
    if c.duckdb_type.startswith(("DECIMAL", "DOUBLE")):
        # DuckDB's cast reads 1_000 as 1000 (a digit separator no export writes: a typo, or another locale's habit)
        return f"CASE WHEN NOT contains({t}, '_') THEN TRY_CAST({t} AS {c.duckdb_type}) END"
    return f"TRY_CAST({t} AS {c.duckdb_type})"


#: Source types that are the ledger's type already (Parquet): read as they are, not through text.
NATIVE_TYPES: dict[str, tuple[str, ...]] = {
    "BIGINT": ("BIGINT", "INTEGER", "SMALLINT", "TINYINT", "UINTEGER", "USMALLINT", "UTINYINT"),
    "INTEGER": ("INTEGER", "SMALLINT", "TINYINT", "USMALLINT", "UTINYINT"),
    "BOOLEAN": ("BOOLEAN",),
    "DATE": ("DATE",),
    "TIMESTAMP": ("TIMESTAMP", "TIMESTAMP_MS", "TIMESTAMP_S", "TIMESTAMP_NS"),
}


def native_expr(c: ColumnSpec, source_type: str) -> str:
    if source_type == "TIMESTAMP_NS":
        # truncated to the microsecond, as text is: a cast rounds 23:59:59.999999999 into the next day and month
        return f'make_timestamp(epoch_ns(i."{c.name}") // 1000)'
    return f'CAST(i."{c.name}" AS {c.duckdb_type})'


def native_columns(kind: str, cols: list[ColumnSpec], source_types: dict[str, str]) -> set[str]:
    """Columns whose source type is already the ledger's (no parsing, no text round trip)."""
    options = READ_OPTIONS.get(kind, ReadOptions())
    return {
        c.name
        for c in cols
        if source_types.get(c.name) in NATIVE_TYPES.get(c.duckdb_type, ())
        and (kind, c.name) not in SPECIAL_FORMATS
        and c.name not in options.lower
    }


_TYPE_WORDS = {
    "BIGINT": "a whole number",
    "INTEGER": "a whole number",
    "TIMESTAMP": "an ISO-8601 timestamp",
    "DATE": "a date (YYYY-MM-DD)",
    "BOOLEAN": "true or false",
    "VARCHAR": "text",
}


def _type_word(kind: str, c: ColumnSpec) -> str:
    if SPECIAL_FORMATS.get((kind, c.name)) == "year_month":
        return "a month (YYYY-MM)"
    if c.duckdb_type.startswith("DECIMAL"):
        return f"a decimal number fitting {c.duckdb_type}"
    return _TYPE_WORDS[c.duckdb_type]


def is_nested(source_type: str) -> bool:
    """A DuckDB type holding more than one value (a Parquet list, struct or map)."""
    return source_type.endswith("]") or source_type.startswith(("STRUCT", "MAP", "UNION"))


#: Text columns that are prose (a note, a reason, a description): tabs and line breaks are allowed in them
FREE_TEXT = frozenset({"note", "reason", "charge_description", "tags", "resource_name"})
_BIDI = "\\x{202A}-\\x{202E}\\x{2066}-\\x{2069}"
#: Control characters (NUL among them) and the bidirectional overrides and isolates, which make a name print as
#: another: no id or name may hold one; prose may hold a tab and line breaks
_CONTROL_IN_NAMES = f"[\\x00-\\x1F\\x7F-\\x9F{_BIDI}]"
_CONTROL_IN_PROSE = f"[\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F-\\x9F{_BIDI}]"
#: a decimal as text: sign, integer digits, fraction digits, exponent
_DECIMAL_TEXT = "^[+-]?([0-9]*)(?:\\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$"


def decimal_places_sql(raw: str) -> str:
    """SQL: the decimal places the number written as ``raw`` needs to be exact (trailing zeros need none; an
    exponent moves the point), as a DOUBLE; NULL when ``raw`` is not written as a plain or exponent decimal."""

    def part(i: int) -> str:
        return f"regexp_extract({raw}, '{_DECIMAL_TEXT}', {i})"

    digits = f"({part(1)} || {part(2)})"
    exponent = f"coalesce(TRY_CAST(NULLIF({part(3)}, '') AS DOUBLE), 0)"
    zeros = f"(length({digits}) - length(rtrim({digits}, '0')))"
    return (
        f"CASE WHEN NOT regexp_full_match({raw}, '{_DECIMAL_TEXT}') THEN NULL WHEN rtrim({digits}, '0') = '' THEN 0 "
        f"ELSE length({part(2)}) - {exponent} - {zeros} END"
    )


def type_checks(
    kind: str,
    cols: list[ColumnSpec],
    present: set[str],
    native: set[str],
    *,
    nested: frozenset[str] = frozenset(),
    max_text_bytes: int | None = None,
) -> list[tuple[str, str, str]]:
    """(column, bad-when predicate over the typed table, message SQL expression) for missing, unparsable and
    unusable values: money or a price with more places than its column keeps (quarantined, never rounded; a quantity,
    such as FOCUS's ConsumedQuantity of hours with 15 places, keeps 12 and moves no money), text longer than
    ``max_text_bytes`` or holding a control character, a list or struct (``nested``) where one value goes.

    A ``native`` column arrived in its own type (Parquet): it can be missing, never unparsable.
    """
    checks: list[tuple[str, str, str]] = []
    for c in cols:
        raw = f"_raw_{c.name}"
        if c.name in nested:
            checks.append((c.name, f"{raw} IS NOT NULL", f"'{c.name} holds a list or a struct, not a single value'"))
            continue
        if c.required:
            missing = f'"{c.name}" IS NULL' if c.name in native else f"{raw} IS NULL"
            checks.append((c.name, missing, f"'{c.name} is missing'"))
        if c.name not in present:
            continue
        if c.name not in native and c.duckdb_type != "VARCHAR":
            checks.append(
                (
                    c.name,
                    f'{raw} IS NOT NULL AND "{c.name}" IS NULL',
                    f"'{c.name}: ''' || left({raw}, 60) || ''' is not {_type_word(kind, c)}'",
                )
            )
        if c.name not in native and c.duckdb_type.startswith("DECIMAL") and not c.name.endswith("quantity"):
            scale = int(c.duckdb_type.rstrip(")").split(",")[1])
            checks.append(
                (
                    c.name,
                    f'"{c.name}" IS NOT NULL AND {decimal_places_sql(raw)} > {scale}',
                    f"'{c.name}: ''' || left({raw}, 60) || ''' has more decimal places than the ledger keeps "
                    f"({scale}): quarantined, never rounded'",
                )
            )
        if c.duckdb_type == "VARCHAR":
            checks += _text_checks(c.name, max_text_bytes)
    return checks


def _text_checks(name: str, max_text_bytes: int | None) -> list[tuple[str, str, str]]:
    """A text value longer than ``max_text_bytes``."""
    if max_text_bytes is None:
        return []
    return [
        (
            name,
            f'strlen("{name}") > {int(max_text_bytes)}',
            f"'{name} is longer than {int(max_text_bytes):,} bytes ([ingest] max_text_bytes)'",
        )
    ]


def control_checks(cols: list[ColumnSpec]) -> tuple[list[tuple[str, str, str]], str]:
    """A text value holding a control character: a check per text column (the reasons of a bad row name it) and one
    predicate over all of them at once, for every row (one regular expression over the values joined costs half of
    one a column)."""
    names = [c.name for c in cols if c.duckdb_type == "VARCHAR"]
    checks = []
    for n in names:
        pattern = _CONTROL_IN_PROSE if n in FREE_TEXT else _CONTROL_IN_NAMES
        checks.append(
            (
                n,
                f"regexp_matches(\"{n}\", '{pattern}')",
                f"'{n} holds a control character (a byte below 0x20, 0x7f-0x9f or a bidirectional override)'",
            )
        )
    groups = [
        ([n for n in names if n not in FREE_TEXT], _CONTROL_IN_NAMES),
        ([n for n in names if n in FREE_TEXT], _CONTROL_IN_PROSE),
    ]
    joined = [(", ".join(f'"{n}"' for n in group), pattern) for group, pattern in groups if group]
    any_control = " OR ".join(f"regexp_matches(concat({columns}), '{pattern}')" for columns, pattern in joined)
    return checks, any_control or "false"


def as_is_sql(
    kind: str,
    cols: list[ColumnSpec],
    present: set[str],
    native: set[str],
    source_types: dict[str, str],
    typed: dict[str, str],
) -> str:
    """SQL true for a row that the raw view, reading the landing file itself, would give exactly as its checks
    typed it; "false" for every row when the file's types are not the ledger's (then its lake file is written).

    A column the file has must be of the ledger's type; a column it lacks must not take a per-kind default (the
    view knows only the class's). Of the columns the file has, a native one reads the same by construction; a
    text or decimal one (trimmed, lower-cased, parsed) must equal its value as the view reads it.
    """
    options = READ_OPTIONS.get(kind, ReadOptions())
    for c in cols:
        if c.name in present and source_types.get(c.name) != c.duckdb_type:
            return "false"
        if c.name not in present and c.name in options.defaults:
            return "false"
    same = []
    for c in cols:
        if c.name in present and c.name not in native:
            view = view_value_sql(c, f'i."{c.name}"')
            same.append(f"({typed[c.name]}) IS NOT DISTINCT FROM {view}")
    return " AND ".join(same) or "true"
