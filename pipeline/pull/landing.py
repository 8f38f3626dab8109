"""A pulled page into the landing folder: whole or not at all (written hidden, then renamed), under a name that
says what it holds, so a page already there is not pulled again and a nightly never sees half a page.

Nothing is written through a symbolic link under the landing folder: the kind folder is opened without following a
link (a kind folder linked elsewhere is an error, as the nightly refuses to walk it), the hidden file is created
anew beside the page (a link planted at its name is removed, never written through), and a link at a page's name is
an error, never read as a page pulled before."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pipeline.pull.http import PullError


@dataclass(frozen=True)
class Pulled:
    """One page (or chunk) of a pull: where it went and what became of it."""

    kind: str
    path: Path
    state: str
    """written, present (pulled before: not asked again) or empty (nothing in it: nothing written)"""
    count: int = 0
    """What it holds: the series of a Prometheus chunk, the buckets of a provider's page."""
    samples: int = 0
    """A Prometheus chunk's samples."""


def _kind_folder(path: Path) -> int:
    """A descriptor of ``path``'s folder (a kind folder of the landing), made when missing, never through a link."""
    landing, kind = path.parent.parent, path.parent.name
    try:
        landing.mkdir(parents=True, exist_ok=True)
        top = os.open(landing, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise PullError(
            f"cannot write {path}: {landing} is not a folder that can be written ({exc.strerror})"
        ) from None
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(kind, dir_fd=top)
        return os.open(kind, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
    except OSError as exc:
        if os.path.islink(path.parent):
            raise PullError(
                f"{path.parent} is a symbolic link: a pull writes only inside the landing folder (the nightly does not "
                "walk a linked kind folder either); make it a folder"
            ) from None
        raise PullError(f"cannot write {path}: {path.parent} is not a folder ({exc.strerror})") from None
    finally:
        os.close(top)


def write_page(path: Path, body: bytes) -> int:
    """``body`` (the answer as received) at ``path`` in a kind folder of the landing; returns the bytes written."""
    hidden = f".{path.name}.part"  # the nightly passes hidden files over
    folder = _kind_folder(path)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(hidden, dir_fd=folder)  # a link planted here goes, what it points at stays untouched
        fd = os.open(hidden, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=folder)
        with os.fdopen(fd, "wb") as fh:
            fh.write(body)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(hidden, path.name, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(hidden, dir_fd=folder)
        raise PullError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        os.close(folder)
    return len(body)


def pulled_before(path: Path) -> bool:
    """Whether the page at ``path`` is there (a link in its place is an error: it is not a page this pull wrote)."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # (a file in the kind folder's place: said when written)
        return False
    except OSError as exc:
        raise PullError(f"cannot read {path}: {exc.strerror}") from None
    if stat.S_ISLNK(os.lstat(path.parent).st_mode) or not stat.S_ISREG(mode):
        raise PullError(f"{path} is not a file the pull wrote (a symbolic link or a folder): remove it and pull again")
    return True


def read_page(path: Path) -> Any:
    """A page written earlier (for its next-page cursor); a damaged one is an error naming it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as fh:
            return json.loads(fh.read())
    except (OSError, ValueError, RecursionError) as exc:
        raise PullError(f"{path} is not a whole page ({str(exc)[:120]}): delete it and pull again") from None


def settled(window: tuple[datetime, datetime], now: datetime, whole_days: bool) -> tuple[datetime, datetime]:
    """The window cut where what it holds is over: a page is pulled once and not asked again, so a pull never asks
    for what is still to come (after ``now``; with ``whole_days``, a provider's daily buckets, after the start of
    ``now``'s day, UTC). Raises when nothing of the window is over yet."""
    since, until = (t.astimezone(timezone.utc) for t in window)
    now = now.astimezone(timezone.utc).replace(microsecond=0)
    end = now.replace(hour=0, minute=0, second=0) if whole_days else now
    if until > end:
        until = end
        if until <= since:
            raise PullError(
                f"nothing from {since:%Y-%m-%dT%H:%M:%SZ} on is over yet (it is {now:%Y-%m-%dT%H:%M:%SZ}): a page is "
                f"pulled once and not asked again, so a pull asks only for {'whole days' if whole_days else 'the past'}"
            )
    return since, until


def stamp(t: datetime) -> str:
    """A UTC instant as a file name's part: 20261005T000000Z."""
    return t.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
