"""When a scrape saved without timestamps was taken. ``curl`` of an exporter's ``/metrics`` writes its samples with no
time of their own; a team that keeps such scrapes says when each was taken where it keeps it, and the ledger looks in
this order:

1. The file's name, in UTC: ``2026-10-05T10-00-00Z``, ``2026-10-05T10:00:00Z``, ``2026-10-05_10-00-00`` (what
   ``date -u +%Y-%m-%dT%H-%M-%SZ`` and its variants write), ``20261005T100000Z`` or ``20261005-100000``
   (``date -u +%Y%m%dT%H%M%SZ``), or ten digits of Unix seconds (``date +%s``), anywhere in the name:
   ``vllm-2026-10-05T10-00-00Z.prom``, ``dcgm.1793577600.prom``.
2. A comment line ``# scraped_at 2026-10-05T10:00:00Z`` (ISO 8601 with a ``Z`` or an offset, or Unix seconds; a
   colon after ``scraped_at`` is allowed), anywhere in the file.
3. The ``scraped_at`` of the file's ``[[metrics_files]]`` settings entry (its ``match`` pattern fits the name): for
   a file that can be neither renamed nor edited.

Never the file's modification time: a copy or a restore changes it without a word. A sample with a timestamp of its
own keeps it.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
#: the shapes of a time in a file's name, each (year, month, day, hour, minute, second)
_NAME_SHAPES = (
    re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})[T_ ](\d{2})[-:](\d{2})[-:](\d{2})(?:\.\d+)?Z?(?![\d])"),
    re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})[T_-](\d{2})(\d{2})(\d{2})Z?(?!\d)"),
)
_UNIX_NAME = re.compile(r"(?<!\d)(\d{10})(?!\d)")
_COMMENT = re.compile(r"#\s*scraped_at\s*:?\s*(\S+)\s*$")
#: Unix seconds read from a name are taken between these (2001-09-09 and 2286-11-20: ten digits)
_UNIX_RANGE = (1_000_000_000, 9_999_999_999)


def _seconds(when: dt.datetime) -> Decimal:
    return Decimal((when - _EPOCH) // dt.timedelta(microseconds=1)).scaleb(-6)


def from_name(name: str) -> Decimal | None:
    """Unix seconds of the time in a file's name (UTC), or None when it names none."""
    for shape in _NAME_SHAPES:
        m = shape.search(name)
        if m is not None:
            try:
                return _seconds(dt.datetime(*(int(g) for g in m.groups()), tzinfo=dt.timezone.utc))
            except ValueError:  # 2026-13-45: not a time
                continue
    m = _UNIX_NAME.search(name)
    if m is not None and _UNIX_RANGE[0] <= int(m.group(1)) <= _UNIX_RANGE[1]:
        return Decimal(m.group(1))
    return None


def from_comment(text: str) -> Decimal:
    """Unix seconds of a ``# scraped_at`` line's time; raises ValueError naming what is wrong."""
    m = _COMMENT.match(text)
    if m is None:
        raise ValueError("not a '# scraped_at <time>' line")
    value = m.group(1)
    if value.isdigit():
        return Decimal(value)
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"scraped_at {value[:40]!r} is not an ISO 8601 time nor Unix seconds") from None
    if when.tzinfo is None:
        raise ValueError(f"scraped_at {value[:40]!r} has no time zone: end it with Z for UTC")
    return _seconds(when)


def from_setting(iso_utc: str) -> Decimal:
    """Unix seconds of a [[metrics_files]] entry's scraped_at (ISO 8601, UTC: the settings keep it without an
    offset)."""
    when = dt.datetime.fromisoformat(iso_utc)
    return _seconds(when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc))


def is_scraped_at(text: str) -> bool:
    return text.startswith("#") and text[1:].lstrip().startswith("scraped_at")
