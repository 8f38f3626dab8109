"""One JSON GET, as a pull needs it: the body kept as the server sent it (it is what the landing file holds), parsed
only to check it. Retried when the server says so (429 and 503 with their Retry-After) or fails on its side (5xx, a
connection dropped, a body cut short, no whole answer before the deadline), never when the request itself is wrong
(4xx: the error names the status and the server's own words).

A pull carries credentials, so the client is a boundary: it follows a redirect only to the same scheme, host and port
(anywhere else is an error, and nothing is sent there), holds every request to a deadline of wall clock from
connecting to the last byte, reads at most ``max_body_bytes``, parses an answer only when the memory its values would
take (``parse_cost``) fits under ``max_parse_bytes``, and never prints the user name or password an address carries.
Standard library only."""

from __future__ import annotations

import base64
import http.client
import json
import time
import urllib.parse
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any, Callable

from pipeline.base.errors import CostledgerError, ExitCode
from pipeline.base.web import connection, deadline, default_port

#: attempts of one request before the pull stops (the first and three retries)
ATTEMPTS = 4
#: the longest a Retry-After is honoured (seconds); a server asking for more ends the pull, saying so
MAX_WAIT_S = 300.0
#: the largest answer read (bytes): a Prometheus chunk of 10,000 instants of a hundred series is about 25 MB
MAX_BODY_BYTES = 256 << 20
#: the most memory an answer may take to parse (its bytes, its text and its values, as ``parse_cost`` bounds them):
#: that 25 MB chunk is bounded by about 430 MB
MAX_PARSE_BYTES = 768 << 20
#: the longest one request may take, from connecting to the last byte of the answer (seconds)
DEADLINE_S = 60.0
#: redirects followed within the address's own scheme, host and port
MAX_REDIRECTS = 5
_READ = 1 << 16


class PullError(CostledgerError):
    """A pull that cannot go on: the address, the status and what the server said (exit 1; pages already written
    stay, and the next pull starts after them)."""


class PullAsksTooMuch(PullError):
    """A pull whose range, step and chunk size would make too many requests (exit 2: nothing was asked)."""

    exit_code = ExitCode.USAGE


@dataclass(frozen=True)
class Answer:
    """A JSON answer: its bytes as the server sent them, and the document they parse to (for checks only: a JSON
    object that names a key twice keeps its last value here, and both in ``body``)."""

    body: bytes
    doc: Any


def parse_cost(body: bytes) -> int:
    """An upper bound of the memory (bytes) ``json.loads(body)`` takes, from counts of the bytes alone: the text
    decoded (up to 4 bytes a character where any is not ASCII) and the strings in it, 128 bytes an object or array,
    88 a value after a separator (held to ``tracemalloc``'s figures by a property test). A JSON "bomb" of empty
    arrays costs 25 times its size; a Prometheus matrix about 17 times."""
    width = 1 if body.isascii() else 4
    opens = body.count(b"{") + body.count(b"[")
    values = body.count(b",") + body.count(b":") + 1
    return 2 * width * len(body) + 128 * opens + 88 * values + 4096


@dataclass(kw_only=True)
class Client:
    """GETs JSON with fixed headers; ``sleep`` waits between attempts (a test passes its own)."""

    headers: dict[str, str] = field(default_factory=dict)
    timeout_s: float = DEADLINE_S
    """The deadline of one request, all of it."""
    max_body_bytes: int = MAX_BODY_BYTES
    max_parse_bytes: int = MAX_PARSE_BYTES
    sleep: Callable[[float], None] = time.sleep
    on_retry: Callable[[str], None] = lambda _: None
    """Hears of each retry as it happens, in words (what went wrong and how long the pull waits)."""

    def get(self, url: str, params: list[tuple[str, str]] | None = None) -> Answer:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise PullError(f"{shown(url)!r} is not an http:// or https:// address")
        try:
            parts.port  # noqa: B018 - raises for a port that is not a number
        except ValueError:
            raise PullError(f"{shown(url)!r} has a port that is not a number") from None
        full = url + ("?" + urllib.parse.urlencode(params) if params else "")
        for attempt in range(1, ATTEMPTS + 1):
            answer, why, wait = self._attempt(full)
            if answer is not None:
                return answer
            if attempt == ATTEMPTS:
                raise PullError(f"{shown(full)}: {why}; gave up after {ATTEMPTS} attempts")
            self.on_retry(f"{shown(full)}: {why}; retrying in {wait:g} s")
            self.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _attempt(self, full: str) -> tuple[Answer | None, str, float]:
        """(the answer, "", 0) on success, else (None, why, seconds to wait) for a retry; raises when a retry is no
        use."""
        try:
            status, headers, body = self._exchange(full)
        except _Again as exc:
            return None, exc.why, 2.0
        if status >= 400:
            wait, why = self._refused(full, status, headers, body)
            return None, why, wait
        if len(body) > self.max_body_bytes:
            raise PullError(
                f"{shown(full)}: the answer is larger than {self.max_body_bytes:,} bytes: ask for less at a time "
                "(a shorter range, or fewer --points-per-query)"
            )
        cost = parse_cost(body)
        if cost > self.max_parse_bytes:
            raise PullError(
                f"{shown(full)}: the answer ({len(body):,} bytes) holds so many values that reading it could take "
                f"{cost / 2**20:,.0f} MiB of memory, more than the {self.max_parse_bytes / 2**20:,.0f} MiB a page "
                "may take: ask for less at a time (a shorter range, or fewer --points-per-query)"
            )
        try:
            return Answer(body, json.loads(body)), "", 0.0
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            return None, f"the body is not whole JSON ({str(exc)[:120]})", 2.0

    def _exchange(self, full: str) -> tuple[int, http.client.HTTPMessage, bytes]:
        """The status, headers and body of ``full``, redirects within its origin followed; ``_Again`` for what a
        retry may mend."""
        origin = _origin(full)
        target = full
        started = time.monotonic()
        for _ in range(MAX_REDIRECTS + 1):
            left = self.timeout_s - (time.monotonic() - started)
            if left <= 0:
                raise _Again(f"no whole answer within {self.timeout_s:g} s")
            status, headers, body = self._one(target, left)
            if status not in (301, 302, 303, 307, 308):
                return status, headers, body
            location = headers.get("Location") or ""
            nxt = urllib.parse.urljoin(target, location.strip())
            if not location.strip() or _origin(nxt) != origin:
                raise PullError(
                    f"{shown(target)}: HTTP {status}, redirected to {shown(nxt)!r}: not followed (a pull sends its "
                    f"credentials only to {origin[0]}://{origin[1]}:{origin[2]}); give the address it names if you "
                    "trust it"
                )
            target = nxt
        raise PullError(f"{shown(full)}: more than {MAX_REDIRECTS} redirects")

    def _one(self, target: str, left: float) -> tuple[int, http.client.HTTPMessage, bytes]:
        parts = urllib.parse.urlsplit(target)
        headers = {"Accept": "application/json", **_basic(parts), **self.headers}
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        conn = connection(parts, left)
        try:
            with deadline(conn, left):
                conn.request("GET", path, headers=headers)
                resp = conn.getresponse()
                body = _read(resp, self.max_body_bytes)
            if conn.was_cut:  # an answer without a length ends where it was cut: not whole
                raise _Again(f"no whole answer within {self.timeout_s:g} s")
            return resp.status, resp.headers, body
        except http.client.IncompleteRead as exc:
            if conn.was_cut:
                raise _Again(f"no whole answer within {self.timeout_s:g} s") from None
            raise _Again(
                f"the body was cut short ({len(exc.partial):,} bytes, {exc.expected or 'more'} missing)"
            ) from None
        except (http.client.HTTPException, OSError) as exc:
            if conn.was_cut:
                raise _Again(f"no whole answer within {self.timeout_s:g} s") from None
            raise _Again(f"could not be reached ({str(getattr(exc, 'reason', exc))[:200]})") from None
        finally:
            conn.close()

    def _refused(self, full: str, status: int, headers: http.client.HTTPMessage, body: bytes) -> tuple[float, str]:
        said = _said(body)
        if status in (429, 503) or status >= 500:
            wait = _retry_after(headers.get("Retry-After")) if status in (429, 503) else None
            if wait is not None and wait > MAX_WAIT_S:
                raise PullError(f"{shown(full)}: HTTP {status}, asked to wait {wait:g} s (more than {MAX_WAIT_S:g})")
            return (2.0 if wait is None else wait), f"HTTP {status}{said}"
        hint = " (check the key or token in the environment)" if status in (401, 403) else ""
        raise PullError(f"{shown(full)}: HTTP {status}{said}{hint}")


class _Again(Exception):
    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def _read(resp: http.client.HTTPResponse, cap: int) -> bytes:
    """The body, in pieces as they arrive (so the deadline can cut it), stopping one byte past ``cap``."""
    out = bytearray()
    while len(out) <= cap:
        piece = resp.read1(min(_READ, cap + 1 - len(out)))
        if not piece:
            break
        out += piece
    declared = resp.getheader("Content-Length")
    if len(out) <= cap and declared is not None and declared.isdigit() and int(declared) != len(out):
        raise http.client.IncompleteRead(bytes(out), int(declared) - len(out))
    return bytes(out)


def _origin(url: str) -> tuple[str, str, int]:
    parts = urllib.parse.urlsplit(url)
    try:
        return parts.scheme.lower(), (parts.hostname or "").lower(), default_port(parts)
    except ValueError:
        return parts.scheme.lower(), (parts.hostname or "").lower(), -1


def _basic(parts: urllib.parse.SplitResult) -> dict[str, str]:
    """Basic authentication from a user name and password written in the address (``http://user:pw@host``)."""
    if parts.username is None:
        return {}
    pair = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
    return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (a number of seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    if value.strip().replace(".", "", 1).isdigit():
        return max(0.0, float(value))
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


def _said(body: bytes) -> str:
    """The server's own words, short: a JSON error's message, else the body's first line."""
    text = body[:2000].decode("utf-8", "replace").strip()
    try:
        doc = json.loads(text)
        err = doc.get("error", doc) if isinstance(doc, dict) else doc
        text = err.get("message", str(err)) if isinstance(err, dict) else str(err)
    except (ValueError, RecursionError):
        pass
    first = text.splitlines()[0][:200] if text else ""
    return f": {first}" if first else ""


def shown(url: str) -> str:
    """An address as the pull prints it: no query string (long, never secret here, but noisy) and no user name or
    password."""
    parts = urllib.parse.urlsplit(url.split("?", 1)[0])
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", parts.fragment))
