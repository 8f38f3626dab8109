"""A local HTTP server for the pull's tests: each request answered by a function of the handler, which returns
(status, headers, body) or writes the answer itself and returns None; every request recorded (path, headers)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

import pytest

#: what a handler answers: (status, headers, body), or None when it wrote the answer itself
Reply = tuple[int, dict[str, str], bytes] | None


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, answer: Callable[[BaseHTTPRequestHandler], Reply]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer = answer
        self.asked: list[tuple[str, dict[str, str]]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}"


class _Handler(BaseHTTPRequestHandler):
    server: Server

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.server.asked.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        reply = self.server.answer(self)
        if reply is None:
            return
        status, headers, body = reply
        self.send_response(status)
        for k, v in {"Content-Length": str(len(body)), **headers}.items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass


@pytest.fixture
def serve():
    """Start servers on 127.0.0.1 (``serve(answer)`` returns one); all are stopped when the test ends."""
    made: list[Server] = []

    def start(answer: Callable[[BaseHTTPRequestHandler], Reply]) -> Server:
        server = Server(answer)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        made.append(server)
        return server

    yield start
    for server in made:
        server.shutdown()
        server.server_close()
