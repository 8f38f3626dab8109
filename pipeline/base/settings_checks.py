"""The check of one setting's value: each takes the TOML value and returns it typed, or raises ``ValueError`` with what
was expected (``pipeline.base.settings`` names the file and key). The ranges are the ones the models can hold."""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

from pipeline.base.errors import CostledgerError, ExitCode
from schemas.tables import GATE_DRILLS

#: ``scheme:/`` or ``scheme://`` at the start of a path (two letters at least: ``C:/`` is a Windows drive)
URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")
_MEMORY = re.compile(r"^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB|%)$", re.IGNORECASE)
_UNITS = {"kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
MIN_MEMORY_BYTES = 256 * 10**6


class SettingsError(CostledgerError, ValueError):
    """The settings file is unreadable or holds a value of the wrong kind: the user's input, a usage error (exit 2)."""

    exit_code = ExitCode.USAGE


def memory_bytes(text: str) -> int | None:
    """Bytes of a DuckDB size such as '4GB' or '512MiB'; None for a percentage (of the machine's memory)."""
    m = _MEMORY.match(text.strip())
    if not m:
        raise ValueError(text)
    unit = m.group(2).lower()
    if unit == "%":
        return None
    return int(Decimal(text.strip()[: m.start(2)].strip()) * _UNITS[unit])


def _db_path(value: Any) -> Path:
    if not isinstance(value, str) or not value or "\x00" in value:
        raise ValueError("a file path")
    if URL.match(value):
        raise ValueError("a local file path (a URL such as s3://... is not supported)")
    if Path(value).is_dir():
        raise ValueError("a file path (this is a folder)")
    return Path(value)


def _patterns(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError('a table of cluster_id = "regular expression" lines')
    for cluster, pattern in value.items():
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"regular expressions; {cluster} = {pattern!r}: {exc}") from None
    return tuple(sorted(value.items()))


def _engine(value: Any) -> str:
    if value not in ("duckdb", "spark"):
        raise ValueError("duckdb or spark")
    return str(value)


def _url_with_host(value: Any, schemes: tuple[str, ...], expected: str) -> str:
    """``value`` as a URL of one of ``schemes`` with a host (and a port, if any, that is a number)."""
    from urllib.parse import urlsplit

    if not isinstance(value, str):
        raise ValueError(expected)
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018 (a port that is no number raises here)
    except ValueError:
        raise ValueError(expected) from None
    if parts.scheme not in schemes or not parts.hostname:
        raise ValueError(expected)
    return value.strip()


def _spark_remote(value: Any) -> str:
    """A Spark Connect URL with a host: ``sc://host[:port][/;param=value...]``."""
    return _url_with_host(value, ("sc",), "a Spark Connect URL, sc://host:port (such as sc://localhost:15002)")


def _lake_uri(value: Any) -> str:
    """A folder in object storage, ``s3://bucket[/prefix]``, with no credentials in it (they come from the AWS
    environment, never from the settings file)."""
    from urllib.parse import urlsplit

    url = _url_with_host(value, ("s3",), "an s3:// URL of a bucket and folder, such as s3://ledger-lake/team-a")
    parts = urlsplit(url)
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError(
            "an s3:// URL of a bucket and folder alone: credentials and the endpoint come from the AWS environment "
            "(AWS_ACCESS_KEY_ID, AWS_PROFILE, AWS_ENDPOINT_URL), never from the settings file"
        )
    return url.rstrip("/")


def _spark_options(value: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and k.startswith("spark.") for k in value):
        raise ValueError('a table of "spark.name" = value lines')
    if not all(isinstance(v, (str, int, bool)) for v in value.values()):
        raise ValueError('a table of "spark.name" = value lines whose values are text, whole numbers or true/false')
    return tuple(sorted((k, str(v).lower() if isinstance(v, bool) else str(v)) for k, v in value.items()))


def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError('a list of names, e.g. ["a", "b"]')
    return tuple(value)


def _drills(value: Any) -> tuple[str, ...]:
    names = _names(value)
    if unknown := [n for n in names if n not in GATE_DRILLS]:
        raise ValueError(f"drill names among {', '.join(GATE_DRILLS)} (not {', '.join(unknown)})")
    return names


#: Why a team may have to run the model itself whatever the cost (the report says so beside the verdict)
CONTROL_REQUIREMENTS: tuple[str, ...] = (
    "data_residency",
    "isolation",
    "fine_tuning",
    "latency_floor",
    "guaranteed_capacity",
    "version_control",
)


def _control_requirements(value: Any) -> tuple[str, ...]:
    names = _names(value)
    if unknown := [n for n in names if n not in CONTROL_REQUIREMENTS]:
        raise ValueError(f"names among {', '.join(CONTROL_REQUIREMENTS)} (not {', '.join(unknown)})")
    return tuple(dict.fromkeys(names))


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("true or false")
    return value


def _memory_limit(value: Any) -> str:
    if not isinstance(value, str) or not _MEMORY.match(value.strip()):
        raise ValueError("a size such as '4GB', '512MiB' or '80%'")
    size = memory_bytes(value)
    if size is not None and size < MIN_MEMORY_BYTES:
        raise ValueError("a size of at least 256MB (DuckDB cannot build the models in less)")
    if size is None and not 10 <= Decimal(value.strip()[:-1]) <= 100:
        raise ValueError("a percentage between 10% and 100%")
    return value.strip()


def _size(value: Any) -> str:
    if not isinstance(value, str) or not _MEMORY.match(value.strip()) or value.strip().endswith("%"):
        raise ValueError("a size such as '4GB' or '512MiB'")
    return value.strip()


def _folder(value: Any) -> str:
    if not isinstance(value, str) or "\x00" in value:
        raise ValueError("a folder path")
    if value and Path(value).exists() and not Path(value).is_dir():
        raise ValueError("a folder path (this is a file)")
    return value


def _date(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("a date YYYY-MM-DD")
    if not "1900-01-01" <= date.fromisoformat(value).isoformat() < "2100-01-01":
        raise ValueError("a date between 1900-01-01 and 2099-12-31")
    return value


def _whole(least: int, expected: str, most: int = 2**53) -> Callable[[Any], int]:
    """A whole number from ``least`` to ``most`` (by default any the models' BIGINT and DOUBLE arithmetic holds
    exactly)."""

    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= most:
            raise ValueError(expected if most == 2**53 else f"{expected}, at most {most:,}")
        return value

    return check


#: the most threads a ledger's DuckDB may be given (DuckDB allocates per thread: a hundred billion ended in
#: std::bad_alloc)
MAX_THREADS = 1024
#: The longest latency a route's SLO or the plausibility bound may name: 30 days in milliseconds (the models turn
#: milliseconds into intervals and hours; a month's hours bound what a latency can mean)
MAX_SLO_MS = 30 * 24 * 3600 * 1000


def _decimal(expected: str) -> Callable[[Any], Decimal]:
    def check(value: Any) -> Decimal:
        if isinstance(value, str):  # TOML has numbers: "95" is text, and a typed value is never guessed at
            raise ValueError(expected + f", written without quotes ({value.strip()} rather than {value!r})")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(expected.replace("a finite, non-negative number", "a number"))
        d = Decimal(str(value))
        if not d.is_finite() or d < 0:
            raise ValueError(expected)
        return d

    return check


def _bounded_decimal(expected: str, most: Decimal) -> Callable[[Any], Decimal]:
    def check(value: Any) -> Decimal:
        d = _decimal(expected)(value)
        if d > most:
            raise ValueError(f"{expected}, at most {most:,}")
        return d

    return check


def _seconds_to_wait(value: Any) -> Decimal:
    """A deadline: more than 0 (a request given no time fails every time) and at most 10 minutes."""
    expected = "a number of seconds above 0, at most 600"
    d = _decimal(expected.replace("a number", "a finite, non-negative number"))(value)
    if not 0 < d <= 600:
        raise ValueError(expected)
    return d


def _share(value: Any) -> Decimal:
    d = _decimal("a share between 0 and 1 (0.10 = 10 %)")(value)
    if d > 1:
        raise ValueError("a share between 0 and 1 (0.10 = 10 %)")
    return d


def _pue(value: Any) -> Decimal:
    """Power usage effectiveness: a site draws at least the IT equipment's energy, and no site draws 3x it."""
    d = _decimal("a power usage effectiveness between 1 and 3 (1.3 = 30 % on top of the GPUs' energy)")(value)
    if not 1 <= d <= 3:
        raise ValueError("a power usage effectiveness between 1 and 3 (1.3 = 30 % on top of the GPUs' energy)")
    return d


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("a non-empty string")
    return value


def _webhook_url(value: Any) -> str:
    """An http or https URL with a host: the alerts' webhook (a path or a typo'd scheme would fail only at night)."""
    return _url_with_host(
        value, ("http", "https"), "an http:// or https:// URL with a host (such as a Slack incoming webhook's)"
    )
