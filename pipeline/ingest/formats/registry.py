"""The formats by name. A request-log format registers one ``LogFormat`` from its own module (``register``):
what it is called, how a record of it is told, what it defaults, how it reads a record; ``detect`` asks the formats
in their ``order`` (the more specific first) whether a record is theirs. A format another kind's files may come in
(a provider's cost or usage export, a price list, a benchmark's result file) registers one ``FileFormat``
(``register_file_format``): its kind, how the head of a file of it is told, and its reader of the whole file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from pipeline.ingest.formats.common import CANONICAL_MARKERS, MappingError, Tokens, failed_without_usage, response_body

if TYPE_CHECKING:
    from pipeline.ingest.formats.landed import Detected
    from pipeline.ingest.readers import ReadResult

#: (record, its response body) -> (canonical token columns, start time, latency in ms if the format carries it)
Reader = Callable[[dict, dict], tuple[Tokens, "str | None", "float | None"]]


@dataclass(frozen=True, kw_only=True)
class LogFormat:
    name: str
    """Its name in ``--format`` and in a ``[[request_logs]]`` entry's ``format``."""
    route: str
    """The route of its requests when neither the record nor the settings say: ``api`` or ``self_hosted``."""
    provider: str | None
    """The provider of its API requests when neither the record nor the settings say."""
    order: int
    """When ``detect`` asks it: lower first (a format whose records another's test would also match goes first)."""
    matches: Callable[[dict, dict], bool]
    """Whether a record (and its response body) is one of this format's."""
    read: Reader


_FORMATS: dict[str, LogFormat] = {}


def register(fmt: LogFormat) -> LogFormat:
    if fmt.name in _FORMATS or fmt.name == "canonical":
        raise ValueError(f"log format {fmt.name!r} registered twice")
    _FORMATS[fmt.name] = fmt
    return fmt


def log_format(name: str) -> LogFormat:
    if name not in _FORMATS:
        raise MappingError(f"unknown log format {name!r}")
    return _FORMATS[name]


def registered() -> tuple[str, ...]:
    """The registered formats' names, sorted."""
    return tuple(sorted(_FORMATS))


def detect(rec: dict) -> str | None:
    """The format of one record: "canonical", a registered format's name, or None if it is none of them."""
    if any(k in rec for k in CANONICAL_MARKERS):
        return "canonical"
    resp = response_body(rec)
    return next((f.name for f in sorted(_FORMATS.values(), key=lambda f: f.order) if f.matches(rec, resp)), None)


def first_log_format(head: str) -> str:
    """The format of a JSON-lines request log from its first record that shows one (``head``: the file's start;
    "canonical" when no record shows one): a failed request without usage (a gateway's 504) says nothing of the
    format, the next record does. A line that is no JSON ends the search: the canonical reader reports it."""
    for line in head.splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            return "canonical"
        if not isinstance(rec, dict):
            return "canonical"
        if not failed_without_usage(rec):
            return detect(rec) or "canonical"
    return "canonical"


@dataclass(frozen=True, kw_only=True)
class FileFormat:
    name: str
    """Its name in ``--format`` and in the settings entry's ``format``."""
    kind: str
    """The kind its files are loaded as (invoices, usage, prices, load-tests)."""
    sniff: Callable[[bytes], bool]
    """Whether the first bytes of a file (``head_bytes`` of them) in its ``container`` are one of this format's."""
    read: Callable[["Detected", list[str]], "ReadResult"]
    """(the file and what it is, the canonical columns) -> its rows."""
    head_bytes: int = 1 << 16
    container: str = "jsonl"
    """The container its files come in and its ``sniff`` is asked of: jsonl (JSON, JSON lines) or csv."""


_FILE_FORMATS: dict[tuple[str, str], FileFormat] = {}


def register_file_format(fmt: FileFormat) -> FileFormat:
    if (fmt.kind, fmt.name) in _FILE_FORMATS or fmt.name == "canonical":
        raise ValueError(f"{fmt.kind} format {fmt.name!r} registered twice")
    _FILE_FORMATS[(fmt.kind, fmt.name)] = fmt
    return fmt


def file_formats(kind: str) -> list[FileFormat]:
    """The formats a kind's files may come in besides its canonical columns, in the order they registered."""
    return [f for (k, _), f in _FILE_FORMATS.items() if k == kind]
