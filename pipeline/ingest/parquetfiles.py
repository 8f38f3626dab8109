"""Parquet landing files, checked before anything reads them: what the footer promises (no row, a footer too large to
parse, a column named twice) and what the text columns decode to (a dictionary "bomb" of one long value over every
row, or split over many row groups). DuckDB then streams the file; nothing here decodes what it guards against."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.ingest.readers import LIMITS, FileRejected, ReadResult, _field_names, repeated_columns


def read_parquet(path: Path, allowed: list[str], rename: dict[str, str]) -> ReadResult:
    """Parquet is not read here: DuckDB streams it (bounded memory whatever the file's size), once
    ``parquet_metadata`` has checked what its footer promises."""
    meta, schema = parquet_metadata(path)
    mapping = _field_names(schema.names, allowed, rename)
    repeated_columns(path, schema.names, rename)
    parquet_text_sizes(path, meta, set(mapping))
    verbatim = (
        all(src == dst for src, dst in mapping.items())
        and list(mapping) == schema.names
        and set(meta.metadata or {}) <= _SCHEMA_ONLY_METADATA
        and all(f.metadata is None and not pa.types.is_nested(f.type) for f in schema)
    )
    unknown = [n for n in schema.names if n not in mapping]
    return ReadResult(
        table=None,
        present=list(mapping.values()),
        parquet=(path, mapping, meta.num_rows),
        verbatim=verbatim,
        unknown=unknown,
    )


#: the largest Parquet footer read (bytes): parsing one takes about 12 times its size, and a footer of 100,000
#: one-row row groups (95 MB) took 1.2 GB; a file of a million rows a row group needs a few kilobytes
MAX_PARQUET_FOOTER_BYTES = 16 * 2**20


def parquet_metadata(path: Path) -> tuple[pq.FileMetaData, pa.Schema]:
    """The footer of a Parquet file and its Arrow schema; the file rejected when it is unreadable, holds no row (an
    empty file of any format is rejected, not loaded as nothing) or has a footer too large to parse
    (``MAX_PARQUET_FOOTER_BYTES``, told from the file's last 8 bytes before anything parses it)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            if fh.tell() >= 12:
                fh.seek(-8, 2)
                tail = fh.read(8)
                footer = int.from_bytes(tail[:4], "little")
                if tail[4:] == b"PAR1" and footer > MAX_PARQUET_FOOTER_BYTES:
                    raise FileRejected(
                        f"{path}: its footer (the file's metadata) is {footer:,} bytes, more than "
                        f"{MAX_PARQUET_FOOTER_BYTES:,}: a file of very many row groups, which takes gigabytes to "
                        "open (write it with larger row groups, a million rows each); rejected whole before it was "
                        "read, nothing loaded"
                    )
        meta = pq.read_metadata(path)
        schema = meta.schema.to_arrow_schema()
    except (pa.ArrowException, OSError) as exc:
        raise FileRejected(f"{path}: not a readable Parquet file: {exc}") from None
    if meta.num_rows == 0:
        raise FileRejected(f"{path}: the Parquet file holds no rows; rejected whole, nothing loaded")
    return meta, schema


def parquet_text_sizes(path: Path, meta: pq.FileMetaData, columns: set[str]) -> None:
    """Check, before anything reads them, what the Parquet file's text ``columns`` (named) decode to. A text value over
    ``max_text_bytes`` is a bad row (the checks quarantine it), but many of them are a file that decodes to gigabytes
    from kilobytes (one long string dictionary-encoded over every row): when such values decode to more than
    ``max_line_bytes``, in one column chunk or added up over every row group and column of the file (a bomb split into
    many row groups, each under the bound), the file is rejected whole before it is read.

    The footer bounds a chunk: no value is longer than its uncompressed size, and it decodes to at most that times its
    rows. Only a chunk whose bound passes the limits is read to measure it, dictionary-encoded (its distinct values
    once, and an index per row), so the measuring never decodes what it guards against."""
    lim = LIMITS.get()
    long_total, long_groups = 0, set()
    opened: list[pq.ParquetFile] = []  # opened once, with the footer read above: a footer of 100,000 row groups
    # parsed again for each chunk measured took minutes and gigabytes
    for rg in range(meta.num_row_groups):
        group = meta.row_group(rg)
        for i in range(group.num_columns):  # the leaf columns (a list or struct has several)
            chunk, name = group.column(i), group.column(i).path_in_schema
            if name.split(".")[0] not in columns or chunk.physical_type not in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"):
                continue
            size, rows = chunk.total_uncompressed_size, group.num_rows
            if size <= lim.max_text_bytes:
                continue  # no value can pass the text bound
            dictionary = chunk.has_dictionary_page and "." not in name
            if "." in name:  # a leaf of a list or struct (its rows are quarantined): held to the footer's bound
                if size * rows <= lim.max_line_bytes:
                    continue
                longest, decoded = size, size * rows
            elif dictionary:  # measured, however small its footer's bound: many small bombs add up
                if not opened:
                    opened.append(_dictionary_reader(path, meta, columns))
                longest, decoded = _dictionary_sizes(path, opened[0], rg, name)
            else:
                longest, decoded = size, size  # plain values decode to what the footer says
            if longest <= lim.max_text_bytes:
                continue
            if decoded > lim.max_line_bytes:
                raise FileRejected(
                    f"{path}: column {name!r}, row group {rg}: its {rows:,} values decode to {decoded:,} bytes "
                    f"(values of up to {longest:,} bytes, above [ingest] max_text_bytes {lim.max_text_bytes:,}; "
                    f"more than [ledger] max_line_bytes {lim.max_line_bytes:,} in one row group); rejected whole "
                    "before it was read, nothing loaded"
                )
            if not dictionary:
                continue  # the file's own bytes: bounded by max_file_bytes as any file is
            long_total += decoded
            long_groups.add(rg)
            if long_total > lim.max_line_bytes:
                raise FileRejected(
                    f"{path}: text columns with values above [ingest] max_text_bytes {lim.max_text_bytes:,} bytes "
                    f"decode to {long_total:,} bytes over {len(long_groups):,} row groups (up to row group {rg}), "
                    f"more than [ledger] max_line_bytes {lim.max_line_bytes:,}; rejected whole before it was read, "
                    "nothing loaded"
                )


def _dictionary_reader(path: Path, meta: pq.FileMetaData, columns: set[str]) -> pq.ParquetFile:
    """The file opened to measure its text columns' chunks as dictionaries (``meta``: its footer, read once)."""
    try:
        return pq.ParquetFile(path, metadata=meta, read_dictionary=sorted(c for c in columns if c in meta.schema.names))
    except (pa.ArrowException, OSError) as exc:
        raise FileRejected(f"{path}: not a readable Parquet file: {exc}") from None


def _dictionary_sizes(path: Path, pf: pq.ParquetFile, row_group: int, column: str) -> tuple[int, int]:
    """(longest value, bytes all values decode to) of a dictionary-encoded text column chunk, read without decoding."""
    import pyarrow.compute as pc

    try:
        values = pf.read_row_group(row_group, columns=[column]).column(0)
    except (pa.ArrowException, OSError) as exc:
        raise FileRejected(f"{path}: not a readable Parquet file: {exc}") from None
    longest, decoded = 0, 0
    for part in values.chunks:
        if not isinstance(part, pa.DictionaryArray):
            part = part.dictionary_encode()
        lengths = pc.binary_length(part.dictionary)
        if len(lengths):
            longest = max(longest, pc.max(lengths).as_py() or 0)
            decoded += pc.sum(pc.take(lengths, part.indices)).as_py() or 0
    return longest, decoded


#: File metadata keys a verbatim Parquet file may carry: the Arrow schema pyarrow and polars write, pandas' index note
_SCHEMA_ONLY_METADATA = {b"ARROW:schema", b"pandas"}
