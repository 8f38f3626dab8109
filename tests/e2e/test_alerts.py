"""Alerts: a nightly names its budgets at risk or over and its new anomalies, and POSTs them to the webhook of the
settings (``[alerts] webhook_url``). The receiver is a real HTTP server on 127.0.0.1, started and stopped by each test.
A webhook that is down, refuses or hangs never fails the nightly: the ledger is published and the failure is recorded
with the run (meta.runs.alerts)."""

from __future__ import annotations

import json
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest

from tests.conftest import PRICE_MOONSHOT, cli, free_port, request, write_csv


@contextmanager
def receiver(status: int = 200, delay: float = 0.0):
    """A webhook receiver on 127.0.0.1: answers every POST with ``status`` after ``delay`` seconds; yields its URL and
    the JSON bodies it received."""
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server's name)
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append({"json": json.loads(body), "content_type": self.headers["Content-Type"]})
            time.sleep(delay)
            try:
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the sender timed out and hung up (the hanging receiver's case)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", received
    finally:
        server.shutdown()
        server.server_close()


def _landing(tmp_path: Path) -> Path:
    """July: team alpha spends $3.00 or $6.00 a day (1 or 2 million cache-miss tokens at $3 per million) for 28
    days, then $90.00 on the 29th (30 million): a spend spike, and $90 + 14 x 3 + 14 x 6 = $216 spent by the 29th."""
    landing = tmp_path / "landing"
    rows = [
        request(f"r{d}", f"t{d}", f"2026-07-{d:02d}T10:00:00Z", team="alpha",
                cache_miss_input_tokens=30_000_000 if d == 29 else (1_000_000 if d % 2 else 2_000_000))
        for d in range(1, 30)
    ]  # fmt: skip
    write_csv(landing / "prices" / "prices.csv", [PRICE_MOONSHOT])
    write_csv(landing / "requests" / "requests.csv", rows)
    return landing


def _settings(tmp_path: Path, url: str, *, retries: int = 2, timeout: float = 5) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(
        f'[alerts]\nwebhook_url = "{url}"\nretries = {retries}\ntimeout_seconds = {timeout}\n\n'
        '[[budgets]]\nteam = "alpha"\nroute = "api"\nusd = 200\n'
    )
    return path


def _nightly(tmp_path: Path, settings: Path) -> tuple[int, dict]:
    res = cli("nightly", tmp_path / "landing", "--db", tmp_path / "l.duckdb", "--settings", settings, "--json")
    return res.exit_code, json.loads(res.stdout)


def _runs_alerts(tmp_path: Path) -> list[str | None]:
    """meta.runs.alerts of the ledger's work file, oldest run first."""
    con = duckdb.connect(str(tmp_path / "l.duckdb.d" / "work.duckdb"), read_only=True)
    try:
        return [a for (a,) in con.execute("SELECT alerts FROM meta.runs ORDER BY started_at").fetchall()]
    finally:
        con.close()


def _published_spend(tmp_path: Path) -> str:
    con = duckdb.connect(str(tmp_path / "l.duckdb"), read_only=True)
    try:
        return str(con.execute("SELECT spent_usd FROM marts.budget_status").fetchone()[0])
    finally:
        con.close()


def test_the_webhook_receives_the_budget_and_the_new_anomaly_once(tmp_path):
    _landing(tmp_path)
    with receiver() as (url, received):
        code, summary = _nightly(tmp_path, _settings(tmp_path, url))
        assert code == 0
        assert summary["alerts_webhook"] == "sent: HTTP 200"
        assert len(received) == 1 and received[0]["content_type"] == "application/json"
        sent = received[0]["json"]
        # $216.00 spent by July 29 (see _landing); the run-rate of its last 7 days (23rd to 29th: 3 x 3 + 3 x 6 + 90 =
        # $117 of the $216 month's usage) is $117 / 7 a day; 2 days left: 216 + 2 x 117 / 7 = $249.43 > $200
        assert sent["text"].splitlines() == [
            "costledger: 2 alert(s)",
            "- budget over: team alpha on the api route in 2026-07: spent $216.00, projected $249.43 of $200.00",
            "- anomaly: moonshot spend of team alpha was 90.00 USD on 2026-07-29, above the median of 4.50 USD over "
            "the 28 days before (robust score 38.45)",
        ]
        assert [(a["day"], a["kind"], a["spend_effect_usd"]) for a in sent["anomalies"]] == [
            ("2026-07-29", "spend_spike", "85.500000000000")
        ]
        assert sent["budgets"][0]["status"] == "over"
        # the next night, nothing new: the budget is still over (the summary says so) but was alerted on, and the
        # anomaly too: nothing is sent
        code, summary = _nightly(tmp_path, _settings(tmp_path, url))
        assert code == 0 and summary["new_anomalies"] == []
        assert [b["status"] for b in summary["budgets_at_risk_or_over"]] == ["over"]
        assert len(received) == 1
    assert _runs_alerts(tmp_path) == ["sent: HTTP 200", None]
    # status names both while they are recent (the spike is on the data's last day)
    status = json.loads(cli("status", "--db", tmp_path / "l.duckdb", "--json").stdout)
    assert [(b["month"], b["team"], b["status"], b["projected_usd"]) for b in status["budgets_at_risk_or_over"]] == [
        ("2026-07", "alpha", "over", "249.428571428572")  # 216 + 2 x 117 / 7 (117 / 7 = 16.714285714286 a day)
    ]
    # the month as the nightly's summary and the webhook name it
    assert summary["budgets_at_risk_or_over"][0]["month"] == sent["budgets"][0]["month"] == "2026-07"
    assert [(a["day"], a["kind"], a["team"]) for a in status["recent_anomalies"]] == [
        ("2026-07-29", "spend_spike", "alpha")
    ]


def test_a_dead_webhook_leaves_the_publish_intact_and_is_recorded(tmp_path):
    _landing(tmp_path)
    code, summary = _nightly(tmp_path, _settings(tmp_path, f"http://127.0.0.1:{free_port()}/hook", retries=1))
    assert code == 0  # the webhook failed; the nightly did not
    assert summary["published"] and _published_spend(tmp_path) == "216.000000000000"
    assert summary["alerts_webhook"].startswith("failed after 2 tries: ConnectionRefusedError")
    assert _runs_alerts(tmp_path)[0] == summary["alerts_webhook"]


def test_a_webhook_that_answers_500_is_tried_again_and_one_that_hangs_times_out(tmp_path):
    _landing(tmp_path)
    with receiver(status=500) as (url, received):
        code, summary = _nightly(tmp_path, _settings(tmp_path, url, retries=2))
    # one POST and two retries (1 s, then 2 s later), each answered 500
    assert code == 0 and len(received) == 3
    assert summary["alerts_webhook"] == "failed after 3 tries: HTTP 500 Internal Server Error"
    with receiver(delay=3) as (url, received):
        started = time.monotonic()
        code, summary = _nightly(tmp_path, _settings(tmp_path, url, retries=0, timeout=0.5))
        took = time.monotonic() - started
    assert code == 0 and summary["alerts_webhook"].startswith("failed after 1 try: ")
    assert "timed out" in summary["alerts_webhook"]
    assert took < 30  # the 3 s the receiver hangs is not waited out past the 0.5 s timeout (a nightly takes ~10 s)


@contextmanager
def misbehaving(kind: str):
    """A receiver on 127.0.0.1 that redirects every POST to another host (``redirect``), or trickles its answer one
    header byte every 0.4 s (``trickle``); yields its URL and how many requests it got."""
    import socket

    got = []
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            got.append(conn.recv(65536))
            try:
                if kind == "redirect":
                    found = b"HTTP/1.1 302 Found\r\nLocation: http://203.0.113.7/elsewhere\r\nContent-Length: 0\r\n\r\n"
                    conn.sendall(found)
                else:
                    for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100:
                        if stop.is_set():
                            break
                        conn.sendall(bytes([byte]))
                        time.sleep(0.4)
            except OSError:
                pass
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/hook", got
    finally:
        stop.set()
        thread.join(10)
        server.close()


def test_a_redirect_is_a_failed_delivery_never_followed(tmp_path):
    _landing(tmp_path)
    with misbehaving("redirect") as (url, got):
        code, summary = _nightly(tmp_path, _settings(tmp_path, url, retries=2))
    assert code == 0 and len(got) == 1  # not followed, and not tried again: the receiver would redirect again
    assert summary["alerts_webhook"] == (
        "failed after 1 try: HTTP 302 Found: a redirect to 'http://203.0.113.7/elsewhere', not followed"
    )
    assert _runs_alerts(tmp_path)[0] == summary["alerts_webhook"]


def test_a_receiver_trickling_its_answer_is_cut_off_at_the_deadline(tmp_path):
    _landing(tmp_path)
    with misbehaving("trickle") as (url, got):
        started = time.monotonic()
        code, summary = _nightly(tmp_path, _settings(tmp_path, url, retries=0, timeout=1))
        took = time.monotonic() - started
    # each byte comes within the 1 s a read may wait, so only a deadline on the whole try ends it; the whole answer
    # would take 117 x 0.4 = 47 s
    assert code == 0 and len(got) == 1
    assert summary["alerts_webhook"] == "failed after 1 try: timed out: no whole answer within 1 s"
    assert took < 40


@pytest.mark.parametrize(
    ("host", "why"),
    [
        ("169.254.169.254", "a cloud metadata service's address"),
        ("[::ffff:169.254.169.254]", "a cloud metadata service's address"),  # IPv4-mapped
        ("[::ffff:a9fe:a9fe]", "a cloud metadata service's address"),  # the same, in hexadecimal groups
        ("0xa9fea9fe", "a cloud metadata service's address"),  # hexadecimal
        ("2852039166", "a cloud metadata service's address"),  # decimal
        ("0251.0376.0251.0376", "a cloud metadata service's address"),  # octal
        ("169.254.43518", "a cloud metadata service's address"),  # the short form
        ("[fd00:ec2::254]", "a cloud metadata service's address"),  # AWS's IPv6 metadata service
        ("169.254.1.1", "a link-local address"),
        ("[fe80::1]", "a link-local address"),
        ("0.0.0.0", "the unspecified address"),
        ("[::]", "the unspecified address"),
        ("224.0.0.1", "a multicast address"),
        ("10.0.0.5", "a private address"),
        ("192.168.1.10", "a private address"),
        ("[fc00::1]", "a private address"),
    ],
)
def test_a_webhook_at_an_address_the_ledger_does_not_send_to_is_a_settings_error(tmp_path, host, why):
    res = cli("settings", "--settings", _settings(tmp_path, f"http://{host}/hook"))
    assert res.exit_code == 2, res.output
    assert f"alerts.webhook_url: the webhook's host is {why}" in res.output
    assert "Traceback" not in res.output


def test_a_private_webhook_is_allowed_when_the_settings_say_so_and_loopback_always(tmp_path):
    path = _settings(tmp_path, "http://10.0.0.5/hook")
    path.write_text(path.read_text().replace("[alerts]\n", "[alerts]\nallow_private = true\n"))
    assert cli("settings", "--settings", path).exit_code == 0
    assert cli("settings", "--settings", _settings(tmp_path, "http://127.0.0.1:9/hook")).exit_code == 0
    assert cli("settings", "--settings", _settings(tmp_path, "http://[::1]:9/hook")).exit_code == 0


def test_credentials_in_the_webhook_url_are_masked_where_the_settings_are_printed(tmp_path):
    url = "https://ops:hunter2@hooks.example.com/hook?channel=cost&token=s3cr3t"
    res = cli("settings", "--settings", _settings(tmp_path, url))
    assert res.exit_code == 0 and "hunter2" not in res.output and "s3cr3t" not in res.output
    res = cli("settings", "--settings", _settings(tmp_path, url), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["alerts_webhook_url"]["value"] == (
        "https://ops:***@hooks.example.com/hook?channel=cost&token=***"
    )
