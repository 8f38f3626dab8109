"""Reading landing files (CSV, JSONL, Parquet; gzip allowed) into Arrow.

A reader keeps only the allow-listed columns (so prompt text, responses and
other content never leave this module), adds ``_line`` (where each row stands in
its file) and hands typing and checking to DuckDB (``pipeline.ingest``): every
value arrives as text from CSV and JSONL, so the same column gets the same type
whatever the format.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

if TYPE_CHECKING:
    from pipeline.logformats import LogMapping

Format = Literal["csv", "jsonl", "parquet"]
SUFFIXES: dict[str, Format] = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet"}


class FileRejected(Exception):
    """The file cannot be loaded at all; the message names file (and column or line)."""


@dataclass
class ReadResult:
    table: pa.Table | None
    """Allow-listed columns present in the file, plus ``_line`` (None for Parquet: DuckDB streams the file)."""
    present: list[str]
    """Allow-listed columns the file has."""
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    """(line, reason) for lines that could not be parsed at all (JSONL)."""
    parquet: tuple[Path, dict[str, str], int] | None = None
    """(path, file column -> field, rows) when DuckDB reads the Parquet file itself."""

    @property
    def rows_in(self) -> int:
        rows = self.parquet[2] if self.parquet else self.table.num_rows  # type: ignore[union-attr]
        return rows + len(self.bad_lines)


def detect_format(path: Path) -> tuple[Format, bool]:
    """(format, gzipped) from the file name."""
    name = path.name.lower()
    gz = name.endswith(".gz")
    stem_suffix = Path(name[:-3] if gz else name).suffix
    fmt = SUFFIXES.get(stem_suffix)
    if fmt is None:
        raise FileRejected(
            f"{path}: unknown file type {stem_suffix or '(none)'!r}; expected one of "
            f"{', '.join(sorted(SUFFIXES))} (optionally .gz)"
        )
    return fmt, gz


def _raw_bytes(path: Path, gz: bool) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FileRejected(f"{path}: cannot read: {exc.strerror}") from None
    if not data:
        raise FileRejected(f"{path}: the file is empty (0 bytes)")
    if gz:
        try:
            data = gzip.decompress(data)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise FileRejected(f"{path}: broken or truncated gzip: {exc}") from None
        if not data:
            raise FileRejected(f"{path}: the file is empty after gunzip")
    return data


def _check_utf8(path: Path, data: bytes) -> None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FileRejected(f"{path}: line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def _field_names(names: list[str], allowed: list[str], rename: dict[str, str]) -> dict[str, str]:
    """File column -> field, for the file's columns that are allowed (after renaming)."""
    out: dict[str, str] = {}
    for n in names:
        field_name = rename.get(n.lower(), n)
        if field_name in allowed and field_name not in out.values():
            out[n] = field_name
    return out


def read_csv(path: Path, gz: bool, allowed: list[str], rename: dict[str, str]) -> ReadResult:
    data = _raw_bytes(path, gz)
    _check_utf8(path, data)
    try:
        header = pl.read_csv(io.BytesIO(data), n_rows=0, infer_schema=False).columns
    except pl.exceptions.PolarsError as exc:
        raise FileRejected(f"{path}: line 1: not a readable CSV header: {str(exc).splitlines()[0]}") from None
    mapping = _field_names(header, allowed, rename)
    if not mapping:
        df = pl.DataFrame({"_line": pl.Series([], dtype=pl.Int64)})
        return ReadResult(df.to_arrow(), [])
    try:
        df = pl.read_csv(io.BytesIO(data), columns=list(mapping), infer_schema=False)
    except pl.exceptions.PolarsError as exc:
        raise FileRejected(f"{path}: not a readable CSV: {str(exc).splitlines()[0]}") from None
    # line 1 is the header, so the first data row is line 2; a blank line is not a row
    df = (df.rename(mapping).with_row_index("_line", offset=2).with_columns(pl.col("_line").cast(pl.Int64))
          .filter(~pl.all_horizontal(pl.exclude("_line").is_null())))
    return ReadResult(df.to_arrow(), list(mapping.values()))


def _as_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def json_lines(text: str, numbers_as_text: bool) -> tuple[list[tuple[int, dict]], list[tuple[int, str]]]:
    """(line, object) for each JSON object line, and (line, reason) for lines that are not one. Blank lines skipped."""
    records: list[tuple[int, dict]] = []
    bad: list[tuple[int, str]] = []
    kwargs = {"parse_float": str, "parse_int": str} if numbers_as_text else {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw, **kwargs)
        except json.JSONDecodeError as exc:
            bad.append((lineno, f"not valid JSON ({exc.msg} at column {exc.colno})"))
            continue
        if not isinstance(obj, dict):
            bad.append((lineno, "not a JSON object"))
            continue
        records.append((lineno, obj))
    return records, bad


def read_jsonl(path: Path, gz: bool, allowed: list[str], rename: dict[str, str]) -> ReadResult:
    data = _raw_bytes(path, gz)
    _check_utf8(path, data)
    cols: dict[str, list[str | None]] = {c: [] for c in allowed}
    lines: list[int] = []
    seen: set[str] = set()
    # numbers stay text: exact decimals, no float rounding
    records, bad = json_lines(data.decode("utf-8"), numbers_as_text=True)
    for lineno, obj in records:
        if rename:
            obj = {rename.get(k.lower(), k): v for k, v in obj.items()}
        lines.append(lineno)
        for c in allowed:
            if c in obj:
                seen.add(c)
            cols[c].append(_as_text(obj.get(c)))
    present = [c for c in allowed if c in seen]
    arrays = {c: pa.array(cols[c], type=pa.string()) for c in present}
    arrays["_line"] = pa.array(lines, type=pa.int64())
    return ReadResult(pa.table(arrays), present, bad)


def read_parquet(path: Path, allowed: list[str], rename: dict[str, str]) -> ReadResult:
    """Parquet is not read here: DuckDB streams it (bounded memory whatever the file's size)."""
    try:
        meta = pq.read_metadata(path)
        mapping = _field_names(meta.schema.to_arrow_schema().names, allowed, rename)
    except (pa.ArrowException, OSError) as exc:
        raise FileRejected(f"{path}: not a readable Parquet file: {exc}") from None
    return ReadResult(None, list(mapping.values()), parquet=(path, mapping, meta.num_rows))


def read_file(path: Path, allowed: list[str], rename: dict[str, str] | None = None) -> ReadResult:
    """Read a landing file; ``rename`` maps lower-cased file column names to field names."""
    fmt, gz = detect_format(path)
    rename = rename or {}
    if fmt == "csv":
        return read_csv(path, gz, allowed, rename)
    if fmt == "jsonl":
        return read_jsonl(path, gz, allowed, rename)
    if gz:
        raise FileRejected(f"{path}: gzip-compressed Parquet is not supported; Parquet compresses itself")
    return read_parquet(path, allowed, rename)


def read_request_log(path: Path, log_format: str | None, mapping: "LogMapping", allowed: list[str]) -> ReadResult:
    """A real-world request log (see ``pipeline.logformats``) mapped onto the canonical request columns."""
    from pipeline.logformats import map_rows

    fmt, gz = detect_format(path)
    bad: list[tuple[int, str]] = []
    records: list[tuple[int, dict]] = []
    if fmt == "parquet":
        if gz:
            raise FileRejected(f"{path}: gzip-compressed Parquet is not supported; Parquet compresses itself")
        try:
            rows = pq.read_table(path).to_pylist()
        except (pa.ArrowException, OSError) as exc:
            raise FileRejected(f"{path}: not a readable Parquet file: {exc}") from None
        records = [(i + 1, r) for i, r in enumerate(rows)]
    else:
        data = _raw_bytes(path, gz)
        _check_utf8(path, data)
        if fmt == "csv":
            try:
                df = pl.read_csv(io.BytesIO(data), infer_schema=False)
            except pl.exceptions.PolarsError as exc:
                raise FileRejected(f"{path}: not a readable CSV: {str(exc).splitlines()[0]}") from None
            records = [(i + 2, r) for i, r in enumerate(df.to_dicts()) if any(v is not None for v in r.values())]
        else:
            records, bad = json_lines(data.decode("utf-8"), numbers_as_text=False)
    cols, lines, unmapped = map_rows(records, log_format, mapping, allowed)
    arrays = {c: pa.array(cols[c], type=pa.string()) for c in allowed}
    arrays["_line"] = pa.array(lines, type=pa.int64())
    return ReadResult(pa.table(arrays), list(allowed), sorted(bad + unmapped))
