"""``costledger pull openai`` and ``pull anthropic``: the organisation cost and usage endpoints the ledger reads
(``openai_costs``, ``openai_usage``, ``anthropic_costs``, ``anthropic_usage``), page by page into the landing folder.

Each page is written whole as the provider answered it, to ``<landing>/<kind>/<name>-<from>-<to>-pNNN.json``: the
costs into ``invoices/``, the usage into ``usage/``. A page that is there is not asked again: the pull reads its
``has_more`` and ``next_page`` and goes on from the page after it. A page with no buckets writes nothing."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from pipeline.base.text import printable
from pipeline.pull.http import Client, PullError, shown
from pipeline.pull.landing import Pulled, pulled_before, read_page, stamp, write_page


@dataclass(frozen=True)
class Endpoint:
    """One paged endpoint of a provider's admin API."""

    kind: str
    """The landing kind its pages go to."""
    name: str
    """The pages' file names begin with it."""
    path: str
    fixed: tuple[tuple[str, str], ...]
    """Its query parameters besides the window and the page cursor."""
    window: str
    """How the window is given: unix (start_time / end_time, seconds) or iso (starting_at / ending_at)."""


OPENAI_URL = "https://api.openai.com"
ANTHROPIC_URL = "https://api.anthropic.com"
PROVIDERS: dict[str, tuple[Endpoint, ...]] = {
    "openai": (
        Endpoint("invoices", "openai-costs", "/v1/organization/costs", (("bucket_width", "1d"), ("limit", "31")),
                 "unix"),
        Endpoint("usage", "openai-usage", "/v1/organization/usage/completions",
                 (("bucket_width", "1d"), ("limit", "31"), ("group_by", "model")), "unix"),
    ),
    "anthropic": (
        Endpoint("invoices", "anthropic-costs", "/v1/organizations/cost_report",
                 (("limit", "31"), ("group_by[]", "description")), "iso"),
        Endpoint("usage", "anthropic-usage", "/v1/organizations/usage_report/messages",
                 (("bucket_width", "1d"), ("limit", "31"), ("group_by[]", "model")), "iso"),
    ),
}  # fmt: skip
#: the environment variable that holds each provider's admin key, and the headers it goes in
KEY_ENV = {"openai": "OPENAI_ADMIN_KEY", "anthropic": "ANTHROPIC_ADMIN_KEY"}
#: a provider that keeps saying there is more is stopped here (a month of daily buckets is a few pages)
MAX_PAGES = 1000


def headers(provider: str, key: str) -> dict[str, str]:
    if provider == "anthropic":
        return {"x-api-key": key, "anthropic-version": "2023-06-01"}
    return {"Authorization": f"Bearer {key}"}


def pull_pages(
    client: Client,
    provider: str,
    base_url: str,
    landing: Path,
    window: tuple[datetime, datetime],
    on_page: Callable[[Pulled], None] = lambda _: None,
) -> list[Pulled]:
    """Every page of the provider's endpoints over the window, in order. An endpoint that fails does not keep the
    next from being asked: its error is raised once every endpoint has been tried (the pages written stay)."""
    since, until = (t.astimezone(timezone.utc) for t in window)
    if until <= since:
        raise PullError(f"--until ({until:%Y-%m-%d}) is not after --since ({since:%Y-%m-%d})")
    done: list[Pulled] = []
    failed: list[str] = []
    for endpoint in PROVIDERS[provider]:
        try:
            for result in _endpoint(client, endpoint, base_url.rstrip("/"), landing, (since, until)):
                done.append(result)
                on_page(result)
        except PullError as exc:
            failed.append(str(exc))
    if failed:
        raise PullError("; and ".join(failed))
    return done


def _endpoint(client: Client, e: Endpoint, base: str, landing: Path, window: tuple[datetime, datetime]):
    stem = f"{e.name}-{stamp(window[0])}-{stamp(window[1])}"
    url = shown(base + e.path)
    cursor: str | None = None
    seen: dict[str, int] = {}  # each cursor followed, and the page it named
    bodies: dict[bytes, int] = {}  # each page's digest, and its number
    for n in range(1, MAX_PAGES + 1):
        path = landing / e.kind / f"{stem}-p{n:03d}.json"
        if pulled_before(path):
            doc, state, body = read_page(path), "present", None
            _buckets(doc, f"{path}")
        else:
            params = [*_window_params(e, window), *e.fixed, *((("page", cursor),) if cursor else ())]
            answer = client.get(base + e.path, params)
            doc, body = answer.doc, answer.body
            state = "written" if _buckets(doc, url) else "empty"
        digest = hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).digest()
        if digest in bodies:
            raise PullError(
                f"{url}: page {n} is page {bodies[digest]} again, word for word: the provider repeats itself, so the "
                f"pull stops here (pages 1 to {n - 1} are in the landing folder)"
            )
        bodies[digest] = n
        more, cursor = _next(doc, url, n, seen)
        if state == "written" and body is not None:
            write_page(path, body)
        yield Pulled(e.kind, path, state, len(doc["data"]))
        if not more:
            return
    raise PullError(f"{url}: more than {MAX_PAGES} pages; pull a shorter window")


def _next(doc: dict, url: str, n: int, seen: dict[str, int]) -> tuple[bool, str | None]:
    """Whether page ``n`` says there is more, and the cursor of the page after it; a cursor met before is an error (a
    provider that names one page twice would be asked for it forever)."""
    if not doc.get("has_more"):
        return False, None
    cursor = doc.get("next_page")
    if not isinstance(cursor, str) or not cursor:
        raise PullError(f"{url}: page {n} says it has more but names no next_page")
    if cursor in seen:
        raise PullError(
            f"{url}: page {n} names the next page {cursor[:60]!r}, which page {seen[cursor]} named already: the "
            f"provider repeats itself, so the pull stops here (pages 1 to {n - 1} are in the landing folder)"
        )
    seen[cursor] = n
    return True, cursor


def _window_params(e: Endpoint, window: tuple[datetime, datetime]) -> list[tuple[str, str]]:
    if e.window == "unix":
        return [("start_time", str(int(window[0].timestamp()))), ("end_time", str(int(window[1].timestamp())))]
    return [("starting_at", f"{window[0]:%Y-%m-%dT%H:%M:%SZ}"), ("ending_at", f"{window[1]:%Y-%m-%dT%H:%M:%SZ}")]


def _buckets(doc: Any, url: str) -> list:
    """A page's buckets; a document that is not a page is an error in the provider's words."""
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        said = doc.get("error") if isinstance(doc, dict) else None
        if isinstance(said, dict):
            said = said.get("message")
        said = printable(str(said)[:200]) if said else ""
        raise PullError(f"{url}: the answer is not a page of buckets{f': {said}' if said else ''}")
    return doc["data"]
