"""The pull's HTTP client against a local server that misbehaves: an answer that is not JSON is asked again and then
named, an answer too large stops at once, a Retry-After too long is not waited for, an address that is not http(s)
is refused; the waits are recorded, never slept."""

from __future__ import annotations

import pytest

from pipeline.pull.http import Client, PullError


@pytest.fixture
def served(serve):
    """A server that gives every request the same answer; returns its address."""

    def start(status: int, body: bytes, headers: dict[str, str] | None = None) -> str:
        return serve(lambda h: (status, headers or {}, body)).url + "/api"

    return start


def _client(**kw) -> tuple[Client, list[float], list[str]]:
    waits: list[float] = []
    said: list[str] = []
    return Client(sleep=waits.append, on_retry=said.append, **kw), waits, said


def test_an_answer_that_is_not_json_is_asked_again_then_named(served):
    url = served(200, b"<html>maintenance</html>")
    client, waits, said = _client()
    with pytest.raises(PullError, match="the body is not whole JSON.*gave up after 4 attempts"):
        client.get(url)
    assert waits == [2.0, 2.0, 2.0] and len(said) == 3


def test_an_answer_too_large_stops_at_once(served):
    url = served(200, b'{"data": "' + b"x" * 100 + b'"}')
    client, waits, _ = _client(max_body_bytes=50)
    with pytest.raises(PullError, match="larger than 50 bytes"):
        client.get(url)
    assert waits == []


def test_a_retry_after_beyond_five_minutes_is_not_waited_for(served):
    url = served(429, b"{}", {"Retry-After": "3600"})
    client, waits, _ = _client()
    with pytest.raises(PullError, match="asked to wait 3600 s"):
        client.get(url)
    assert waits == []


def test_a_retry_after_is_waited_for_then_the_answer_read(served):
    url = served(503, b'{"error": "warming up"}', {"Retry-After": "7"})
    client, waits, said = _client()
    with pytest.raises(PullError, match="HTTP 503: warming up; gave up"):
        client.get(url)
    assert waits == [7.0, 7.0, 7.0] and "retrying in 7 s" in said[0]


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/x", "localhost:9090", "http://"])
def test_an_address_that_is_not_http_is_refused(url):
    client, waits, _ = _client()
    with pytest.raises(PullError, match="is not an http:// or https:// address"):
        client.get(url)
    assert waits == []
