"""A file's load as one object: ``FileLoader`` takes the files of a run one by one (``submit``), overlapping one
file's Great Expectations check with the next file's read, and reports each file once it is loaded, skipped or
rejected (``on_done``); ``drain`` settles the last one, ``abort`` undoes what is not settled.

GX checks a file in its process while the next file is staged: the file's rows are written in a transaction left open
(``open_file``), inside which the next file is recognised, checked and deduplicated as if the file were loaded; the
file is committed once GX agrees (``settle_file``). A file is still loaded whole or not at all, and nothing is
committed before GX has validated it. A file's own failure (``FILE_FAILURES``) rejects that file alone: when it
aborted the transaction the file before waits in, that one is loaded again on its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import duckdb

from pipeline.ingest.files import (
    FILE_FAILURES,
    FileResult,
    IngestOptions,
    LoadingFile,
    abandon_file,
    discard_staged,
    file_failed,
    ingest_file,
    open_file,
    settle_file,
    stage_file,
)
from pipeline.storage.lake import HashAhead
from pipeline.storage.store import Store


class FileLoader:
    """The files of one run, loaded in order into ``con``; ``on_done`` hears of each file once."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        store: Store,
        *,
        run_id: str,
        options: IngestOptions,
        on_done: Callable[[FileResult], None],
    ) -> None:
        self.con, self.store, self.run_id, self.options, self.on_done = con, store, run_id, options, on_done
        self._opened: LoadingFile | None = None
        """A file written in the open transaction, waiting for GX."""
        self._staged: LoadingFile | FileResult | None = None
        """The next file, staged inside that transaction."""

    def submit(self, kind: str, path: Path, identity: str, hashes: HashAhead) -> bool:
        """Stage the file while the one before waits for GX, settle that one, open this one. False when the file
        must be submitted again (the file before failed, rolling back the work done in its transaction)."""
        try:
            staged = stage_file(
                self.con,
                kind,
                path,
                self.store,
                run_id=self.run_id,
                options=self.options,
                identity=identity,
                hashes=hashes,
            )
        except FILE_FAILURES as exc:
            # the failure may have aborted the transaction the file before waits in: that one loads again on its own
            if self._opened is not None:
                retry, self._opened = self._opened, None
                abandon_file(self.con, retry)
                self._load_alone(retry)
            self.on_done(self._failed(kind, path, identity, exc))
            return True
        self._staged = staged
        if not self.drain():
            if isinstance(staged, LoadingFile):
                discard_staged(self.con, staged)
            self._staged = None
            return False
        if isinstance(staged, LoadingFile):
            self._opened = open_file(self.con, staged, self.store, self.run_id)
            self._staged = None
        else:
            self._staged = None
            self.on_done(staged)
        return True

    def drain(self) -> bool:
        """Commit the file waiting for GX once GX agrees; False when it was rejected instead (rolled back)."""
        if self._opened is None:
            return True
        settled, self._opened = self._opened, None
        try:
            self.on_done(settle_file(self.con, settled))
        except FILE_FAILURES as exc:
            self.on_done(self._failed(settled.kind, settled.path, settled.identity, exc))
            return False
        return True

    def abort(self) -> None:
        """After an error that ends the run: the file waiting for GX and the one staged are undone."""
        if self._opened is not None:
            abandon_file(self.con, self._opened)
            self._opened = None
        if isinstance(self._staged, LoadingFile):
            discard_staged(self.con, self._staged)  # staged in a transaction rolled back: its temp file and tables
        self._staged = None

    def _load_alone(self, f: LoadingFile) -> None:
        """Load one file in a transaction of its own (its overlapped load was rolled back by the next file's
        failure)."""
        try:
            result = ingest_file(
                self.con, f.kind, f.path, self.store, run_id=self.run_id, options=self.options, identity=f.identity
            )
        except FILE_FAILURES as exc:
            result = self._failed(f.kind, f.path, f.identity, exc)
        self.on_done(result)

    def _failed(self, kind: str, path: Path, identity: str, exc: BaseException) -> FileResult:
        return file_failed(self.con, kind, path, identity=identity, run_id=self.run_id, exc=exc)
