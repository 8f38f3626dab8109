"""A nightly's alerts: the budgets at risk or over and the anomalies no earlier run named, and their delivery to a
webhook (``[alerts] webhook_url``).

The webhook gets one POST of JSON with a Slack-compatible ``text`` (one line per alert) and the alerts as fields. It is
sent after the publish, so it never delays it; a failure (refused, timed out, an HTTP error) is tried again
``alerts.retries`` times, 1 s, 2 s, 4 s ... apart, and then recorded with the run (``meta.runs.alerts``), never
raised: a nightly whose ledger is published is a nightly that worked."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import TYPE_CHECKING, Callable

from pipeline import __version__
from pipeline.base.query import run_query
from pipeline.base.text import BUDGET_COLUMNS, budget_line

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


def record_new_anomalies(con: duckdb.DuckDBPyConnection, run_id: str) -> list[Anomaly]:
    """The anomalies to alert on (``sql/queries/new_anomalies.sql``); every anomaly the marts hold is then recorded as
    seen, so the next run names none of them again."""
    names, rows = run_query(con, "new_anomalies")
    found = [Anomaly(**dict(zip(names, row))) for row in rows]
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
    return found


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


def post_alerts(
    url: str,
    payload: dict,
    *,
    timeout: float,
    retries: int,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """POST the payload; what became of it, in words (``sent: HTTP 200`` or ``failed after N tries: why``)."""
    body = json.dumps(payload).encode("utf-8")
    why = ""
    for attempt in range(retries + 1):
        if attempt:
            sleep(float(2 ** (attempt - 1)))
        req = urllib.request.Request(
            url, data=body, method="POST",
            headers={"Content-Type": "application/json", "User-Agent": f"costledger/{__version__}"},
        )  # fmt: skip
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (the settings check the scheme)
                return f"sent: HTTP {resp.status}"
        except urllib.error.HTTPError as exc:
            why = f"HTTP {exc.code} {exc.reason}"
            if 400 <= exc.code < 500 and exc.code not in (408, 429):
                break  # the receiver refuses this request: sending it again changes nothing
        except (urllib.error.URLError, OSError, ValueError) as exc:
            reason = getattr(exc, "reason", exc)
            why = f"{type(reason).__name__}: {reason}" if not isinstance(reason, str) else reason
    tries = attempt + 1
    return f"failed after {tries} {'try' if tries == 1 else 'tries'}: {why}"
