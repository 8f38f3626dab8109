"""Loading files and whole landing folders, with a run log.

``load_files`` ingests a list of (kind, path); ``nightly`` walks a landing folder
(one subfolder per kind), loads every file in it and builds the models. Both are
safe to run twice: a file whose content is already in the manifest is skipped.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import duckdb

from pipeline.build import BuildResult, build
from pipeline.ingest import FileResult, ingest_file, init_ledger
from pipeline.readers import SUFFIXES
from pipeline.settings import Settings
from schemas.tables import KINDS

#: Load order inside a landing folder: reference data first (only cosmetic: the build runs after all loads).
KIND_ORDER = ("prices", "hardware", "cluster-charges", "opex", "invoices", "requests", "outcomes")
assert set(KIND_ORDER) == set(KINDS)


@dataclass
class RunSummary:
    run_id: str
    command: str
    files: list[FileResult] = field(default_factory=list)
    build: BuildResult | None = None
    seconds: float = 0.0
    unknown_entries: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def rows_in(self) -> int:
        return sum(f.rows_in for f in self.files)

    @property
    def rows_loaded(self) -> int:
        return sum(f.rows_loaded for f in self.files)

    @property
    def rows_quarantined(self) -> int:
        return sum(f.rows_quarantined for f in self.files)

    @property
    def outcome(self) -> str:
        return "files_rejected" if self.count("rejected") else "ok"

    def as_dict(self) -> dict:
        return {
            "run_id": self.run_id,
            "command": self.command,
            "outcome": self.outcome,
            "seconds": round(self.seconds, 3),
            "files_seen": len(self.files),
            "files_loaded": self.count("loaded"),
            "files_skipped": self.count("skipped"),
            "files_rejected": self.count("rejected"),
            "rows_in": self.rows_in,
            "rows_loaded": self.rows_loaded,
            "rows_quarantined": self.rows_quarantined,
            "models_built": self.build.models if self.build else 0,
            "audits_passed": self.build.audits if self.build else 0,
            "unknown_entries": self.unknown_entries,
            "files": [
                {"path": f.path, "kind": f.kind, "status": f.status, "rows_in": f.rows_in,
                 "rows_loaded": f.rows_loaded, "rows_quarantined": f.rows_quarantined, "message": f.message}
                for f in self.files
            ],
        }


def is_data_file(path: Path) -> bool:
    name = path.name.lower()
    if name.startswith("."):
        return False
    stem = name[:-3] if name.endswith(".gz") else name
    return Path(stem).suffix in SUFFIXES


def landing_files(landing: Path) -> tuple[list[tuple[str, Path]], list[str]]:
    """(kind, file) pairs in load order, and entries of the folder that are not a known kind."""
    if not landing.is_dir():
        raise FileNotFoundError(f"landing folder {landing} does not exist or is not a folder")
    pairs: list[tuple[str, Path]] = []
    for kind in KIND_ORDER:
        folder = landing / kind
        if folder.is_dir():
            pairs += [(kind, p) for p in sorted(folder.rglob("*")) if p.is_file() and is_data_file(p)]
    unknown = sorted(p.name for p in landing.iterdir() if p.name not in KINDS and not p.name.startswith("."))
    return pairs, unknown


def _start_run(con: duckdb.DuckDBPyConnection, command: str) -> RunSummary:
    init_ledger(con)
    run = RunSummary(run_id=uuid.uuid4().hex[:12], command=command)
    con.execute("INSERT INTO meta.runs (run_id, command, started_at) VALUES (?, ?, current_localtimestamp())",
                [run.run_id, command])
    return run


def _finish_run(con: duckdb.DuckDBPyConnection, run: RunSummary, outcome: str | None = None) -> None:
    con.execute(
        """UPDATE meta.runs SET finished_at = current_localtimestamp(), files_seen = ?, files_loaded = ?,
           files_skipped = ?, files_rejected = ?, rows_in = ?, rows_loaded = ?, rows_quarantined = ?, outcome = ?
           WHERE run_id = ?""",
        [len(run.files), run.count("loaded"), run.count("skipped"), run.count("rejected"), run.rows_in,
         run.rows_loaded, run.rows_quarantined, outcome or run.outcome, run.run_id],
    )


def _load(con: duckdb.DuckDBPyConnection, run: RunSummary, pairs: list[tuple[str, Path]],
          on_file: Callable[[FileResult], None] | None) -> None:
    for kind, path in pairs:
        result = ingest_file(con, kind, path, run.run_id)
        run.files.append(result)
        if on_file:
            on_file(result)


def load_files(con: duckdb.DuckDBPyConnection, pairs: list[tuple[str, Path]], command: str,
               on_file: Callable[[FileResult], None] | None = None) -> RunSummary:
    t0 = time.perf_counter()
    run = _start_run(con, command)
    _load(con, run, pairs, on_file)
    run.seconds = time.perf_counter() - t0
    _finish_run(con, run)
    return run


def nightly(con: duckdb.DuckDBPyConnection, landing: Path, settings: Settings,
            on_file: Callable[[FileResult], None] | None = None,
            on_model: Callable[[str], None] | None = None) -> RunSummary:
    """Load every file under ``landing/<kind>/`` then build the models."""
    t0 = time.perf_counter()
    pairs, unknown = landing_files(landing)
    run = _start_run(con, f"nightly {landing}")
    run.unknown_entries = unknown
    _load(con, run, pairs, on_file)
    try:
        run.build = build(con, settings, progress=on_model)
    except Exception:
        run.seconds = time.perf_counter() - t0
        _finish_run(con, run, "build_failed")
        raise
    run.seconds = time.perf_counter() - t0
    _finish_run(con, run)
    return run
