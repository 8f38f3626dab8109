"""`costledger pull` carries credentials, so it is a boundary: served on 127.0.0.1 by servers that try to turn it.

A redirect elsewhere is not followed and the credentials reach nobody else; nothing is written through a symbolic
link under the landing; a provider that names one page twice is stopped; a page lands byte for byte as served; an
answer whose values would take too much memory is refused before it is parsed; a server that trickles its answer is
held to a deadline; malformed answers are errors that write nothing; an address's password is never printed; months
and ranges a pull cannot ask for are usage errors."""

from __future__ import annotations

import json
import os
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Callable
from urllib.parse import parse_qs, urlparse

import pytest
from hypothesis import given, settings, strategies as st

from pipeline.pull.http import Client, PullError, parse_cost
from tests.conftest import cli
from tests.httpserver import Reply


def _client(**kw) -> tuple[Client, list[float], list[str]]:
    waits: list[float] = []
    said: list[str] = []
    return Client(sleep=waits.append, on_retry=said.append, **kw), waits, said


def _said(res) -> str:  # noqa: ANN001 - a CliRunner result
    return " ".join(res.output.split())


MATRIX = {"status": "success", "data": {"resultType": "matrix", "result": [
    {"metric": {"__name__": "vllm:prompt_tokens_total", "cluster": "k3"},
     "values": [[1791158400, "100"]]}]}}  # fmt: skip


def _json(doc: object) -> Reply:
    return 200, {"Content-Type": "application/json"}, json.dumps(doc).encode()


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


# -- redirects ------------------------------------------------------------------------------------------------------


def test_a_redirect_to_another_host_is_not_followed_and_the_token_reaches_nobody_else(serve, tmp_path, monkeypatch):
    elsewhere = serve(lambda h: _json(MATRIX))  # another port of 127.0.0.1: another origin, as 169.254.169.254 is
    redirecting = serve(lambda h: (302, {"Location": f"{elsewhere.url}/latest/meta-data{h.path}"}, b""))
    monkeypatch.setenv("COSTLEDGER_PROMETHEUS_TOKEN", "secret-token-123")
    landing = tmp_path / "landing"
    res = _prometheus_pull(redirecting.url, landing)
    assert res.exit_code == 1, res.output
    assert "redirected to" in _said(res) and "not followed" in _said(res)
    assert elsewhere.asked == []  # nothing, let alone the token, reached the other host
    assert redirecting.asked[0][1]["authorization"] == "Bearer secret-token-123"
    assert _files(landing) == []
    assert "secret-token-123" not in res.output


def test_a_provider_redirected_elsewhere_sends_its_key_nowhere(serve, tmp_path, monkeypatch):
    elsewhere = serve(lambda h: _json({"data": [], "has_more": False}))
    redirecting = serve(lambda h: (307, {"Location": f"https://evil.example:8443{h.path}"}, b""))
    redirecting_local = serve(lambda h: (301, {"Location": f"{elsewhere.url}{h.path}"}, b""))
    monkeypatch.setenv("OPENAI_ADMIN_KEY", "sk-admin-secret")
    for server in (redirecting, redirecting_local):
        res = cli("pull", "openai", "--month", "2026-10", "--base-url", server.url, "--landing", tmp_path / "l")
        assert res.exit_code == 1 and "not followed" in _said(res), res.output
        assert "sk-admin-secret" not in res.output
    assert elsewhere.asked == []


def test_a_redirect_within_the_same_address_is_followed_with_the_credentials(serve):
    def answer(h: BaseHTTPRequestHandler) -> Reply:
        if h.path.startswith("/old"):
            return 308, {"Location": h.path.replace("/old", "/new", 1)}, b""
        return _json(MATRIX)

    server = serve(answer)
    client, _, _ = _client(headers={"Authorization": "Bearer t"})
    got = client.get(f"{server.url}/old/api/v1/query_range", [("step", "60")])
    assert got.doc == MATRIX
    assert [p for p, _ in server.asked] == ["/old/api/v1/query_range?step=60", "/new/api/v1/query_range?step=60"]
    assert all(h["authorization"] == "Bearer t" for _, h in server.asked)


def test_endless_redirects_within_the_address_end(serve):
    server = serve(lambda h: (302, {"Location": h.path + "x"}, b""))
    client, _, _ = _client()
    with pytest.raises(PullError, match="more than 5 redirects"):
        client.get(f"{server.url}/a")


# -- symbolic links under the landing -------------------------------------------------------------------------------


def _prometheus_pull(url: str, landing: Path):  # noqa: ANN202 - a CliRunner result
    return cli("pull", "prometheus", "--url", url, "--since", "2026-10-05", "--until", "2026-10-05T01:00:00Z",
               "--step", "1h", "--landing", landing)  # fmt: skip


CHUNK = "prometheus-20261005T000000Z-20261005T000000Z-3600s.json"


def test_a_link_planted_at_the_hidden_part_path_is_not_written_through(serve, tmp_path):
    server = serve(lambda h: _json(MATRIX))
    landing, outside = tmp_path / "landing", tmp_path / "precious.txt"
    outside.write_text("keep me")
    for kind in ("engine-metrics", "gpu-metrics"):
        (landing / kind).mkdir(parents=True)
        (landing / kind / f".{CHUNK}.part").symlink_to(outside)
    res = _prometheus_pull(server.url, landing)
    assert res.exit_code == 0, res.output
    assert outside.read_text() == "keep me"
    for kind in ("engine-metrics", "gpu-metrics"):
        page = landing / kind / CHUNK
        assert not page.is_symlink() and json.loads(page.read_bytes()) == MATRIX
        assert not (landing / kind / f".{CHUNK}.part").exists()


def test_a_kind_folder_linked_out_of_the_landing_is_refused(serve, tmp_path):
    server = serve(lambda h: _json(MATRIX))
    landing, outside = tmp_path / "landing", tmp_path / "elsewhere"
    landing.mkdir()
    outside.mkdir()
    (landing / "engine-metrics").symlink_to(outside, target_is_directory=True)
    res = _prometheus_pull(server.url, landing)
    assert res.exit_code == 1
    assert f"{landing / 'engine-metrics'} is a symbolic link" in _said(res)
    assert list(outside.iterdir()) == []


def test_a_link_at_a_page_name_is_not_read_as_a_page_pulled_before(serve, tmp_path):
    server = serve(lambda h: _json({"data": [{"start_time": 1}], "has_more": False}))
    landing, outside = tmp_path / "landing", tmp_path / "secret.json"
    outside.write_text('{"data": [], "has_more": true, "next_page": "x"}')
    (landing / "invoices").mkdir(parents=True)
    (landing / "invoices" / "openai-costs-20261001T000000Z-20261101T000000Z-p001.json").symlink_to(outside)
    os.environ["OPENAI_ADMIN_KEY"] = "sk"
    try:
        res = cli("pull", "openai", "--month", "2026-10", "--base-url", server.url, "--landing", landing)
    finally:
        del os.environ["OPENAI_ADMIN_KEY"]
    assert res.exit_code == 1
    assert "is not a file the pull wrote (a symbolic link or a folder)" in _said(res)


# -- pages: cursors, bytes ------------------------------------------------------------------------------------------


def test_a_provider_that_repeats_its_cursor_is_stopped_and_the_next_endpoint_still_asked(serve, tmp_path, monkeypatch):
    def answer(h: BaseHTTPRequestHandler) -> Reply:
        if "usage" in h.path:
            return _json({"data": [{"start_time": 1, "results": []}], "has_more": False})
        # every answer names the same next page and holds the same bucket, whatever it is asked
        return _json({"data": [{"start_time": 1, "results": []}], "has_more": True, "next_page": "same"})

    server = serve(answer)
    monkeypatch.setenv("OPENAI_ADMIN_KEY", "sk")
    landing = tmp_path / "landing"
    res = cli("pull", "openai", "--month", "2026-10", "--base-url", server.url, "--landing", landing)
    assert res.exit_code == 1
    assert "page 2 is page 1 again" in _said(res) and "repeats itself" in _said(res)
    costs_asked = [p for p, _ in server.asked if "costs" in p]
    assert len(costs_asked) == 2  # page 1, then the repeat, and no more
    assert any("usage" in p for p, _ in server.asked)
    assert _files(landing) == [
        "invoices/openai-costs-20261001T000000Z-20261101T000000Z-p001.json",
        "usage/openai-usage-20261001T000000Z-20261101T000000Z-p001.json",
    ]
    # the next pull asks the server again (page 1 is there) and stops at the same place, writing nothing more
    res = cli("pull", "openai", "--month", "2026-10", "--base-url", server.url, "--landing", landing)
    assert res.exit_code == 1 and "repeats itself" in _said(res)
    assert len([p for p, _ in server.asked if "costs" in p]) == 3


def test_a_cursor_named_again_by_a_new_page_is_stopped(serve, tmp_path, monkeypatch):
    def answer(h: BaseHTTPRequestHandler) -> Reply:
        page = parse_qs(urlparse(h.path).query).get("page", ["a"])[0]
        nxt = {"a": "b", "b": "c", "c": "b"}[page]  # c names b again: a loop
        return _json({"data": [{"start_time": ord(page)}], "has_more": True, "next_page": nxt})

    server = serve(answer)
    monkeypatch.setenv("OPENAI_ADMIN_KEY", "sk")
    res = cli("pull", "openai", "--month", "2026-10", "--base-url", server.url, "--landing", tmp_path / "l")
    assert res.exit_code == 1
    assert "page 3 names the next page 'b', which page 1 named already" in _said(res)
    assert len(_files(tmp_path / "l" / "invoices")) == 2  # pages 1 and 2; page 3 would lead back


def test_a_page_lands_byte_for_byte_as_served_duplicate_keys_and_all(serve, tmp_path):
    # the nightly quarantines a series whose labels name a key twice: the pull must not resolve it first
    body = (b'{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":'
            b'"vllm:prompt_tokens_total","cluster":"good","cluster":"evil-cluster"},'
            b'"values":[[1791158400,"100"]]}]}}')  # fmt: skip
    server = serve(lambda h: (200, {}, body))
    landing = tmp_path / "landing"
    res = _prometheus_pull(server.url, landing)
    assert res.exit_code == 0, res.output
    assert (landing / "engine-metrics" / CHUNK).read_bytes() == body


# -- memory and time ------------------------------------------------------------------------------------------------


def test_a_json_bomb_is_refused_before_it_is_parsed(serve):
    # 2 MB of empty arrays: json.loads would hold 22 bytes for each byte (about 45 MB); refused, it holds the body
    bomb = b"[" + b",".join([b"[]"] * 700_000) + b"]"
    server = serve(lambda h: (200, {}, bomb))
    client, waits, _ = _client(max_parse_bytes=20 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(PullError, match="could take .* MiB of memory, more than the 20 MiB"):
            client.get(server.url)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert waits == []  # not asked again: the same answer would come
    assert peak < 12 * len(bomb), peak  # the body and the pieces it came in, not a parse


@st.composite
def _json_values(draw) -> object:
    leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
    return draw(st.recursive(leaves, lambda inner: st.lists(inner, max_size=8)
                             | st.dictionaries(st.text(max_size=6), inner, max_size=8), max_leaves=400))  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(value=_json_values(), indent=st.sampled_from([None, 0, 2]))
def test_parse_cost_bounds_what_parsing_takes(value, indent):
    body = json.dumps(value, indent=indent, ensure_ascii=bool(indent)).encode()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        parsed = json.loads(body)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del parsed
    assert peak <= parse_cost(body), (peak, parse_cost(body), body[:200])


@pytest.mark.parametrize(
    "shape",
    [b"[]", b"{}", b'{"a":0}', b'{"k%d":null}', b'"s%d"', b"%d.5", b"[[[[0]]]]", '"\U0001f600%d"'.encode(),
     '{"\U0001f600%d":1}'.encode(), b'[%d,"%d.5"]'],
)  # fmt: skip
def test_parse_cost_bounds_the_worst_shapes_at_size(shape):
    # the shapes that cost the most a byte (empty containers, distinct keys and strings, wide characters) at 100,000
    # values, where a constant term no longer hides anything
    items = [shape.replace(b"%d", str(i).encode()) for i in range(100_000)]
    body = b"[" + b",".join(items) + b"]"
    tracemalloc.start()
    try:
        parsed = json.loads(body)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    del parsed
    assert peak <= parse_cost(body), (shape, peak, parse_cost(body))


def _trickle(delay: float, body: bytes = b'{"status":"success"}' * 50) -> Callable[[BaseHTTPRequestHandler], Reply]:
    def answer(h: BaseHTTPRequestHandler) -> Reply:
        h.send_response(200)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        try:
            for i in range(len(body)):  # a byte at a time, each well inside a read's timeout
                h.wfile.write(body[i : i + 1])
                h.wfile.flush()
                time.sleep(delay)
        except OSError:
            pass  # the client cut it
        return None

    return answer


def test_an_answer_trickled_past_the_deadline_is_cut_and_asked_again(serve):
    server = serve(_trickle(0.05))  # 1,000 bytes at 20 a second: 50 s to send
    client, waits, said = _client(timeout_s=1)
    started = time.monotonic()
    with pytest.raises(PullError, match="no whole answer within 1 s; gave up after 4 attempts"):
        client.get(server.url)
    assert waits == [2.0, 2.0, 2.0] and len(said) == 3
    assert time.monotonic() - started < 40  # four attempts of a second each, not the trickle's 200 s


# -- malformed answers, credentials in the address, what cannot be asked --------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the parser goes
        json.dumps({"status": "success", "data": {"resultType": "matrix", "result": ["not a series"]}}).encode(),
        json.dumps(
            {"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, "values": 7}]}}
        ).encode(),
        json.dumps(
            {"status": "success", "data": {"resultType": "matrix", "result": [{"metric": [], "values": []}]}}
        ).encode(),
        json.dumps({"status": "success", "data": ["matrix"]}).encode(),
        json.dumps({"status": "error", "error": {"nested": "x" * 500}}).encode(),
        json.dumps(["success"]).encode(),
        b"null",
    ],
    ids=["deep", "series-text", "values-number", "metric-list", "data-list", "error-object", "array", "null"],
)
def test_a_malformed_prometheus_answer_is_one_error_and_writes_nothing(serve, tmp_path, body):
    server = serve(lambda h: (200, {}, body))
    landing = tmp_path / "landing"
    res = _prometheus_pull(server.url, landing)
    assert res.exit_code == 1, res.output
    assert "error:" in res.output and "please report" not in res.output and "Traceback" not in res.output
    assert _files(landing) == []


def test_a_password_in_the_address_is_used_and_never_printed(serve, tmp_path):
    server = serve(lambda h: (503, {"Retry-After": "0"}, b'{"error": "warming up"}'))
    url = server.url.replace("http://", "http://admin:s3cr%21t@")
    res = _prometheus_pull(url, tmp_path / "landing")
    assert res.exit_code == 1
    assert "retrying in 0 s" in res.output and "gave up after 4 attempts" in _said(res)
    assert "s3cr" not in res.output and "admin" not in res.output
    import base64

    assert server.asked[0][1]["authorization"] == "Basic " + base64.b64encode(b"admin:s3cr!t").decode()


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (("--month", "9999-12"), "--month '9999-12' is outside the years 1970 to 9998"),
        (("--month", "0000-01"), "--month '0000-01' is outside the years 1970 to 9998"),
        (("--since", "0001-01-01", "--until", "2026-01-01"), "--since 0001-01-01 is outside the years 1970 to 9998"),
        (("--since", "2000-01-01", "--until", "2026-01-01", "--step", "1s", "--points-per-query", "1"),
         "queries of at most 1 instants, more than 10,000"),
    ],
)  # fmt: skip
def test_what_a_pull_cannot_ask_for_is_a_usage_error_before_any_request(tmp_path, extra, said):
    tracemalloc.start()
    try:
        res = cli("pull", "prometheus", "--url", "http://127.0.0.1:9", "--landing", tmp_path / "l", *extra)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.exit_code == 2, res.output
    assert said in _said(res)
    assert peak < 50 << 20  # no plan of 800 million queries held first
