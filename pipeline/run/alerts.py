"""A nightly's alerts: the budgets at risk or over and the anomalies no earlier run named, and their delivery to a
webhook (``[alerts] webhook_url``).

The webhook gets one POST of JSON with a Slack-compatible ``text`` (one line per alert) and the alerts as fields. It is
sent after the publish, so it never delays it; a failure (refused, timed out, an HTTP error) is tried again
``alerts.retries`` times, 1 s, 2 s, 4 s ... apart, and then recorded with the run (``meta.runs.alerts``), never
raised: a nightly whose ledger is published is a nightly that worked."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import TYPE_CHECKING, Callable

from pipeline import __version__
from pipeline.base.query import run_query
from pipeline.base.text import BUDGET_COLUMNS, budget_line, printable

if TYPE_CHECKING:
    import duckdb


@dataclass(frozen=True, kw_only=True)
class Anomaly:
    day: date
    kind: str
    provider: str
    team: str
    subject: str
    spend_effect_usd: Decimal | None
    cause: str

    def as_dict(self) -> dict[str, str | None]:
        effect = None if self.spend_effect_usd is None else str(self.spend_effect_usd)
        return {
            "day": self.day.isoformat(), "kind": self.kind, "provider": self.provider, "team": self.team,
            "subject": self.subject, "spend_effect_usd": effect, "cause": self.cause,
        }  # fmt: skip


def new_anomalies(con: duckdb.DuckDBPyConnection) -> list[Anomaly]:
    """The anomalies to alert on (``sql/queries/new_anomalies.sql``): those no run has named yet."""
    names, rows = run_query(con, "new_anomalies")
    return [Anomaly(**dict(zip(names, row))) for row in rows]


def new_budgets(con: duckdb.DuckDBPyConnection, budgets: list[tuple]) -> list[tuple]:
    """Of the budgets at risk or over, (month, team, route, status, ...), those no run has named with that status
    (``meta.alerted_budgets``): a budget is alerted on when it crosses into at risk, and again when it goes over,
    never twice for the same."""
    seen = set(con.execute("SELECT month, team, route, status FROM meta.alerted_budgets").fetchall())
    return [b for b in budgets if tuple(b[:4]) not in seen]


def record_alerted(con: duckdb.DuckDBPyConnection, run_id: str, budgets: list[tuple]) -> None:
    """Once the alerts are delivered (or there is no webhook: the run's own output named them): the budgets named,
    and every anomaly the marts hold, recorded as seen, so no later run names them again. An alert whose delivery
    failed is not recorded: the next run sends it again."""
    for month, team, route, status, *_ in budgets:
        con.execute(
            "INSERT INTO meta.alerted_budgets VALUES (?, ?, ?, ?, ?, current_localtimestamp())",
            [month, team, route, status, run_id],
        )
    con.execute(
        """INSERT INTO meta.alerted_anomalies
           SELECT a.day, a.kind, a.provider, a.team, a.subject, ?, current_localtimestamp()
           FROM marts.daily_anomalies AS a
           WHERE NOT EXISTS (
               SELECT 1 FROM meta.alerted_anomalies AS s
               WHERE s.day = a.day AND s.kind = a.kind AND s.provider = a.provider AND s.team = a.team
                 AND s.subject = a.subject)""",
        [run_id],
    )


def budget_dicts(budgets: list[tuple]) -> list[dict[str, str]]:
    """Budgets at risk or over, (month, team, route, status, spent, projected, budget), as JSON fields (exact
    amounts as text)."""
    return [{k: str(v) for k, v in zip(BUDGET_COLUMNS, b)} for b in budgets]


def alert_payload(run_id: str, budgets: list[tuple], anomalies: list[Anomaly]) -> dict:
    """The webhook's JSON: ``text`` for Slack (and anything that reads it), the alerts as fields for the rest."""
    lines = [budget_line(b) for b in budgets] + [f"anomaly: {a.cause}" for a in anomalies]
    return {
        "text": f"costledger: {len(lines)} alert(s)\n" + "\n".join(f"- {line}" for line in lines),
        "source": f"costledger {__version__}",
        "run_id": run_id,
        "budgets": budget_dicts(budgets),
        "anomalies": [a.as_dict() for a in anomalies],
    }


class _Failed(Exception):
    """One try that failed: why, and whether trying again may help."""

    def __init__(self, why: str, again: bool) -> None:
        super().__init__(why)
        self.why, self.again = why, again


def post_alerts(
    url: str,
    payload: dict,
    *,
    timeout: float,
    retries: int,
    allow_private: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """POST the payload; what became of it, in words (``sent: HTTP 200`` or ``failed after N tries: why``). Each try
    has ``timeout`` seconds of wall clock, all of it; a redirect is a failed delivery (never followed: the alert would
    reach another host, as a GET that drops it); the host's addresses are checked before connecting
    (``pipeline.base.addresses``) and the connection made to the address checked."""
    body = json.dumps(payload).encode("utf-8")
    why = ""
    for attempt in range(retries + 1):
        if attempt:
            sleep(float(2 ** (attempt - 1)))
        try:
            return _post_once(url, body, timeout, allow_private)
        except _Failed as exc:
            why = exc.why
            if not exc.again:
                break  # the receiver refuses this request, or the address is refused: sending it again changes nothing
    tries = attempt + 1
    return f"failed after {tries} {'try' if tries == 1 else 'tries'}: {why}"


def _post_once(url: str, body: bytes, timeout: float, allow_private: bool) -> str:
    import http.client
    import socket
    from urllib.parse import urlsplit

    from pipeline.base.addresses import address_refused
    from pipeline.base.web import connection, deadline, default_port

    parts = urlsplit(url)
    host, port = parts.hostname or "", default_port(parts)
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise _Failed(f"{type(exc).__name__}: {exc}", again=True) from None
    addresses = [info[4][0] for info in found]
    for address in addresses:
        refused = address_refused(address, allow_private)
        if refused:
            raise _Failed(f"not sent: {host} is at {address}, {refused}", again=False)
    conn = connection(parts, timeout, address=addresses[0])
    try:
        with deadline(conn, timeout):  # a receiver trickling bytes cannot hold the try longer
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            headers = {"Content-Type": "application/json", "User-Agent": f"costledger/{__version__}"}
            conn.request("POST", target, body=body, headers=headers)
            resp = conn.getresponse()
            resp.read(65536)
    except (OSError, http.client.HTTPException) as exc:
        if conn.was_cut:
            raise _Failed(f"timed out: no whole answer within {timeout:g} s", again=True) from None
        reason = getattr(exc, "reason", exc)
        raise _Failed(f"{type(exc).__name__}: {reason}", again=True) from None
    finally:
        conn.close()
    if 200 <= resp.status < 300:
        return f"sent: HTTP {resp.status}"
    if 300 <= resp.status < 400:
        where = printable(str(resp.getheader("Location") or "")[:200])
        raise _Failed(f"HTTP {resp.status} {resp.reason}: a redirect to {where!r}, not followed", again=False)
    again = resp.status >= 500 or resp.status in (408, 429)
    raise _Failed(f"HTTP {resp.status} {resp.reason}", again=again)
