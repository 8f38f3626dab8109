"""An HTTP(S) connection held to a deadline of wall clock: a server that trickles its answer a byte at a time resets
every read's timeout, so each exchange also gets a timer that cuts the connection when its time is up, ending whatever
read or write it is blocked in. Standard library only; the alerts' webhook and ``costledger pull`` share it."""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import urllib.request
from typing import Iterator
from urllib.parse import SplitResult


class Connection(http.client.HTTPConnection):
    """An http.client connection that ``cut()`` closes from another thread (``was_cut`` after)."""

    was_cut = False
    _held: socket.socket | None = None
    """The socket connected: http.client lets go of ``sock`` once a response that closes the connection has begun
    (the response reads on), and the cut must still reach it."""

    def connect(self) -> None:
        super().connect()
        self._held = self.sock

    def cut(self) -> None:
        self.was_cut = True
        sock = self._held
        if sock is not None:
            with contextlib.suppress(OSError):
                # the plain socket's own shutdown: a TLS socket's would drop its state under a read in another thread
                socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _Tls(Connection, http.client.HTTPSConnection):
    pass


class _PinnedPlain(Connection):
    """Connects to one address already checked (a name resolved again could lead elsewhere)."""

    def __init__(self, host: str, port: int, *, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = self._held = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedTls(_Tls):
    def __init__(self, host: str, port: int, *, address: str, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self._held = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


def default_port(parts: SplitResult) -> int:
    return parts.port or (443 if parts.scheme == "https" else 80)


def connection(parts: SplitResult, timeout: float, *, address: str | None = None) -> Connection:
    """A connection to the host of ``parts`` (an http or https address), to ``address`` when given; else through the
    proxy the environment names for it (``https_proxy``, ``http_proxy``, ``no_proxy``), tunnelled with CONNECT."""
    host, port, tls = parts.hostname or "", default_port(parts), parts.scheme == "https"
    if address is not None:
        return (_PinnedTls if tls else _PinnedPlain)(host, port, address=address, timeout=timeout)
    proxy = _proxy(parts.scheme, host)
    if proxy is None:
        return (_Tls if tls else Connection)(host, port, timeout=timeout)
    conn = (_Tls if tls else Connection)(proxy.hostname or "", default_port(proxy), timeout=timeout)
    conn.set_tunnel(host, port)
    return conn


def _proxy(scheme: str, host: str) -> SplitResult | None:
    from urllib.parse import urlsplit

    proxy = urllib.request.getproxies().get(scheme)
    if not proxy or urllib.request.proxy_bypass(host):
        return None
    parts = urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    return parts if parts.scheme == "http" and parts.hostname else None


@contextlib.contextmanager
def deadline(conn: Connection, seconds: float) -> Iterator[None]:
    """Cuts ``conn`` when ``seconds`` have passed inside the block."""
    timer = threading.Timer(seconds, conn.cut)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
