"""One JSON GET, as a pull needs it: retried when the server says so (429 and 503 with their Retry-After) or fails
on its side (5xx, a connection dropped, a body cut short), never when the request itself is wrong (4xx: the error
names the status and the server's own words). Standard library only."""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Callable

from pipeline.base.errors import CostledgerError

#: attempts of one request before the pull stops (the first and three retries)
ATTEMPTS = 4
#: the longest a Retry-After is honoured (seconds); a server asking for more ends the pull, saying so
MAX_WAIT_S = 300.0
#: the largest answer read (bytes): a Prometheus chunk of 10,000 instants of a hundred series is about 30 MB
MAX_BODY_BYTES = 1 << 30


class PullError(CostledgerError):
    """A pull that cannot go on: the address, the status and what the server said (exit 1; pages already written
    stay, and the next pull starts after them)."""


@dataclass
class Client:
    """GETs JSON with fixed headers; ``sleep`` waits between attempts (a test passes its own)."""

    headers: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 60.0
    max_body_bytes: int = MAX_BODY_BYTES
    sleep: Callable[[float], None] = time.sleep
    on_retry: Callable[[str], None] = lambda _: None
    """Hears of each retry as it happens, in words (what went wrong and how long the pull waits)."""

    def get_json(self, url: str, params: list[tuple[str, str]] | None = None) -> Any:
        if urllib.parse.urlsplit(url).scheme not in ("http", "https") or not urllib.parse.urlsplit(url).netloc:
            raise PullError(f"{url!r} is not an http:// or https:// address")
        full = url + ("?" + urllib.parse.urlencode(params) if params else "")
        for attempt in range(1, ATTEMPTS + 1):
            wait, why = self._attempt(full)
            if why is None:
                return wait
            if attempt == ATTEMPTS:
                raise PullError(f"{_shown(full)}: {why}; gave up after {ATTEMPTS} attempts")
            self.on_retry(f"{_shown(full)}: {why}; retrying in {wait:g} s")
            self.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _attempt(self, full: str) -> tuple[Any, str | None]:
        """(the document, None) on success, else (seconds to wait, why) for a retry; raises when a retry is no use."""
        request = urllib.request.Request(full, headers={"Accept": "application/json", **self.headers})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:  # noqa: S310 - http(s), checked above
                body = response.read(self.max_body_bytes + 1)
                declared = response.headers.get("Content-Length")
        except urllib.error.HTTPError as exc:
            return self._refused(full, exc)
        except http.client.IncompleteRead as exc:
            return 2.0, f"the body was cut short ({len(exc.partial):,} bytes, {exc.expected or 'more'} missing)"
        except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            return 2.0, f"could not be reached ({reason})"
        if len(body) > self.max_body_bytes:
            raise PullError(
                f"{_shown(full)}: the answer is larger than {self.max_body_bytes:,} bytes: ask for less at a time "
                "(a shorter range, or fewer --points-per-query)"
            )
        if declared is not None and declared.isdigit() and int(declared) != len(body):
            return 2.0, f"the body was cut short ({len(body):,} of {int(declared):,} bytes)"
        try:
            return json.loads(body), None
        except (ValueError, UnicodeDecodeError) as exc:
            return 2.0, f"the body is not whole JSON ({exc})"

    def _refused(self, full: str, exc: urllib.error.HTTPError) -> tuple[float, str]:
        said = _said(exc)
        if exc.code in (429, 503) or exc.code >= 500:
            wait = _retry_after(exc.headers.get("Retry-After")) if exc.code in (429, 503) else None
            if wait is not None and wait > MAX_WAIT_S:
                raise PullError(f"{_shown(full)}: HTTP {exc.code}, asked to wait {wait:g} s (more than {MAX_WAIT_S:g})")
            return (2.0 if wait is None else wait), f"HTTP {exc.code}{said}"
        hint = " (check the key or token in the environment)" if exc.code in (401, 403) else ""
        raise PullError(f"{_shown(full)}: HTTP {exc.code}{said}{hint}")


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (a number of seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    if value.strip().replace(".", "", 1).isdigit():
        return max(0.0, float(value))
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _said(exc: urllib.error.HTTPError) -> str:
    """The server's own words, short: a JSON error's message, else the body's first line."""
    try:
        text = exc.read(2000).decode("utf-8", "replace").strip()
    except OSError:
        return ""
    try:
        doc = json.loads(text)
        err = doc.get("error", doc) if isinstance(doc, dict) else doc
        text = err.get("message", str(err)) if isinstance(err, dict) else str(err)
    except ValueError:
        pass
    first = text.splitlines()[0][:200] if text else ""
    return f": {first}" if first else ""


def _shown(url: str) -> str:
    """The address without its query string (which may be long, never secret here, but noisy)."""
    return url.split("?", 1)[0]
