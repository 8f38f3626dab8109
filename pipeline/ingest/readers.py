"""Reading landing files (CSV, JSONL, Parquet; gzip allowed) into Arrow.

A reader keeps only the allow-listed columns (so prompt text, responses and
other content never leave this module), adds ``_line`` (where each row stands in
its file) and hands typing and checking to DuckDB (``pipeline.ingest.files``): every
value arrives as text from CSV and JSONL, so the same column gets the same type
whatever the format.
"""

from __future__ import annotations

import io
import json
import zlib
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Iterable, Iterator, Mapping

import polars as pl
import pyarrow as pa

from pipeline.base.settings import MAX_FILE_BYTES, MAX_LINE_BYTES, MAX_TEXT_BYTES


class FileRejected(Exception):
    """The file cannot be loaded at all; the message names file (and column or line)."""


@dataclass(kw_only=True)
class ReadResult:
    table: pa.Table | None
    """Allow-listed columns present in the file, plus ``_line`` (None for Parquet: DuckDB streams the file)."""
    present: list[str]
    """Allow-listed columns the file has."""
    bad_lines: list[tuple[int, str]] = field(default_factory=list)
    """(line, reason) for lines that could not be parsed at all (JSONL)."""
    parquet: tuple[Path, dict[str, str], int] | None = None
    """(path, file column -> field, rows) when DuckDB reads the Parquet file itself."""
    verbatim: bool = False
    """A Parquet file that holds nothing but allow-listed columns under their own names, and no metadata beyond its
    Arrow schema (``pipeline.ingest.files`` may keep it byte for byte as its lake file: a copy stores nothing else)."""
    unknown: list[str] = field(default_factory=list)
    """The file's columns that are not allow-listed (canonical files: left out, and named)."""
    notes: list[str] = field(default_factory=list)
    """What the reader did to a value on the way in that a reader of the ledger should know (a float's artefact
    normalised): said with the file's result and kept in the manifest."""
    nothing_read: str | None = None
    """Why a file that holds records gave no row, where its reader knows (a scrape of none of the metrics the ledger
    reads): the file is then loaded as nothing, rather than rejected as holding no rows (``nothing``)."""

    def nothing(self, why: str) -> None:
        """No row: the file is loaded as nothing, ``why`` said with its result and kept in the manifest."""
        self.nothing_read = why
        self.notes.append(f"nothing loaded: {why}")

    @property
    def rows_in(self) -> int:
        rows = self.parquet[2] if self.parquet else self.table.num_rows  # type: ignore[union-attr]
        return rows + len(self.bad_lines)


@dataclass(frozen=True)
class Limits:
    """Size limits a file must keep (settings ``[ledger] max_line_bytes`` / ``max_file_bytes``)."""

    max_line_bytes: int = MAX_LINE_BYTES
    max_file_bytes: int = MAX_FILE_BYTES
    max_text_bytes: int = MAX_TEXT_BYTES


LIMITS: ContextVar[Limits] = ContextVar("LIMITS", default=Limits())
_CHUNK = 4 * 2**20


@contextmanager
def limited(limits: Limits) -> Iterator[None]:
    """Read files under ``limits`` in this block."""
    token = LIMITS.set(limits)
    try:
        yield
    finally:
        LIMITS.reset(token)


def _chunks(path: Path, gz: bool) -> Iterator[bytes]:
    """The file's bytes (decompressed), a bounded chunk at a time: a gzip bomb never inflates at once."""
    with path.open("rb") as fh:
        if not gz:
            yield from iter(lambda: fh.read(_CHUNK), b"")
            return
        inflate = zlib.decompressobj(wbits=31)  # gzip container
        while True:
            data = inflate.unconsumed_tail or fh.read(_CHUNK)
            if not data:
                break
            out = inflate.decompress(data, _CHUNK)
            if out:
                yield out
            if inflate.eof:
                rest = inflate.unused_data + fh.read()
                if rest.strip(b"\0"):  # concatenated gzip members: inflate the next one
                    inflate = zlib.decompressobj(wbits=31)
                    fh = io.BytesIO(rest)  # noqa: PLW2901 (small: what follows a member)
                    continue
                break
        if not inflate.eof:
            raise EOFError("compressed file ended before the end-of-stream marker was reached")


def _checked_chunks(path: Path, gz: bool) -> Iterator[bytes]:
    """The file's bytes (decompressed) a bounded chunk at a time, rejected whole once it passes ``max_file_bytes`` or
    has a line longer than ``max_line_bytes`` (checked while streaming, so memory stays bounded by the limits), or
    when it is empty."""
    lim = LIMITS.get()
    total, run, lines = 0, 0, 1
    try:
        for chunk in _chunks(path, gz):
            total += len(chunk)
            if total > lim.max_file_bytes:
                raise FileRejected(
                    f"{path}: larger than {lim.max_file_bytes:,} bytes{' decompressed' if gz else ''} "
                    "([ledger] max_file_bytes); rejected whole, nothing loaded"
                )
            run, longest_line = _scan_lines(chunk, run, lines, lim.max_line_bytes)
            if longest_line:
                raise FileRejected(
                    f"{path}: line {longest_line} is longer than {lim.max_line_bytes:,} bytes "
                    "([ledger] max_line_bytes); rejected whole, nothing loaded"
                )
            lines += chunk.count(b"\n")
            yield chunk
    except OSError as exc:
        raise FileRejected(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (EOFError, zlib.error) as exc:
        raise FileRejected(f"{path}: broken or truncated gzip: {exc}") from None
    if not total:
        raise FileRejected(f"{path}: the file is empty{' after gunzip' if gz else ' (0 bytes)'}")


def raw_bytes(path: Path, gz: bool) -> bytes:
    """The whole file, decompressed, within the limits ``_checked_chunks`` keeps."""
    return b"".join(_checked_chunks(path, gz))


def text_lines(path: Path, gz: bool) -> Iterator[tuple[int, str]]:
    """(line number, text) for each line of the file, read a bounded chunk at a time within the limits
    ``_checked_chunks`` keeps: a large file is never held whole. A file that is not UTF-8 is rejected naming the line
    and the byte; the reader has read no further, and nothing it yielded may be loaded."""
    rest, line, offset = b"", 1, 0
    for chunk in _checked_chunks(path, gz):
        data = rest + chunk if rest else chunk  # ``rest`` is one unfinished line: at most max_line_bytes
        cut = data.rfind(b"\n") + 1
        rest = data[cut:]
        if cut:
            text = _decode_at(path, memoryview(data)[:cut], line, offset)  # the view copies no bytes
            del data
            pieces = text.split("\n")
            del text
            pieces.pop()  # after the last newline: nothing
            for piece in pieces:
                yield line, piece
                line += 1
            del pieces  # before the next chunk is read
            offset += cut
    if rest:
        yield line, _decode_at(path, rest, line, offset)


def _decode_at(path: Path, data: bytes | memoryview, line: int, offset: int) -> str:
    """``data`` (starting at ``line`` and byte ``offset`` of the file) as UTF-8 text, or the file rejected."""
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError as exc:
        line += bytes(data[: exc.start]).count(b"\n")
        raise FileRejected(
            f"{path}: line {line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {offset + exc.start})"
        ) from None


def _scan_lines(chunk: bytes, run: int, line: int, limit: int) -> tuple[int, int]:
    """(length of the line still open at the chunk's end, number of a line over ``limit`` or 0)."""
    first = chunk.find(b"\n")
    if first == -1:
        run += len(chunk)
        return run, (line if run > limit else 0)
    if run + first > limit:
        return 0, line
    if limit < _CHUNK:  # lines inside a chunk can pass a small limit: measure each (tests, tight settings)
        for i, piece in enumerate(chunk[first + 1 :].split(b"\n")[:-1], start=1):
            if len(piece) > limit:
                return 0, line + i
    tail = len(chunk) - chunk.rfind(b"\n") - 1
    return tail, (line + chunk.count(b"\n") if tail > limit else 0)


def decode_utf8(path: Path, data: bytes) -> str:
    """``data`` as UTF-8 text; a file that is not is rejected naming the line and the byte."""
    return _decode_at(path, data, 1, 0)


def utf8_text(path: Path, gz: bool) -> str:
    """The whole file (within the size limits of ``raw_bytes``) as UTF-8 text, decoded once."""
    return decode_utf8(path, raw_bytes(path, gz))


#: Fields of a request or response's content: never read (no prompt text is stored), and left out quietly
CONTENT_FIELDS = frozenset(
    {"messages", "prompt", "prompts", "response", "responses", "content", "reasoning_content", "tool_calls",
     "completion", "choices", "input", "output", "system", "instructions", "text"}
)  # fmt: skip


def unknown_columns_message(path: Path, unknown: list[str], allowed: list[str], extra: tuple[str, ...]) -> str | None:
    """The rejection of a canonical file with columns the ledger does not know (a misspelt optional column would be
    dropped without a word: ``cluster`` for ``cluster_id`` makes a cluster's cost shared); None when every unknown
    column is content (never read) or listed in ``[ingest] extra_columns``."""
    import difflib

    left = [n for n in unknown if n.lower() not in CONTENT_FIELDS and n not in extra]
    if not left:
        return None
    hints = []
    for name in left:
        close = difflib.get_close_matches(name.lower(), allowed, n=1, cutoff=0.6)
        if close:
            hints.append(f"{close[0]} for {name}")
    hint = f"; did you mean {', '.join(hints)}?" if hints else ""
    return (
        f"{path}: unknown column(s) {', '.join(left)} (line 1 / header){hint} Nothing loaded. Rename it, or list "
        "columns the ledger should leave out in [ingest] extra_columns"
    )


def _field_names(names: list[str], allowed: list[str], rename: dict[str, str]) -> dict[str, str]:
    """File column -> field, for the file's columns that are allowed (after renaming)."""
    out: dict[str, str] = {}
    for n in names:
        field_name = rename.get(n.lower(), n)
        if field_name in allowed and field_name not in out.values():
            out[n] = field_name
    return out


def read_csv(path: Path, gz: bool, allowed: list[str], rename: dict[str, str]) -> ReadResult:
    data = raw_bytes(path, gz)
    decode_utf8(path, data)  # a file that is not UTF-8 is rejected whole, naming the line and the byte
    try:
        header = pl.read_csv(io.BytesIO(data), n_rows=0, infer_schema=False).columns
    except pl.exceptions.PolarsError as exc:
        raise FileRejected(f"{path}: line 1: not a readable CSV header: {str(exc).splitlines()[0]}") from None
    for n in header:  # polars names a repeated header column "<name>_duplicated_<k>"
        base, dup, _ = n.rpartition("_duplicated_")
        if dup and base in header:
            raise FileRejected(
                f"{path}: column {base!r}: {base!r} appears twice (line 1 / header); an ambiguous file is not loaded, "
                "nothing loaded"
            )
    repeated_columns(path, header, rename)
    mapping = _field_names(header, allowed, rename)
    unknown = [n for n in header if n not in mapping]
    if not mapping:
        df = pl.DataFrame({"_line": pl.Series([], dtype=pl.Int64)})
        return ReadResult(table=df.to_arrow(), present=[], unknown=unknown)
    try:
        df = pl.read_csv(io.BytesIO(data), columns=list(mapping), infer_schema=False)
    except pl.exceptions.PolarsError as exc:
        raise FileRejected(f"{path}: not a readable CSV: {str(exc).splitlines()[0]}") from None
    # line 1 is the header, so the first data row is line 2; a blank line is not a row
    df = (
        df.rename(mapping)
        .with_row_index("_line", offset=2)
        .with_columns(pl.col("_line").cast(pl.Int64))
        .filter(~pl.all_horizontal(pl.exclude("_line").is_null()))
    )
    return ReadResult(table=df.to_arrow(), present=list(mapping.values()), unknown=unknown)


def _as_text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


class RepeatedKey(ValueError):
    """A JSON object names one key twice: which value counts is a guess (Python keeps the last, others the first)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def repeated_key(pairs: list[tuple[str, object]]) -> str | None:
    """The first key a JSON object's (key, value) pairs name a second time, or None."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key
        seen.add(key)
    return None


def _no_repeated_keys(pairs: list[tuple[str, object]]) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise RepeatedKey(str(repeated_key(pairs))[:60])
    return obj


def json_objects(
    lines: Iterable[tuple[int, str]], numbers_as_text: bool, bad: list[tuple[int, str]]
) -> Iterator[tuple[int, dict]]:
    """(line, object) for each JSON object line; (line, reason) for a line that is not one goes to ``bad``. Blank
    lines are skipped."""
    kwargs: dict = {"parse_float": str, "parse_int": str} if numbers_as_text else {}
    kwargs["object_pairs_hook"] = _no_repeated_keys
    for lineno, raw in lines:
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw, **kwargs)
        except RepeatedKey as exc:
            bad.append((lineno, f"the key {exc.key!r} appears twice in one object: an ambiguous record is not loaded"))
            continue
        except json.JSONDecodeError as exc:
            bad.append((lineno, f"not valid JSON ({exc.msg} at column {exc.colno})"))
            continue
        except RecursionError:
            bad.append((lineno, "JSON nested too deeply to read"))
            continue
        if not isinstance(obj, dict):
            bad.append((lineno, "not a JSON object"))
            continue
        yield lineno, obj


def json_lines(text: str, numbers_as_text: bool) -> tuple[list[tuple[int, dict]], list[tuple[int, str]]]:
    """(line, object) for each JSON object line of ``text``, and (line, reason) for lines that are not one."""
    bad: list[tuple[int, str]] = []
    records = list(json_objects(enumerate(text.split("\n"), start=1), numbers_as_text, bad))
    return records, bad


def json_document(text: str, not_records: str) -> tuple[list[tuple[int, dict]], list[tuple[int, str]]]:
    """A whole-file JSON object or array of objects (an indented export or result file), else JSON lines; numbers
    stay decimal text. ``not_records`` is the reason when the document is neither."""
    try:
        whole = json.loads(text, parse_float=str, parse_int=str, object_pairs_hook=_no_repeated_keys)
    except RepeatedKey as exc:
        return [], [(1, f"the key {exc.key!r} appears twice in one object: an ambiguous document is not loaded")]
    except (json.JSONDecodeError, RecursionError):
        return json_lines(text, numbers_as_text=True)
    if isinstance(whole, dict):
        return [(1, whole)], []
    if isinstance(whole, list) and all(isinstance(r, dict) for r in whole):
        return [(i + 1, r) for i, r in enumerate(whole)], []
    return [], [(1, not_records)]


#: The widest exponent a number read from a file may have: 1e60 and 1e-60 are past any figure the ledger keeps
#: (DECIMAL(38, x)), and a number within them multiplies and divides by the readers' constants without leaving
#: Python's decimal context (1e2000000 would overflow it)
MAX_EXPONENT = 60


def finite_decimal(value: object, where: str, error: type[ValueError] = ValueError) -> Decimal:
    """A number given as JSON text or a number, exactly; ``error`` (naming ``where``) if it is not a finite one, or
    one whose exponent lies past ``MAX_EXPONENT`` either way."""
    try:
        d = Decimal(str(value))
    except InvalidOperation:
        raise error(f"{where} is not a number: {str(value)[:40]!r}") from None
    if not d.is_finite():
        raise error(f"{where} is not a finite number: {str(value)[:40]}")
    if d and abs(d.adjusted()) > MAX_EXPONENT:
        beyond = f"beyond 1e{MAX_EXPONENT} or 1e-{MAX_EXPONENT}"
        raise error(f"{where} is not a number the ledger can hold: {str(value)[:40]} ({beyond})")
    return d


class TextColumns:
    """Rows of text values gathered column by column into Arrow, a batch at a time: a Python string costs several
    times its Arrow form, so a file of millions of records holds only its Arrow columns and one batch of lists."""

    BATCH = 65_536

    def __init__(self, columns: list[str]) -> None:
        self.columns = columns
        self._values: dict[str, list[str | None]] = {c: [] for c in columns}
        self._lines: list[int] = []
        self._done: dict[str, list[pa.Array]] = {c: [] for c in columns}
        self._done_lines: list[pa.Array] = []

    def append(self, line: int, row: Mapping[str, object]) -> None:
        """One row: ``row``'s value (as text) of each column, None where it has none."""
        self._lines.append(line)
        for c in self.columns:
            self._values[c].append(_as_text(row.get(c)))
        if len(self._lines) >= self.BATCH:
            self._flush()

    def _flush(self) -> None:
        for c in self.columns:
            self._done[c].append(pa.array(self._values[c], type=pa.string()))
            self._values[c] = []
        self._done_lines.append(pa.array(self._lines, type=pa.int64()))
        self._lines = []

    def table(self, columns: list[str] | None = None) -> pa.Table:
        """The rows so far: ``columns`` (all by default) and ``_line``."""
        self._flush()
        arrays = {c: pa.chunked_array(self._done[c], type=pa.string()) for c in columns or self.columns}
        arrays["_line"] = pa.chunked_array(self._done_lines, type=pa.int64())
        return pa.table(arrays)


def read_jsonl(path: Path, gz: bool, allowed: list[str], rename: dict[str, str]) -> ReadResult:
    """One record a line, read a chunk at a time; numbers stay text (exact decimals, no float rounding)."""
    cols = TextColumns(allowed)
    keys: set[str] = set()
    bad: list[tuple[int, str]] = []
    for lineno, obj in json_objects(text_lines(path, gz), numbers_as_text=True, bad=bad):
        if rename:
            renamed = {rename.get(k.lower(), k): v for k, v in obj.items()}
            if len(renamed) != len(obj):
                bad.append((lineno, "two keys name one column once renamed: an ambiguous record is not loaded"))
                continue
            obj = renamed
        nested = next((c for c in allowed if isinstance(obj.get(c), (dict, list))), None)
        if nested is not None:
            bad.append((lineno, f"{nested} holds a list or an object, not a single value"))
            continue
        keys.update(obj)
        cols.append(lineno, obj)
    present = [c for c in allowed if c in keys]
    return ReadResult(table=cols.table(present), present=present, bad_lines=bad, unknown=sorted(keys - set(allowed)))


def repeated_columns(path: Path, names: list[str], rename: dict[str, str]) -> None:
    """A file naming one column twice (or two columns that name one field once renamed) is rejected: which one
    counts would be a guess."""
    seen: dict[str, str] = {}
    for n in names:
        field_name = rename.get(n.lower(), n)
        if field_name in seen:
            same = f"{n!r} appears twice" if seen[field_name] == n else f"{seen[field_name]!r} and {n!r} both name it"
            raise FileRejected(
                f"{path}: column {field_name!r}: {same} (header); an ambiguous file is not loaded, nothing loaded"
            )
        seen[field_name] = n


def mapped_result(
    cols: dict[str, list], lines: list[int], allowed: list[str], bad: list[tuple[int, str]]
) -> ReadResult:
    """The result of a reader that maps records onto the canonical columns (all of them, as text), one line each."""
    arrays = {c: pa.array(cols[c], type=pa.string()) for c in allowed}
    arrays["_line"] = pa.array(lines, type=pa.int64())
    return ReadResult(table=pa.table(arrays), present=list(allowed), bad_lines=sorted(bad))
