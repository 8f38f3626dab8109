"""A pulled page into the landing folder: whole or not at all (written hidden, then renamed), under a name that
says what it holds, so a page already there is not pulled again and a nightly never sees half a page."""

from __future__ import annotations

import contextlib
import json
import os
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


def write_page(path: Path, doc: Any) -> int:
    """``doc`` as JSON at ``path`` (its folders made); returns the bytes written."""
    data = json.dumps(doc, separators=(",", ":")).encode()
    hidden = path.with_name(f".{path.name}.part")  # the nightly passes hidden files over
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(hidden, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(hidden, path)
    except OSError as exc:
        with contextlib.suppress(OSError):  # no folder to hold it (a file in its place): nothing was written
            hidden.unlink(missing_ok=True)
        raise PullError(f"cannot write {path}: {exc.strerror or exc}") from None
    return len(data)


def read_page(path: Path) -> Any:
    """A page written earlier (for its next-page cursor); a damaged one is an error naming it."""
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise PullError(f"{path} is not a whole page ({exc}): delete it and pull again") from None


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
