"""``costledger pull openai`` and ``pull anthropic``: the organisation cost and usage endpoints the ledger reads
(``openai_costs``, ``openai_usage``, ``anthropic_costs``, ``anthropic_usage``), page by page into the landing folder.

Each page is written whole as the provider answered it, to ``<landing>/<kind>/<name>-<from>-<to>-pNNN.json``: the
costs into ``invoices/``, the usage into ``usage/``. A page that is there is not asked again: the pull reads its
``has_more`` and ``next_page`` and goes on from the page after it. A page with no buckets writes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from pipeline.pull.http import Client, PullError
from pipeline.pull.landing import Pulled, read_page, stamp, write_page


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
    """Every page of the provider's endpoints over the window, in order."""
    since, until = (t.astimezone(timezone.utc) for t in window)
    if until <= since:
        raise PullError(f"--until ({until:%Y-%m-%d}) is not after --since ({since:%Y-%m-%d})")
    done: list[Pulled] = []
    for endpoint in PROVIDERS[provider]:
        for result in _endpoint(client, endpoint, base_url.rstrip("/"), landing, (since, until)):
            done.append(result)
            on_page(result)
    return done


def _endpoint(client: Client, e: Endpoint, base: str, landing: Path, window: tuple[datetime, datetime]):
    stem = f"{e.name}-{stamp(window[0])}-{stamp(window[1])}"
    cursor: str | None = None
    for n in range(1, MAX_PAGES + 1):
        path = landing / e.kind / f"{stem}-p{n:03d}.json"
        if path.exists():
            doc, state = read_page(path), "present"
        else:
            params = [*_window_params(e, window), *e.fixed, *((("page", cursor),) if cursor else ())]
            doc = client.get_json(base + e.path, params)
            state = "written" if _buckets(doc, base + e.path) else "empty"
            if state == "written":
                write_page(path, doc)
        yield Pulled(e.kind, path, state, len(doc.get("data") or ()))
        if not doc.get("has_more"):
            return
        cursor = doc.get("next_page")
        if not isinstance(cursor, str) or not cursor:
            raise PullError(f"{base + e.path}: page {n} says it has more but names no next_page")
    raise PullError(f"{base + e.path}: more than {MAX_PAGES} pages; pull a shorter window")


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
        raise PullError(f"{url}: the answer is not a page of buckets{f': {said}' if said else ''}")
    return doc["data"]
