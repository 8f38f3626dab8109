"""The lake kept in object storage as well (``[lake] uri = "s3://bucket/prefix"``): the machine's lake is then a copy
that object storage can always make again, file for file, checked against the manifest.

A lake file is written once and sealed, and the manifest (``meta.loaded_files.lake_sha256``) holds its SHA-256. In
object storage it is named by that hash: ``<uri>/<table>/<sha256>.parquet``. An object is therefore never replaced;
a file loaded again under other settings makes another object, and the name alone says the object holds the bytes the
manifest expects.

- ``push_lake`` (every build before it publishes): each lake file of the manifest whose object is not there yet is
  uploaded, hashed as it is read; one whose bytes no longer match the manifest is not uploaded and stops the run. So a
  published ledger names no lake file that object storage lacks.
- ``restore_lake`` (every run's start, holding the writer's lock): each lake file of the manifest that is missing on
  this machine is downloaded, checked against the manifest's SHA-256 and put in place read-only. One whose object is
  absent or differs stays missing, and the build's lake check names it as before (with the landing file to re-deliver).

Nothing is ever deleted from object storage. The build and the published file read the machine's copy; credentials and
the endpoint come from the AWS environment, as for a landing folder (``pipeline.storage.remote``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Any

import duckdb
from pipeline.base.errors import CostledgerError
from pipeline.base.text import first_line
from pipeline.storage.lake import file_sha256
from pipeline.storage.remote import open_store

#: bytes read or written at a time
CHUNK = 1 << 24


class RemoteLakeFailed(CostledgerError, RuntimeError):
    """The lake in object storage could not be listed or written: nothing was published."""


def object_name(lake_file: str, sha256: str) -> str:
    """A lake file's name in object storage: its table folder and its SHA-256."""
    return f"{lake_file.split('/', 1)[0]}/{sha256}.parquet"


def push_lake(con: duckdb.DuckDBPyConnection, lake: Path, uri: str) -> int:
    """Upload every lake file of the manifest that object storage lacks (see the module's docstring): how many."""
    fs, root = open_store(uri, "the lake")
    present = _listed(fs, uri, root)
    uploaded = 0
    for file_hash, lake_file, expected in _manifest(con):
        path = lake / lake_file
        if not path.is_file():
            continue  # the build's lake check has named it already; there is nothing to upload
        if expected is None:  # loaded before hashes were recorded: recorded now, as the build's lake check does
            expected = file_sha256(path)
            con.execute("UPDATE meta.loaded_files SET lake_sha256 = ? WHERE file_hash = ?", [expected, file_hash])
        name = object_name(lake_file, expected)
        if name not in present:
            _upload(fs, path, f"{root}/{name}", f"{uri}/{name}", expected)
            present.add(name)
            uploaded += 1
    return uploaded


def restore_lake(con: duckdb.DuckDBPyConnection, lake: Path, tmp: Path, uri: str) -> int:
    """Download every lake file of the manifest that is missing here (see the module's docstring); ``tmp``: a folder
    on the lake's file system for the files being written. How many were restored (an object that is absent, or has
    other bytes, restores nothing)."""
    missing = [(f, sha) for _, f, sha in _manifest(con) if not (lake / f).is_file()]
    if not missing:
        return 0  # the usual case: object storage is not even listed
    fs, root = open_store(uri, "the lake")
    present = _listed(fs, uri, root)
    restored = 0
    for lake_file, expected in missing:
        if expected is None:
            continue  # loaded before hashes were recorded: no object is named for it
        name = object_name(lake_file, expected)
        if name in present and _download(fs, f"{root}/{name}", f"{uri}/{name}", lake / lake_file, tmp, expected):
            restored += 1
    return restored


def _manifest(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str | None]]:
    return con.execute(
        "SELECT file_hash, lake_file, lake_sha256 FROM meta.loaded_files WHERE lake_file IS NOT NULL ORDER BY load_seq"
    ).fetchall()


def _listed(fs: Any, uri: str, root: str) -> set[str]:
    """The object names under ``root`` (an empty prefix is an empty lake; a bucket that is not there is an error)."""
    import pyarrow.fs as pafs

    bucket = root.split("/", 1)[0]
    try:
        if fs.get_file_info(bucket).type == pafs.FileType.NotFound:
            raise RemoteLakeFailed(
                f"the lake {uri}: the bucket {bucket} does not exist (create it, or correct lake.uri in the settings)"
            )
        infos = fs.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    except RemoteLakeFailed:
        raise
    except Exception as exc:
        raise RemoteLakeFailed(f"the lake {uri} cannot be listed: {first_line(exc)}") from exc
    return {i.path[len(root) + 1 :] for i in infos if i.type == pafs.FileType.File}


def _copy_hashing(src: Any, dst: Any) -> str:
    """``src`` copied to ``dst``, a chunk at a time: the SHA-256 of what was copied."""
    h = hashlib.sha256()
    while chunk := src.read(CHUNK):
        h.update(chunk)
        dst.write(chunk)
    return h.hexdigest()


def _upload(fs: Any, path: Path, key: str, shown: str, expected: str) -> None:
    """``path`` written to the object ``key``, hashed on the way; an object whose bytes are not the manifest's is
    deleted again and stops the run."""
    try:
        with path.open("rb") as src, fs.open_output_stream(key, compression=None) as dst:
            copied = _copy_hashing(src, dst)
    except Exception as exc:
        raise RemoteLakeFailed(f"{shown}: the lake file {path} cannot be uploaded: {first_line(exc)}") from exc
    if copied != expected:
        with contextlib.suppress(Exception):  # the run stops either way; an object left behind is never named
            fs.delete_file(key)
        raise RemoteLakeFailed(
            f"lake file {path} changed since it was loaded (its SHA-256 is not the manifest's): it was not kept in "
            "object storage; `costledger verify` names the landing file to re-deliver"
        )


def _download(fs: Any, key: str, shown: str, target: Path, tmp: Path, expected: str) -> bool:
    """The object ``key`` put at ``target``, read-only, when its SHA-256 is ``expected``: whether it was."""
    tmp.mkdir(parents=True, exist_ok=True)
    part = tmp / f"{expected}.parquet.costledger-tmp"
    try:
        with fs.open_input_stream(key, compression=None) as src, part.open("wb") as dst:
            copied = _copy_hashing(src, dst)
    except Exception as exc:
        part.unlink(missing_ok=True)
        raise RemoteLakeFailed(f"{shown}: cannot be downloaded: {first_line(exc)}") from exc
    if copied != expected:
        part.unlink()
        return False
    os.chmod(part, 0o444)
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(part, target)
    return True
