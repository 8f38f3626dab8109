"""The lake's integrity: every lake file's SHA-256 is in the manifest and is checked before use.

A lake file is written once, made read-only (``seal``) and its hash recorded in
``meta.loaded_files.lake_sha256`` in the transaction that loads it. Every build checks
that all lake files exist and re-hashes the ones it reads in full (``damaged``) before
anything is published; ``costledger verify`` re-hashes all of them. A file that is
missing or altered is named with the landing file it came from; re-delivering that
landing file (same SHA-256) rewrites it (``pipeline.ingest.files``).
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import duckdb
from pipeline.base.errors import CostledgerError


class LakeDamaged(CostledgerError, RuntimeError):
    """Lake files are missing or altered; nothing was built or published."""


@dataclass(frozen=True)
class Damage:
    lake_file: str
    landing_path: str
    kind: str
    problem: str  # "missing" or "altered"

    def line(self) -> str:
        return (
            f"lake file {self.lake_file} is {self.problem} (it holds the rows of {self.kind} file "
            f"{self.landing_path}; re-deliver that file unchanged to rewrite it)"
        )


def file_sha256(path: Path) -> str:
    """The file's SHA-256, read in 16 MiB chunks into one buffer. Reading and hashing release the GIL; with big
    chunks the loop seldom needs it back, so GX's import in its thread slows it little (62 files of 50 MB, alone and
    beside the import: 1 MiB chunks 4.2 s and 8.0 s; 16 MiB chunks 3.3 s and 4.9 s)."""
    h = hashlib.sha256()
    buf = memoryview(bytearray(1 << 24))
    with path.open("rb", buffering=0) as fh:
        while n := fh.readinto(buf):
            h.update(buf[:n])
    return h.hexdigest()


Signature = tuple[int, int, int, int]
"""A file's inode, size, modification and change times (ns): a write between two readings of them changes them."""


def file_signature(path: Path) -> Signature:
    st = os.stat(path)
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def signed_sha256(path: Path) -> tuple[str, Signature]:
    """The file's SHA-256 and its signature taken before the hash: the same signature after a later read means no
    write came between (equal hashes alone do not: a file rewritten in place and back to the same bytes, or
    truncated to empty twice, hashes the same while a read in between saw other bytes)."""
    signature = file_signature(path)
    return file_sha256(path), signature


class HashAhead:
    """SHA-256s of files taken ahead, in the order given, by two threads (hashing releases the GIL: two threads
    hash twice as fast on two cores). A nightly hashes the files it loaded before (a landing file and its lake
    file each) to tell them loaded and intact; ahead, that takes half as long. ``take`` hands a file's hash over
    once; a file not given, or whose read failed, is None (the caller hashes it itself and meets the error)."""

    def __init__(self, paths: Iterable[Path], name: str = "hash") -> None:
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix=name)
        self._ahead: dict[Path, Future[tuple[str, Signature]]] = {}
        for path in paths:
            if path not in self._ahead:
                self._ahead[path] = self._pool.submit(signed_sha256, path)

    def take(self, path: Path) -> str | None:
        signed = self.take_signed(path)
        return signed[0] if signed else None

    def take_signed(self, path: Path) -> tuple[str, Signature] | None:
        """The file's SHA-256 and its signature before that hash (``signed_sha256``), once."""
        future = self._ahead.pop(path, None)
        if future is None:
            return None
        try:
            return future.result()
        except OSError:
            return None

    def close(self) -> None:
        """Drop the hashes not taken (a run that stopped early): waits for the ones being read, cancels the rest."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._ahead.clear()

    def __enter__(self) -> "HashAhead":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def seal(path: Path) -> str:
    """Make a just-written lake file read-only and return its SHA-256 (recorded in the manifest)."""
    os.chmod(path, 0o444)
    return file_sha256(path)


def lake_damage(path: Path, expected: str | None, ahead: str | None = None) -> str | None:
    """Why the lake file at ``path`` cannot be trusted ("missing", "altered"), or None when it is intact;
    ``ahead`` is its SHA-256 taken moments before (``HashAhead``), else it is hashed now.

    A file whose hash was never recorded (loaded before 0.6.0) counts as intact here; ``damaged``
    records its hash the first time a build reads it.
    """
    if not path.is_file():
        return "missing"
    if expected is not None and (ahead or file_sha256(path)) != expected:
        return "altered"
    return None


def damaged(
    con: duckdb.DuckDBPyConnection, lake: Path, rehash: Callable[[str, str], bool] | None = None, record: bool = False
) -> list[Damage]:
    """Every manifest lake file that is missing, and every one ``rehash(kind, file_hash)`` selects
    (default: all) whose SHA-256 differs from the manifest's. With ``record``, a file whose hash was
    never recorded gets it recorded (the caller's transaction)."""
    out: list[Damage] = []
    rows = con.execute(
        "SELECT file_hash, kind, path, lake_file, lake_sha256 FROM meta.loaded_files "
        "WHERE lake_file IS NOT NULL ORDER BY load_seq"
    ).fetchall()
    checks = [rehash is None or rehash(kind, file_hash) for file_hash, kind, _, _, _ in rows]
    # the files to check against a recorded hash are hashed ahead, two at a time
    ahead = [lake / f for (_, _, _, f, expected), check in zip(rows, checks) if check and expected is not None]
    with HashAhead(ahead, "lake") as hashes:
        for (file_hash, kind, landing, lake_file, expected), check in zip(rows, checks):
            path = lake / lake_file
            problem = lake_damage(path, expected if check else None, hashes.take(path))
            if problem:
                out.append(Damage(lake_file, landing, kind, problem))
            elif check and expected is None and record:
                con.execute(
                    "UPDATE meta.loaded_files SET lake_sha256 = ? WHERE file_hash = ?", [file_sha256(path), file_hash]
                )
    return out
