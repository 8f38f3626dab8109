"""What the request-log formats share: reading a field by its dotted path, whole numbers that must be whole, parts
that must add up, timestamps in ISO text or unix seconds, the status of a request, and the canonical token columns.

A record that cannot be mapped raises ``MappingError`` with the fields named: it becomes the quarantine reason.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any, Callable

#: Fields that only the canonical request columns have: a record with one is not another format's
CANONICAL_MARKERS = ("cache_hit_input_tokens", "cache_miss_input_tokens")


class MappingError(ValueError):
    """The record cannot be mapped: the message says which fields and why (it becomes the quarantine reason)."""


# ------------------------------------------------------------------ small helpers


def get(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def whole(value: Any, field: str) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, bool):
        raise MappingError(f"{field} is not a whole number ({value!r})")
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise MappingError(f"{field} is not a whole number ({str(value)[:40]!r})") from None
    if f != int(f):
        raise MappingError(f"{field} is not a whole number ({value!r})")
    return int(f)


def split(total: int, part: int, total_name: str, part_name: str) -> tuple[int, int]:
    """(part, total - part) where total INCLUDES part; part > total is bad input."""
    if part > total:
        raise MappingError(f"{part_name} ({part}) > {total_name} ({total}): the parts do not add up")
    return part, total - part


def json_obj(value: Any) -> dict:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            parsed = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def timestamp(value: Any) -> str | None:
    """ISO-8601 text for a timestamp given as ISO text or unix seconds / milliseconds."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.replace(".", "", 1).isdigit()):
        secs = float(value)
        if secs > 1e12:  # milliseconds
            secs /= 1000
        return dt.datetime.fromtimestamp(secs, dt.timezone.utc).isoformat()
    return str(value)


def seconds(value: Any) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        try:
            return float(value)
        except ValueError:
            return None


def status(rec: dict, resp: dict) -> str:
    raw = rec.get("status", resp.get("status") if isinstance(resp.get("status"), str) else None)
    code = rec.get("status_code", get(rec, "response.status_code"))
    if rec.get("error") or resp.get("error"):
        return "error"
    if isinstance(raw, str):
        s = raw.lower()
        if s in ("ok", "success", "succeeded", "completed", "200"):
            return "ok"
        if s in ("timeout", "timed_out"):
            return "timeout"
        if s in ("failure", "failed", "error"):
            return "error"
        return s  # for example the Responses API's incomplete
    if code is not None:
        c = whole(code, "status_code")
        if 200 <= c < 300:
            return "ok"
        return "timeout" if c in (408, 504) else "error"
    return "ok"


Tokens = dict[str, int]


def tokens(
    hit: int, miss: int, output: int, reasoning: int, *, write_5m: int = 0, write_1h: int = 0, web_search_calls: int = 0
) -> Tokens:
    return {
        "cache_hit_input_tokens": hit,
        "cache_miss_input_tokens": miss,
        "cache_write_5m_input_tokens": write_5m,
        "cache_write_1h_input_tokens": write_1h,
        "output_tokens": output,
        "reasoning_tokens": reasoning,
        "web_search_calls": web_search_calls,
    }


def response_body(rec: dict) -> dict:
    """The response body of a record: the record itself, its ``response``, or (OpenAI Batch output) its
    ``response.body``."""
    inner = rec.get("response")
    if isinstance(inner, dict):
        body = inner.get("body")
        if isinstance(body, dict) and "usage" in body:
            return body
        if "usage" in inner or "meta_info" in inner or "usageMetadata" in inner:
            return inner
    return rec


def api_body(
    rec: dict, resp: dict, fmt: str, mapper: Callable[[dict], Tokens]
) -> tuple[Tokens, str | None, float | None]:
    """An API response body: its usage through ``mapper``, its creation time; no latency of its own."""
    usage = resp.get("usage")
    started = timestamp(rec.get("started_at") or rec.get("timestamp") or resp.get("created") or resp.get("created_at"))
    if usage is None and failed_without_usage(rec):
        # a gateway's 504 or 500 carries no usage: a failed attempt that used no tokens, still an attempt (retries cost)
        return tokens(0, 0, 0, 0), started, None
    if not isinstance(usage, dict):
        raise MappingError(f"no usage object in this {fmt} record")
    return mapper(usage), started, None


def failed_without_usage(rec: dict) -> bool:
    """A record of a request that failed (its status is not ok) and whose response has no usage at all."""
    resp = response_body(rec)
    if any(k in resp for k in ("usage", "usageMetadata", "meta_info")):
        return False
    try:
        return status(rec, resp) != "ok"
    except MappingError:
        return False


def text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)
