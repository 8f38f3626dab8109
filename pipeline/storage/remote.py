"""A landing folder in object storage (``s3://bucket/prefix``, on AWS or any S3-compatible store), fetched into a local
copy that the nightly then reads as it reads any landing folder.

Billing exports land in object storage. The ledger reads a landing file several times (its hash, its rows, its hash
again to tell that it did not change while read), and a file is loaded whole or not at all: so each object is first
copied whole to the ledger's own folder (``<db>.d/remote-landing/<url's hash>/``), under a temporary name renamed into
place once complete, with the object's modification time. A later run copies only the objects whose size or
modification time differ from the copy's, and removes the copies of objects that are gone.

The file system is pyarrow's (the AWS SDK underneath). Credentials and the endpoint come from the SDK's own
environment and configuration: ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_ENDPOINT_URL``, ``AWS_PROFILE``
and ``~/.aws``. The settings file holds none of them.

pyarrow also serves ``gs://`` and ``abfs://``, but their SDKs look for credentials on a cloud's metadata server for
minutes when none are set, and no local server of theirs tests them here: they are refused until they are tested.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pipeline.base.errors import CostledgerError, ExitCode
from pipeline.base.settings_checks import URL
from pipeline.base.text import first_line, printable

#: the URL schemes the ledger reads a landing folder from
SCHEMES = ("s3",)

#: the suffix of an object's copy while it is being written
PART = ".costledger-part"

#: how many times an object that changes while it is copied is copied again
TRIES = 3


class RemoteLandingFailed(CostledgerError, RuntimeError):
    """The landing folder in object storage could not be listed or copied: nothing was loaded."""


class UnsupportedScheme(CostledgerError, ValueError):
    """A landing folder given as a URL of a scheme the ledger does not read."""

    exit_code = ExitCode.USAGE


def landing_url(value: Path | str) -> str | None:
    """The URL ``value`` is written as (``s3://bucket/prefix``, mended from a path's ``s3:/bucket/prefix``), or None
    for a local path; ``UnsupportedScheme`` for a URL of another scheme."""
    text = str(value)
    if not URL.match(text):
        return None
    scheme, rest = text.split(":", 1)
    # a path argument collapses ``s3://b`` into ``s3:/b``: the slashes after the scheme are written anew
    scheme, rest = scheme.lower(), rest.strip("/")
    if scheme not in SCHEMES:
        raise UnsupportedScheme(
            f"the landing folder {str(value)!r}: {scheme}:// is not supported; give a local folder or an s3:// URL "
            "(AWS S3 or an S3-compatible store: MinIO, Ceph, Cloudflare R2, Google Cloud Storage's XML API, through "
            "AWS_ENDPOINT_URL)"
        )
    if not rest:
        raise UnsupportedScheme(f"the landing folder {str(value)!r}: the URL names no bucket")
    return f"{scheme}://{rest}"


def local_copy(state: Path, url: str) -> Path:
    """Where the landing folder at ``url`` is copied: one folder per URL, in the ledger's own folder."""
    return state / "remote-landing" / hashlib.sha256(url.encode()).hexdigest()[:16]


@dataclass(kw_only=True)
class Fetched:
    """What a fetch did: objects copied, copies already current, copies of objects that are gone removed."""

    url: str
    folder: Path
    copied: int = 0
    current: int = 0
    removed: int = 0
    bytes_copied: int = 0
    rejected: list[tuple[str, str, str]] = field(default_factory=list)
    """(kind, the object's URL, why) for objects whose key cannot be a landing file's name: not copied, the rest is."""


#: the longest name a file system takes for one file or folder (bytes)
NAME_MAX = 255


def key_problem(rel: str, folders: set[str]) -> str | None:
    """Why an object's key below the landing folder cannot be a file's path in its copy, or None. ``folders``: every
    key's folders, so that a key that is also a folder of other keys (``x.csv`` beside ``x.csv/inner.csv``) is
    named."""
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return "its key has an empty, '.' or '..' part: it cannot be a file's path"
    if any(len(part.encode("utf-8", "surrogatepass")) > NAME_MAX for part in parts):
        return f"a part of its key is longer than {NAME_MAX} bytes: no file system names a file so"
    if any(ord(c) < 32 or ord(c) == 127 for c in rel):
        return "its key holds a control character"
    if rel in folders:
        return "its key is also the folder of other keys: it cannot be a file beside them"
    return None


def fetch_landing(url: str, folder: Path, progress: Callable[[str], None] | None = None) -> Fetched:
    """Make ``folder`` a copy of the landing folder at ``url`` (see the module's docstring)."""
    fs, root = open_store(url)
    objects = _list(fs, url, root)
    done = Fetched(url=url, folder=folder)
    folder.mkdir(parents=True, exist_ok=True)
    base = folder.resolve()
    wanted: set[Path] = set()
    folders = {rel.rsplit("/", i)[0] for rel, _, _ in objects for i in range(1, rel.count("/") + 1)}
    for rel, size, mtime_ns in objects:
        target = folder / rel
        why = key_problem(rel, folders)
        if why is None and not target.resolve().is_relative_to(base):
            why = "its key leads out of the landing folder"  # never written outside the copy
        if why:
            shown = printable(f"{url}/{rel}")
            done.rejected.append((rel.split("/", 1)[0], f"{url}/{rel}", f"{shown}: {why}; not copied"))
            continue
        wanted.add(target)
        if _current(target, size, mtime_ns):
            done.current += 1
            continue
        if progress:
            progress(f"copying {printable(f'{url}/{rel}')} ({size:,} bytes)")
        try:
            _copy(fs, f"{root}/{rel}", f"{url}/{rel}", target, (size, mtime_ns))
        except OSError as exc:  # the copy cannot be written under this name here (its whole path too long, ...)
            wanted.discard(target)
            shown = printable(f"{url}/{rel}")
            why = f"cannot be copied to this machine ({exc.strerror or exc}); not copied"
            done.rejected.append((rel.split("/", 1)[0], f"{url}/{rel}", f"{shown}: {why}"))
            continue
        done.copied += 1
        done.bytes_copied += size
    for path in sorted(folder.rglob("*"), reverse=True):
        if path.is_file() and path not in wanted:
            path.unlink()
            done.removed += not path.name.endswith(PART)
        elif path.is_dir() and path != folder and not any(path.iterdir()):
            path.rmdir()
    return done


def open_store(url: str, what: str = "the landing folder") -> tuple[Any, str]:
    """pyarrow's file system for ``url`` (``what`` it holds, for the error) and the path of the URL's folder in it."""
    import pyarrow.fs as pafs

    try:
        fs, root = pafs.FileSystem.from_uri(url)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError and more for a URL it cannot serve
        raise RemoteLandingFailed(f"{what} {url} cannot be opened: {first_line(exc)}") from exc
    return fs, root.rstrip("/")


def _list(fs: Any, url: str, root: str) -> list[tuple[str, int, int]]:
    """Every object under ``root``: (its path below the root, its size, its modification time in ns)."""
    import pyarrow.fs as pafs

    try:
        top = fs.get_file_info(root)
        if top.type == pafs.FileType.NotFound:
            raise RemoteLandingFailed(
                f"the landing folder {url} does not exist or holds no objects (check the bucket and prefix, and that "
                "the credentials may list it)"
            )
        infos = fs.get_file_info(pafs.FileSelector(root, recursive=True))
    except RemoteLandingFailed:
        raise
    except Exception as exc:
        raise RemoteLandingFailed(f"the landing folder {url} cannot be listed: {first_line(exc)}") from exc
    out = []
    for info in infos:
        if info.type == pafs.FileType.File:
            rel = info.path[len(root) + 1 :]
            mtime_ns = info.mtime_ns if info.mtime_ns is not None else 0
            out.append((rel, int(info.size or 0), int(mtime_ns)))
    return sorted(out)


def _current(target: Path, size: int, mtime_ns: int) -> bool:
    try:
        st = target.stat()
    except OSError:
        return False
    return st.st_size == size and st.st_mtime_ns == mtime_ns and mtime_ns != 0


def _copy(fs: Any, path: str, shown: str, target: Path, listed: tuple[int, int]) -> None:
    """The object at ``path`` copied whole to ``target``: written under a temporary name, its size and modification
    time checked against a second look at the object afterwards (an object replaced while it was copied is copied
    again), then renamed into place with the object's modification time."""
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + PART)
    expected = listed
    for _ in range(TRIES):
        try:
            # compression=None: the bytes as stored (pyarrow would otherwise unpack a .gz object on the way)
            with fs.open_input_stream(path, compression=None) as src, part.open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 24)
            info = fs.get_file_info(path)
        except Exception as exc:
            part.unlink(missing_ok=True)
            raise RemoteLandingFailed(f"{shown}: cannot be copied: {first_line(exc)}") from exc
        now = (int(info.size or 0), int(info.mtime_ns or 0))
        if now == expected and part.stat().st_size == now[0]:
            os.utime(part, ns=(now[1], now[1]))
            os.replace(part, target)
            return
        expected = now  # changed while copied: copy it again, as it is now
    part.unlink(missing_ok=True)
    raise RemoteLandingFailed(
        f"{shown}: the object changed while it was copied, {TRIES} times; nothing was loaded "
        "from the landing folder: run again once the writer is done"
    )
