"""`costledger pull openai` and `pull anthropic` against a local HTTP server that serves the providers' documented
cost and usage pages (started here on 127.0.0.1): every page pulled and loaded once, a page that failed (a 500, a
429 with Retry-After, a body cut short) asked again and not duplicated, a page already pulled not asked again, and
the month's cost in the ledger the sum of the pages' buckets."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from tests.conftest import cli, open_published

pytestmark = pytest.mark.slow

OCT = datetime(2026, 10, 1, tzinfo=timezone.utc)
DAYS = [OCT + timedelta(days=d) for d in range(31)]


def _openai_costs() -> list[dict]:
    """A bucket a day of October; day d cost $d of gpt-5 input: $1 + ... + $31 = $496."""
    return [{"object": "bucket", "start_time": int(t.timestamp()), "end_time": int((t + timedelta(days=1)).timestamp()),
             "results": [{"object": "organization.costs.result", "amount": {"value": d + 1, "currency": "usd"},
                          "line_item": "gpt-5, input", "project_id": None}]}
            for d, t in enumerate(DAYS)]  # fmt: skip


def _openai_usage() -> list[dict]:
    t = DAYS[9]
    return [{"object": "bucket", "start_time": int(t.timestamp()), "end_time": int((t + timedelta(days=1)).timestamp()),
             "results": [{"object": "organization.usage.completions.result", "input_tokens": 1000, "output_tokens": 500,
                          "input_cached_tokens": 800, "num_model_requests": 5, "model": "gpt-5"}]}]  # fmt: skip


def _anthropic_costs() -> list[dict]:
    """A bucket a day of October; day d cost 125 x d cents of Claude output: $1.25 x (1 + ... + 31) = $620."""
    return [{"starting_at": f"{t:%Y-%m-%dT%H:%M:%SZ}", "ending_at": f"{t + timedelta(days=1):%Y-%m-%dT%H:%M:%SZ}",
             "results": [{"currency": "USD", "amount": str(125 * (d + 1)), "description": "Claude Output",
                          "cost_type": "tokens", "model": "claude-sonnet-4", "service_tier": "standard",
                          "token_type": "output_tokens", "context_window": "0-200k", "workspace_id": None}]}
            for d, t in enumerate(DAYS)]  # fmt: skip


def _anthropic_usage() -> list[dict]:
    return [{"starting_at": "2026-10-10T00:00:00Z", "ending_at": "2026-10-11T00:00:00Z",
             "results": [{"uncached_input_tokens": 100, "cache_read_input_tokens": 50, "output_tokens": 70,
                          "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
                          "model": "claude-sonnet-4", "service_tier": "standard"}]}]  # fmt: skip


ENDPOINTS = {
    "/v1/organization/costs": _openai_costs,
    "/v1/organization/usage/completions": _openai_usage,
    "/v1/organizations/cost_report": _anthropic_costs,
    "/v1/organizations/usage_report/messages": _anthropic_usage,
}
PAGE = 10  # buckets a page: October's 31 days are 4 pages (10, 10, 10, 1)


class Provider(ThreadingHTTPServer):
    """Serves ENDPOINTS in pages of PAGE buckets, the cursor 'c<n>' naming page n; ``faults`` maps (path, page) to
    what the first request of that page gets instead (500, 429 or 'cut'); ``asked`` records every request."""

    def __init__(self, faults: dict[tuple[str, int], object]) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.faults = dict(faults)
        self.asked: list[tuple[str, int, dict]] = []
        self.lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    server: Provider

    def log_message(self, *args) -> None:  # the test's output stays quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        url = urlparse(self.path)
        query = parse_qs(url.query)
        page = int(query.get("page", ["c1"])[0][1:])
        with self.server.lock:
            self.server.asked.append((url.path, page, {k.lower(): v for k, v in self.headers.items()}))
            fault = self.server.faults.pop((url.path, page), None)
        buckets = ENDPOINTS[url.path]()
        more = page * PAGE < len(buckets)
        body = json.dumps({"object": "page", "data": buckets[(page - 1) * PAGE : page * PAGE], "has_more": more,
                           "next_page": f"c{page + 1}" if more else None}).encode()  # fmt: skip
        if isinstance(fault, int):
            self.send_response(fault)
            if fault == 429:
                self.send_header("Retry-After", "1")
            self.end_headers()
            self.wfile.write(b'{"error": {"message": "try again"}}')
            return
        if fault == "cut":  # a proxy cut the body short, its length declared whole
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def provider():
    made: list[Provider] = []

    def start(faults: dict) -> Provider:
        server = Provider(faults)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        made.append(server)
        return server

    yield start
    for server in made:
        server.shutdown()
        server.server_close()


def _month_cost(db: Path, provider: str) -> tuple[Decimal, int]:
    con = open_published(db)
    try:
        return con.execute(
            "SELECT sum(amount_usd), count(*) FROM staging.stg_ledger__invoices WHERE provider = ? "
            "AND month = DATE '2026-10-01'",
            [provider],
        ).fetchone()
    finally:
        con.close()


def test_openai_pages_are_pulled_once_each_retried_page_once_and_the_month_is_their_sum(provider, tmp_path,
                                                                                       monkeypatch):  # fmt: skip
    costs = "/v1/organization/costs"
    server = provider({(costs, 2): 500, (costs, 3): 429, (costs, 4): "cut"})
    monkeypatch.setenv("OPENAI_ADMIN_KEY", "sk-admin-test")
    landing = tmp_path / "landing"
    args = ("pull", "openai", "--month", "2026-10", "--base-url", f"http://127.0.0.1:{server.server_port}",
            "--landing", landing)  # fmt: skip
    res = cli(*args)
    assert res.exit_code == 0, res.output
    stem = "openai-costs-20261001T000000Z-20261101T000000Z"
    assert sorted(p.name for p in (landing / "invoices").iterdir()) == [f"{stem}-p00{n}.json" for n in (1, 2, 3, 4)]
    usage = "openai-usage-20261001T000000Z-20261101T000000Z-p001.json"
    assert [p.name for p in (landing / "usage").iterdir()] == [usage]
    # page 1 once; pages 2, 3 and 4 twice (the fault, then the page); the usage once; every request with the key
    assert [page for path, page, _ in server.asked if path == costs] == [1, 2, 2, 3, 3, 4, 4]
    assert {h["authorization"] for _, _, h in server.asked} == {"Bearer sk-admin-test"}
    said = " ".join(res.output.split())
    assert "HTTP 500: try again; retrying" in said and "HTTP 429: try again; retrying in 1 s" in said
    assert "the body was cut short" in said
    # pulled again: every page is there, the last says there is no more: nothing is asked
    asked = len(server.asked)
    assert cli(*args).exit_code == 0 and len(server.asked) == asked
    db = tmp_path / "ledger.duckdb"
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code in (0, 4), res.output  # 4: the invoice has no request log to reconcile with
    # 31 buckets, each once: $1 + $2 + ... + $31 = 31 x 32 / 2 = $496
    assert _month_cost(db, "openai") == (Decimal("496"), 31)


def test_anthropic_pages_carry_its_headers_and_cents_become_dollars(provider, tmp_path, monkeypatch):
    report = "/v1/organizations/cost_report"
    server = provider({(report, 2): 500})
    monkeypatch.setenv("ANTHROPIC_ADMIN_KEY", "sk-ant-admin-test")
    landing = tmp_path / "landing"
    res = cli("pull", "anthropic", "--since", "2026-10-01", "--until", "2026-11-01", "--base-url",
              f"http://127.0.0.1:{server.server_port}", "--landing", landing)  # fmt: skip
    assert res.exit_code == 0, res.output
    assert len(list((landing / "invoices").iterdir())) == 4 and len(list((landing / "usage").iterdir())) == 1
    first = next(q for path, _, q in server.asked if path == report)
    assert (first["x-api-key"], first["anthropic-version"]) == ("sk-ant-admin-test", "2023-06-01")
    db = tmp_path / "ledger.duckdb"
    res = cli("nightly", landing, "--db", db)
    assert res.exit_code in (0, 4), res.output
    # 125 x (1 + ... + 31) = 125 x 496 = 62,000 cents = $620
    assert _month_cost(db, "anthropic") == (Decimal("620"), 31)


def test_a_refused_key_and_a_missing_key_are_clear(provider, tmp_path, monkeypatch):
    server = provider({("/v1/organization/costs", 1): 401, ("/v1/organization/usage/completions", 1): 401})
    landing = tmp_path / "landing"
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    res = cli("pull", "openai", "--month", "2026-10", "--landing", landing)
    assert res.exit_code == 2 and "set OPENAI_ADMIN_KEY" in res.output
    monkeypatch.setenv("OPENAI_ADMIN_KEY", "sk-wrong")
    res = cli("pull", "openai", "--month", "2026-10", "--base-url", f"http://127.0.0.1:{server.server_port}",
              "--landing", landing)  # fmt: skip
    assert res.exit_code == 1
    assert "HTTP 401" in res.output and "check the key" in " ".join(res.output.split())
    assert not landing.exists()


def test_a_landing_folder_that_cannot_hold_a_page_is_named(provider, tmp_path, monkeypatch):
    # a file stands where the invoices folder would be: the page cannot be written, and the command says where
    server = provider({})
    monkeypatch.setenv("OPENAI_ADMIN_KEY", "sk-admin-test")
    landing = tmp_path / "landing"
    landing.mkdir()
    (landing / "invoices").write_text("not a folder", encoding="utf-8")
    res = cli("pull", "openai", "--month", "2026-10", "--base-url", f"http://127.0.0.1:{server.server_port}",
              "--landing", landing)  # fmt: skip
    assert res.exit_code == 1, res.output
    assert f"error: cannot write {landing / 'invoices'}/openai-costs-" in " ".join(res.output.split())
