"""``costledger pull prometheus``: the engine and GPU metrics the ledger reads, from a Prometheus server's
``query_range`` API, one landing file per chunk of the range.

Prometheus answers at most 11,000 points a series per query, so the range is cut into chunks of at most
``points_per_query`` evaluation instants (10,000 by default); the instants are ``since``, ``since + step``, ... before
``until``, and no instant is in two chunks (a chunk's query ends at its last instant), so no sample is pulled twice.
A chunk is written whole as the server answered it, to ``<landing>/<kind>/prometheus-<first>-<last>-<step>s.json``;
a chunk whose file is there is not asked again, and a chunk with no series writes nothing."""

from __future__ import annotations

import base64
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Mapping

from pipeline.base.text import printable
from pipeline.pull.http import Client, PullAsksTooMuch, PullError, shown
from pipeline.pull.landing import Pulled, pulled_before, stamp, write_page
from schemas.meters import ENGINE_METRICS, GPU_METRICS

#: each landing kind and the metrics of it the ledger reads
KINDS: dict[str, tuple[str, ...]] = {"engine-metrics": ENGINE_METRICS, "gpu-metrics": GPU_METRICS}
#: evaluation instants per query: under Prometheus's limit of 11,000 points a series
POINTS_PER_QUERY = 10_000
#: queries one pull may make of each kind (a year of 15 s samples is 211 queries of 10,000 instants)
MAX_QUERIES = 10_000
_NAME = re.compile(r"prometheus-(\d{8}T\d{6}Z)-(\d{8}T\d{6}Z)-(\d+)s\.json")


def selector(metrics: tuple[str, ...]) -> str:
    """The PromQL selector of every series of these metrics (metric names hold no regex characters)."""
    return '{__name__=~"' + "|".join(metrics) + '"}'


def chunks(since: datetime, until: datetime, step_s: int, per_query: int) -> list[tuple[datetime, datetime]]:
    """(first, last) instant of each query: the instants since, since + step, ... before until, ``per_query`` a
    query; more than ``MAX_QUERIES`` is an error naming what to change."""
    if step_s <= 0 or per_query <= 0:
        raise PullError("the step and the points per query must be positive")
    count = -(-int((until - since).total_seconds()) // step_s)  # instants before until: ceil(span / step)
    return [(since + timedelta(seconds=a * step_s), since + timedelta(seconds=b * step_s))
            for a, b in _runs([(0, count - 1)], per_query)]  # fmt: skip


def _runs(spans: list[tuple[int, int]], per_query: int) -> list[tuple[int, int]]:
    """The instants of ``spans`` (first and last index, both included) cut into queries of at most ``per_query``."""
    queries = sum(-(-(b - a + 1) // per_query) for a, b in spans if b >= a)
    if queries > MAX_QUERIES:
        raise PullAsksTooMuch(
            f"that is {queries:,} queries of at most {per_query:,} instants, more than {MAX_QUERIES:,}: a longer "
            "--step, more --points-per-query (Prometheus answers up to 11,000) or a shorter range"
        )
    return [
        (first, min(first + per_query, b + 1) - 1) for a, b in spans if b >= a for first in range(a, b + 1, per_query)
    ]


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
    queries: dict[str, list[tuple[datetime, datetime]]],
    *,
    step_s: int,
    on_chunk: Callable[[Pulled], None] = lambda _: None,
) -> list[Pulled]:
    """Every chunk of ``queries`` (``plan``), in order; ``on_chunk`` hears of each as it is done."""
    done = []
    for kind, spans in queries.items():
        for first, last in spans:
            path = landing / kind / f"prometheus-{stamp(first)}-{stamp(last)}-{step_s}s.json"
            result = _chunk(client, url, kind, KINDS[kind], span=(first, last), step_s=step_s, path=path)
            done.append(result)
            on_chunk(result)
    return done


def plan(
    landing: Path, window: tuple[datetime, datetime], step_s: int, per_query: int
) -> dict[str, list[tuple[datetime, datetime]]]:
    """Each kind's queries, (first, last) instant: the window's instants (since, since + step, ... before until) less
    those a chunk in the landing folder holds already (the same step, on the same grid), so that pulls over
    overlapping windows ask for each instant once."""
    since, until = (t.astimezone(timezone.utc) for t in window)
    if until <= since:
        raise PullError(f"--until ({until:%Y-%m-%dT%H:%M:%SZ}) is not after --since ({since:%Y-%m-%dT%H:%M:%SZ})")
    if step_s <= 0 or per_query <= 0:
        raise PullError("the step and the points per query must be positive")
    count = -(-int((until - since).total_seconds()) // step_s)
    out = {}
    for kind in KINDS:
        spans = _uncovered(count, [_index_span(f, since, step_s) for f in _pulled(landing / kind, step_s)])
        out[kind] = [(since + timedelta(seconds=a * step_s), since + timedelta(seconds=b * step_s))
                     for a, b in _runs(spans, per_query)]  # fmt: skip
    return out


def _pulled(folder: Path, step_s: int) -> list[tuple[datetime, datetime]]:
    """(first, last) instant of each chunk of this step in ``folder``, read from the names the pull gives them."""
    try:
        names = [p.name for p in folder.iterdir()] if folder.is_dir() and not folder.is_symlink() else []
    except OSError:
        return []
    out = []
    for name in names:
        m = _NAME.fullmatch(name)
        if m and int(m.group(3)) == step_s:
            first, last = (datetime.strptime(g, "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc) for g in m.groups()[:2])
            out.append((first, last))
    return out


def _index_span(chunk: tuple[datetime, datetime], since: datetime, step_s: int) -> tuple[int, int] | None:
    """The window's instant indexes a chunk holds (the window's instants are since + k x step); None when its
    instants fall between them (another grid: other instants)."""
    offset = int((chunk[0] - since).total_seconds())
    if offset % step_s:
        return None
    return -(-offset // step_s), int((chunk[1] - since).total_seconds()) // step_s


def _uncovered(count: int, held: list[tuple[int, int] | None]) -> list[tuple[int, int]]:
    """The indexes 0 .. count - 1 that no span of ``held`` covers, as (first, last) runs."""
    spans, at = [], 0
    for a, b in sorted(h for h in held if h is not None):
        if a > at:
            spans.append((at, min(a, count) - 1))
        at = max(at, b + 1)
        if at >= count:
            break
    if at < count:
        spans.append((at, count - 1))
    return [(a, b) for a, b in spans if a <= b]


def _chunk(
    client: Client, url: str, kind: str, metrics: tuple[str, ...], *, span: tuple[datetime, datetime], step_s: int,
    path: Path,
) -> Pulled:  # fmt: skip
    if pulled_before(path):
        return Pulled(kind, path, "present")
    params = [("query", selector(metrics)), ("start", str(int(span[0].timestamp()))),
              ("end", str(int(span[1].timestamp()))), ("step", str(step_s))]  # fmt: skip
    answer = client.get(url.rstrip("/") + "/api/v1/query_range", params)
    series = _matrix(answer.doc, shown(url))
    if not series:
        return Pulled(kind, path, "empty")
    write_page(path, answer.body)
    return Pulled(kind, path, "written", len(series), sum(len(s["values"]) for s in series))


def _matrix(doc: Any, url: str) -> list[dict]:
    """The series of a successful range query, each a metric and a list of values; anything else is an error in
    the server's words, and nothing is written."""
    if not isinstance(doc, dict) or doc.get("status") != "success":
        said = doc.get("error") if isinstance(doc, dict) else None
        said = printable(str(said)[:200]) if said else "not a Prometheus API answer"
        raise PullError(f"{url}: the query failed: {said}")
    data = doc.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "matrix" or not isinstance(data.get("result"), list):
        raise PullError(f"{url}: the answer is not a query_range matrix")
    for i, series in enumerate(data["result"], start=1):
        if not (isinstance(series, dict) and isinstance(series.get("metric"), dict)
                and isinstance(series.get("values"), list)):  # fmt: skip
            raise PullError(f"{url}: the answer is not a query_range matrix (series {i} is not a metric with values)")
    return data["result"]
