"""``costledger pull prometheus``: the engine and GPU metrics the ledger reads, from a Prometheus server's
``query_range`` API, one landing file per chunk of the range.

Prometheus answers at most 11,000 points a series per query, so the range is cut into chunks of at most
``points_per_query`` evaluation instants (10,000 by default); the instants are ``since``, ``since + step``, ... before
``until``, and no instant is in two chunks (a chunk's query ends at its last instant), so no sample is pulled twice.
A chunk is written whole as the server answered it, to ``<landing>/<kind>/prometheus-<first>-<last>-<step>s.json``;
a chunk whose file is there is not asked again, and a chunk with no series writes nothing."""

from __future__ import annotations

import base64
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

from pipeline.pull.http import Client, PullError
from pipeline.pull.landing import Pulled, stamp, write_page
from schemas.meters import ENGINE_METRICS, GPU_METRICS

#: each landing kind and the metrics of it the ledger reads
KINDS: dict[str, tuple[str, ...]] = {"engine-metrics": ENGINE_METRICS, "gpu-metrics": GPU_METRICS}
#: evaluation instants per query: under Prometheus's limit of 11,000 points a series
POINTS_PER_QUERY = 10_000


def selector(metrics: tuple[str, ...]) -> str:
    """The PromQL selector of every series of these metrics (metric names hold no regex characters)."""
    return '{__name__=~"' + "|".join(metrics) + '"}'


def chunks(since: datetime, until: datetime, step_s: int, per_query: int) -> list[tuple[datetime, datetime]]:
    """(first, last) instant of each query: the instants since, since + step, ... before until, ``per_query`` a
    query."""
    if step_s <= 0 or per_query <= 0:
        raise PullError("the step and the points per query must be positive")
    count = -(-int((until - since).total_seconds()) // step_s)  # instants before until: ceil(span / step)
    out = []
    for first in range(0, max(count, 0), per_query):
        last = min(first + per_query, count) - 1
        out.append((since + timedelta(seconds=first * step_s), since + timedelta(seconds=last * step_s)))
    return out


def auth_headers(env: Mapping[str, str]) -> dict[str, str]:
    """A bearer token (COSTLEDGER_PROMETHEUS_TOKEN) or basic auth (COSTLEDGER_PROMETHEUS_USER and
    COSTLEDGER_PROMETHEUS_PASSWORD) from the environment; none without them."""
    token = env.get("COSTLEDGER_PROMETHEUS_TOKEN")
    if token:
        return {"Authorization": f"Bearer {token}"}
    user = env.get("COSTLEDGER_PROMETHEUS_USER")
    if user:
        pair = f"{user}:{env.get('COSTLEDGER_PROMETHEUS_PASSWORD', '')}".encode()
        return {"Authorization": "Basic " + base64.b64encode(pair).decode()}
    return {}


def pull_range(
    client: Client,
    url: str,
    landing: Path,
    window: tuple[datetime, datetime],
    *,
    step_s: int,
    per_query: int = POINTS_PER_QUERY,
    on_chunk: Callable[[Pulled], None] = lambda _: None,
) -> list[Pulled]:
    """Every chunk of both kinds, in order; ``on_chunk`` hears of each as it is done."""
    since, until = (t.astimezone(timezone.utc) for t in window)
    if until <= since:
        raise PullError(f"--until ({until:%Y-%m-%dT%H:%M:%SZ}) is not after --since ({since:%Y-%m-%dT%H:%M:%SZ})")
    done = []
    for kind, metrics in KINDS.items():
        for first, last in chunks(since, until, step_s, per_query):
            path = landing / kind / f"prometheus-{stamp(first)}-{stamp(last)}-{step_s}s.json"
            result = _chunk(client, url, kind, metrics, span=(first, last), step_s=step_s, path=path)
            done.append(result)
            on_chunk(result)
    return done


def _chunk(
    client: Client, url: str, kind: str, metrics: tuple[str, ...], *, span: tuple[datetime, datetime], step_s: int,
    path: Path,
) -> Pulled:  # fmt: skip
    if path.exists():
        return Pulled(kind, path, "present")
    params = [("query", selector(metrics)), ("start", str(int(span[0].timestamp()))),
              ("end", str(int(span[1].timestamp()))), ("step", str(step_s))]  # fmt: skip
    doc = client.get_json(url.rstrip("/") + "/api/v1/query_range", params)
    result = _matrix(doc, url)
    if not result:
        return Pulled(kind, path, "empty")
    write_page(path, doc)
    return Pulled(kind, path, "written", len(result), sum(len(s.get("values") or ()) for s in result))


def _matrix(doc: Any, url: str) -> list[dict]:
    """The series of a successful range query; anything else is an error in the server's words."""
    if not isinstance(doc, dict) or doc.get("status") != "success":
        said = doc.get("error") if isinstance(doc, dict) else None
        raise PullError(f"{url}: the query failed: {said or 'not a Prometheus API answer'}")
    data = doc.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
        raise PullError(f"{url}: the answer is not a query_range matrix")
    return data["result"]
