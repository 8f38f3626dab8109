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
from typing import Literal

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

Format = Literal["csv", "jsonl", "parquet"]
SUFFIXES: dict[str, Format] = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".parquet": "parquet"}


class FileRejected(Exception):
    """The file cannot be loaded at all; the message names file (and column or line)."""


@dataclass
class ReadResult:
    table: pa.Table
    """Allow-listed columns present in the file, plus ``_line``."""
    present: list[str]
    """Allow-listed columns the file has."""
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    """(line, reason) for lines that could not be parsed at all (JSONL)."""

    @property
    def rows_in(self) -> int:
        return self.table.num_rows + len(self.bad_lines)


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


def read_csv(path: Path, gz: bool, allowed: list[str]) -> ReadResult:
    data = _raw_bytes(path, gz)
    _check_utf8(path, data)
    header = pl.read_csv(io.BytesIO(data), n_rows=0, infer_schema=False).columns
    present = [c for c in header if c in allowed]
    if not present:
        df = pl.DataFrame({"_line": pl.Series([], dtype=pl.Int64)})
        return ReadResult(df.to_arrow(), [])
    try:
        df = pl.read_csv(io.BytesIO(data), columns=present, infer_schema=False)
    except pl.exceptions.PolarsError as exc:
        raise FileRejected(f"{path}: not a readable CSV: {str(exc).splitlines()[0]}") from None
    # line 1 is the header, so the first data row is line 2
    df = df.with_row_index("_line", offset=2).with_columns(pl.col("_line").cast(pl.Int64))
    return ReadResult(df.to_arrow(), present)


def _as_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def read_jsonl(path: Path, gz: bool, allowed: list[str]) -> ReadResult:
    data = _raw_bytes(path, gz)
    _check_utf8(path, data)
    cols: dict[str, list[str | None]] = {c: [] for c in allowed}
    lines: list[int] = []
    bad: list[tuple[int, str]] = []
    seen: set[str] = set()
    for lineno, raw in enumerate(data.decode("utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            # numbers stay text: exact decimals, no float rounding
            obj = json.loads(raw, parse_float=str, parse_int=str)
        except json.JSONDecodeError as exc:
            bad.append((lineno, f"not valid JSON ({exc.msg} at column {exc.colno})"))
            continue
        if not isinstance(obj, dict):
            bad.append((lineno, "not a JSON object"))
            continue
        lines.append(lineno)
        for c in allowed:
            if c in obj:
                seen.add(c)
            cols[c].append(_as_text(obj.get(c)))
    present = [c for c in allowed if c in seen]
    arrays = {c: pa.array(cols[c], type=pa.string()) for c in present}
    arrays["_line"] = pa.array(lines, type=pa.int64())
    return ReadResult(pa.table(arrays), present, bad)


def read_parquet(path: Path, allowed: list[str]) -> ReadResult:
    try:
        schema = pq.read_schema(path)
        present = [c for c in schema.names if c in allowed]
        table = pq.read_table(path, columns=present)
    except (pa.ArrowException, OSError) as exc:
        raise FileRejected(f"{path}: not a readable Parquet file: {exc}") from None
    table = table.append_column("_line", pa.array(range(1, table.num_rows + 1), type=pa.int64()))
    return ReadResult(table, present)


def read_file(path: Path, allowed: list[str]) -> ReadResult:
    fmt, gz = detect_format(path)
    if fmt == "csv":
        return read_csv(path, gz, allowed)
    if fmt == "jsonl":
        return read_jsonl(path, gz, allowed)
    if gz:
        raise FileRejected(f"{path}: gzip-compressed Parquet is not supported; Parquet compresses itself")
    return read_parquet(path, allowed)
