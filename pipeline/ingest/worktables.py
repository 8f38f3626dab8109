"""The temporary relations a file's rows pass through while it is loaded, named in one place.

A file being loaded owns one ``WorkTables`` (``pipeline.ingest.loading.LoadingFile.tables``): its rows as DuckDB
sees them (``incoming``), every row typed and flagged (``flags``), the bad rows with one flag per expectation
(``flag_detail``), the rows not to load with their reason (``verdicts``), the tables that find duplicates
(``dup_first``, ``hit_keys``, ``existing``), in a correction file the rows that restate earlier ones
(``superseding``), and the lines that were no record at all (``bad_lines``). They live on the run's connection
between the file's read and its commit, and are dropped with ``clean_up``.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from pipeline.ingest.readers import ReadResult
from pipeline.storage.catalog import sql_literal


@dataclass(frozen=True, kw_only=True)
class WorkTables:
    incoming: str = "incoming_arrow"
    flags: str = "flags"
    flag_detail: str = "flag_detail"
    verdicts: str = "verdicts"
    dup_first: str = "dup_first"
    hit_keys: str = "hit_keys"
    existing: str = "existing_rows"
    superseding: str = "superseding"
    bad_lines: str = "bad_lines_arrow"

    @property
    def good_rows(self) -> str:
        """A FROM clause: the rows that load (``flags f`` without a verdict)."""
        return f"{self.flags} f ANTI JOIN {self.verdicts} v ON v._line = f._line"

    @property
    def good(self) -> str:
        """A subquery: the rows that load, every column of ``flags``."""
        return f"(SELECT * FROM {self.flags} f WHERE f._line NOT IN (SELECT _line FROM {self.verdicts}))"

    def register(self, con: duckdb.DuckDBPyConnection, read: ReadResult) -> None:
        """Make the file's rows available to DuckDB as ``incoming`` (its columns, plus _line)."""
        if read.parquet is None:
            con.register(self.incoming, read.table)
            return
        path, mapping, _ = read.parquet
        cols = ", ".join(f'"{src}" AS "{dst}"' for src, dst in mapping.items())
        con.execute(
            f"CREATE OR REPLACE TEMP VIEW {self.incoming} AS SELECT {cols}{', ' if cols else ''}"
            f"CAST(file_row_number + 1 AS BIGINT) AS _line "
            f"FROM read_parquet({sql_literal(str(path))}, file_row_number = true)"
        )

    def drop_tables(self, con: duckdb.DuckDBPyConnection) -> None:
        """Drop the tables built from the file's rows (one call: a round trip from Python each)."""
        tables = (self.flags, self.verdicts, self.dup_first, self.hit_keys, self.existing, self.superseding)
        con.execute(
            f"DROP VIEW IF EXISTS {self.flag_detail}; " + " ".join(f"DROP TABLE IF EXISTS {t};" for t in tables)
        )

    def clean_up(self, con: duckdb.DuckDBPyConnection, read: ReadResult | None) -> None:
        """After a file, loaded or not: its incoming rows and every table built from them."""
        if read is not None:
            if read.parquet:
                con.execute(f"DROP VIEW IF EXISTS {self.incoming}")
            else:
                con.unregister(self.incoming)
        self.drop_tables(con)
