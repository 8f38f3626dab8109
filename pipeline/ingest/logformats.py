"""Real-world request logs mapped onto the canonical request columns.

Formats (``--format``, or detected per record):

``openai_chat``       OpenAI Chat Completions: ``usage.prompt_tokens`` INCLUDES
                      ``prompt_tokens_details.cached_tokens``; ``completion_tokens`` INCLUDES
                      ``completion_tokens_details.reasoning_tokens``. vLLM's and SGLang's
                      OpenAI-compatible servers answer in this format (vLLM reports
                      cached_tokens only with ``--enable-prompt-tokens-details``).
``openai_responses``  OpenAI Responses API: ``input_tokens`` / ``input_tokens_details.cached_tokens``,
                      ``output_tokens`` / ``output_tokens_details.reasoning_tokens``, same inclusion.
``anthropic``         Anthropic Messages: ``input_tokens`` EXCLUDES ``cache_read_input_tokens`` and
                      ``cache_creation_input_tokens``; cache writes count as cache-miss input.
                      Thinking tokens are not reported apart: they are in ``output_tokens``.
``litellm``           LiteLLM SpendLogs rows (JSONL or CSV export): ``prompt_tokens`` /
                      ``completion_tokens``, the usage details from ``metadata.usage_object``
                      (else ``metadata.additional_usage_values``), ``startTime`` / ``endTime``,
                      ``custom_llm_provider``, ``status`` (success / failure), ``request_tags``.
``vllm``              vLLM per-request records (``RequestOutput``-like): ``prompt_token_ids`` or
                      ``num_prompt_tokens``, ``num_cached_tokens``, ``outputs[].token_ids`` or
                      ``num_generation_tokens``, ``metrics.arrival_time`` / ``finished_time`` (unix s).
``sglang``            SGLang native ``/generate`` responses: ``meta_info.prompt_tokens``,
                      ``cached_tokens``, ``completion_tokens`` (incl. ``reasoning_tokens`` when
                      reported), ``e2e_latency`` (s).

Gateway envelope (all JSON formats): a line is either the provider's response body or
``{"request_id", "timestamp"|"started_at", "latency_ms"|"duration_ms", "status"|"status_code",
"metadata": {...}, "request": {...}, "response": {...}}``. Task, attempt, route, provider,
cluster, team and accepted come from ``metadata`` (``task_id``, ``attempt``, ``route``,
``provider``, ``cluster_id``, ``team``, ``accepted``; LiteLLM: ``metadata.spend_logs_metadata``
or a ``task_id:<id>`` request tag), else from the settings' ``[[request_logs]]`` entry matching
the file name, else defaults (route: api for OpenAI / Anthropic / LiteLLM, self_hosted for
vLLM / SGLang; task = the request itself).

Only the named fields are read. Prompts, messages, responses, reasoning text and tool-call
arguments are never copied: a mapped row holds the canonical columns and nothing else.
A record whose counts do not add up (cached > prompt, reasoning > completion) is
quarantined with the fields named, never silently fixed.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from pipeline.fileformats import FileMapping, LOG_FORMATS, LogMapping  # noqa: F401 (the format's names, also read from here)

CANONICAL_MARKERS = ("cache_hit_input_tokens", "cache_miss_input_tokens")


class MappingError(ValueError):
    """The record cannot be mapped: the message says which fields and why (it becomes the quarantine reason)."""


# ------------------------------------------------------------------ small helpers


def _get(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def _int(value: Any, field: str) -> int:
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


def _split(total: int, part: int, total_name: str, part_name: str) -> tuple[int, int]:
    """(part, total - part) where total INCLUDES part; part > total is bad input."""
    if part > total:
        raise MappingError(f"{part_name} ({part}) > {total_name} ({total}): the parts do not add up")
    return part, total - part


def _json_obj(value: Any) -> dict:
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            parsed = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _timestamp(value: Any) -> str | None:
    """ISO-8601 text for a timestamp given as ISO text or unix seconds / milliseconds."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) or (isinstance(value, str) and value.replace(".", "", 1).isdigit()):
        seconds = float(value)
        if seconds > 1e12:  # milliseconds
            seconds /= 1000
        return dt.datetime.fromtimestamp(seconds, dt.timezone.utc).isoformat()
    return str(value)


def _seconds(value: Any) -> float | None:
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


def _status(rec: dict, resp: dict) -> str:
    raw = rec.get("status", resp.get("status") if isinstance(resp.get("status"), str) else None)
    code = rec.get("status_code", _get(rec, "response.status_code"))
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
        c = _int(code, "status_code")
        if 200 <= c < 300:
            return "ok"
        return "timeout" if c in (408, 504) else "error"
    return "ok"


# ------------------------------------------------------------------ token mappings (one per format)

Tokens = dict[str, int]


def _tokens_openai(usage: dict, inp: str, out: str) -> Tokens:
    """OpenAI usage objects: ``inp`` tokens with ``<inp>_details.cached_tokens`` inside them, ``out`` tokens with
    ``<out>_details.reasoning_tokens`` inside them (the Chat and Responses APIs differ only in these names)."""
    total_in = _int(usage.get(inp), f"usage.{inp}")
    cached = _int(_get(usage, f"{inp}_details.cached_tokens"), f"usage.{inp}_details.cached_tokens")
    total_out = _int(usage.get(out), f"usage.{out}")
    reasoning = _int(_get(usage, f"{out}_details.reasoning_tokens"), f"usage.{out}_details.reasoning_tokens")
    hit, miss = _split(total_in, cached, inp, f"{inp}_details.cached_tokens")
    reasoning, output = _split(total_out, reasoning, out, f"{out}_details.reasoning_tokens")
    return _tokens(hit, miss, output, reasoning)


def tokens_openai_chat(usage: dict) -> Tokens:
    return _tokens_openai(usage, "prompt_tokens", "completion_tokens")


def tokens_openai_responses(usage: dict) -> Tokens:
    return _tokens_openai(usage, "input_tokens", "output_tokens")


def tokens_anthropic(usage: dict) -> Tokens:
    """Anthropic usage: ``input_tokens`` EXCLUDES cache reads and writes (add them, never subtract). Writes are kept
    apart by lifetime (``cache_creation.ephemeral_5m_input_tokens`` / ``ephemeral_1h_input_tokens``; a bare
    ``cache_creation_input_tokens`` is a 5-minute write); ``server_tool_use.web_search_requests`` are web searches."""
    inp = _int(usage.get("input_tokens"), "usage.input_tokens")
    read = _int(usage.get("cache_read_input_tokens"), "usage.cache_read_input_tokens")
    out = _int(usage.get("output_tokens"), "usage.output_tokens")
    creation = usage.get("cache_creation")
    if isinstance(creation, dict):
        write_5m = _int(creation.get("ephemeral_5m_input_tokens"), "usage.cache_creation.ephemeral_5m_input_tokens")
        write_1h = _int(creation.get("ephemeral_1h_input_tokens"), "usage.cache_creation.ephemeral_1h_input_tokens")
        total = usage.get("cache_creation_input_tokens")
        if total is not None and _int(total, "usage.cache_creation_input_tokens") != write_5m + write_1h:
            raise MappingError(
                f"usage.cache_creation_input_tokens ({total}) is not ephemeral_5m + ephemeral_1h "
                f"({write_5m} + {write_1h})"
            )
    else:
        write_5m = _int(usage.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens")
        write_1h = 0
    searches = _int(_get(usage, "server_tool_use.web_search_requests"), "usage.server_tool_use.web_search_requests")
    return _tokens(read, inp, out, 0, write_5m=write_5m, write_1h=write_1h, web_search_calls=searches)


def tokens_litellm(row: dict) -> Tokens:
    meta = _json_obj(row.get("metadata"))
    usage = _json_obj(meta.get("usage_object"))
    extra = _json_obj(meta.get("additional_usage_values"))
    prompt = _int(usage.get("prompt_tokens", row.get("prompt_tokens")), "prompt_tokens")
    completion = _int(usage.get("completion_tokens", row.get("completion_tokens")), "completion_tokens")
    # one source for cached tokens, never two (the classic double count)
    cached_raw = _get(usage, "prompt_tokens_details.cached_tokens")
    if cached_raw is None:
        cached_raw = usage.get("cache_read_input_tokens", extra.get("cache_read_input_tokens"))
    cached = _int(cached_raw, "metadata.usage_object.prompt_tokens_details.cached_tokens")
    reasoning = _int(
        _get(usage, "completion_tokens_details.reasoning_tokens"),
        "metadata.usage_object.completion_tokens_details.reasoning_tokens",
    )
    hit, miss = _split(prompt, cached, "prompt_tokens", "cached_tokens")
    reasoning, output = _split(completion, reasoning, "completion_tokens", "reasoning_tokens")
    return _tokens(hit, miss, output, reasoning)


def tokens_vllm(rec: dict) -> Tokens:
    if rec.get("prompt_token_ids") is not None:
        prompt = len(rec["prompt_token_ids"])
    else:
        prompt = _int(rec.get("num_prompt_tokens", rec.get("prompt_tokens")), "num_prompt_tokens")
    cached = _int(rec.get("num_cached_tokens"), "num_cached_tokens")
    outputs = rec.get("outputs")
    if isinstance(outputs, list) and outputs and any("token_ids" in o for o in outputs if isinstance(o, dict)):
        generated = sum(len(o.get("token_ids") or []) for o in outputs if isinstance(o, dict))
    else:
        generated = _int(rec.get("num_generation_tokens", rec.get("completion_tokens")), "num_generation_tokens")
    hit, miss = _split(prompt, cached, "prompt tokens", "num_cached_tokens")
    return _tokens(hit, miss, generated, 0)


def tokens_gemini(usage: dict) -> Tokens:
    """Gemini / Vertex ``usageMetadata``: ``promptTokenCount`` INCLUDES ``cachedContentTokenCount``; output is
    ``candidatesTokenCount``, reasoning ``thoughtsTokenCount`` (apart from it)."""
    prompt = _int(usage.get("promptTokenCount"), "usageMetadata.promptTokenCount")
    cached = _int(usage.get("cachedContentTokenCount"), "usageMetadata.cachedContentTokenCount")
    hit, miss = _split(prompt, cached, "promptTokenCount", "cachedContentTokenCount")
    output = _int(usage.get("candidatesTokenCount"), "usageMetadata.candidatesTokenCount")
    reasoning = _int(usage.get("thoughtsTokenCount"), "usageMetadata.thoughtsTokenCount")
    return _tokens(hit, miss, output, reasoning)


def tokens_bedrock(rec: dict) -> Tokens:
    """Bedrock model invocation logs: ``input.inputTokenCount`` is the uncached input (it EXCLUDES cache reads and
    writes), ``input.cacheReadInputTokenCount``, ``input.cacheWriteInputTokenCount`` (a 5-minute write),
    ``output.outputTokenCount``."""
    inp = rec.get("input") if isinstance(rec.get("input"), dict) else {}
    out = rec.get("output") if isinstance(rec.get("output"), dict) else {}
    return _tokens(
        _int(inp.get("cacheReadInputTokenCount"), "input.cacheReadInputTokenCount"),
        _int(inp.get("inputTokenCount"), "input.inputTokenCount"),
        _int(out.get("outputTokenCount"), "output.outputTokenCount"),
        0,
        write_5m=_int(inp.get("cacheWriteInputTokenCount"), "input.cacheWriteInputTokenCount"),
    )


def tokens_sglang(meta: dict) -> Tokens:
    prompt = _int(meta.get("prompt_tokens"), "meta_info.prompt_tokens")
    cached = _int(meta.get("cached_tokens"), "meta_info.cached_tokens")
    completion = _int(meta.get("completion_tokens"), "meta_info.completion_tokens")
    reasoning = _int(meta.get("reasoning_tokens"), "meta_info.reasoning_tokens")
    hit, miss = _split(prompt, cached, "meta_info.prompt_tokens", "meta_info.cached_tokens")
    reasoning, output = _split(completion, reasoning, "meta_info.completion_tokens", "meta_info.reasoning_tokens")
    return _tokens(hit, miss, output, reasoning)


def _tokens(
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


# ------------------------------------------------------------------ records


def _response(rec: dict) -> dict:
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


def detect(rec: dict) -> str | None:
    """The format of one record, or None if it is none of them."""
    if any(k in rec for k in CANONICAL_MARKERS):
        return "canonical"
    if "startTime" in rec and ("spend" in rec or "call_type" in rec):
        return "litellm"
    if rec.get("schemaType") == "ModelInvocationLog" or (
        "modelId" in rec and isinstance(rec.get("input"), dict) and "inputTokenCount" in rec["input"]
    ):
        return "bedrock"
    if "custom_id" in rec and isinstance(rec.get("response"), dict) and "body" in rec["response"]:
        return "openai_batch"
    resp = _response(rec)
    if isinstance(resp.get("usageMetadata"), dict):
        return "gemini"
    if isinstance(resp.get("meta_info"), dict):
        return "sglang"
    if "num_cached_tokens" in rec or "prompt_token_ids" in rec or "num_prompt_tokens" in rec:
        return "vllm"
    usage = resp.get("usage")
    if isinstance(usage, dict):
        if (
            resp.get("type") == "message"
            or "cache_read_input_tokens" in usage
            or "cache_creation_input_tokens" in usage
        ):
            return "anthropic"
        if "prompt_tokens" in usage:
            return "openrouter" if "cost" in usage else "openai_chat"
        if "input_tokens" in usage:
            return "openai_responses"
    return None


ROUTE_DEFAULT = {
    "openai_batch": "api",
    "gemini": "api",
    "bedrock": "api",
    "openrouter": "api",
    "openai_chat": "api",
    "openai_responses": "api",
    "anthropic": "api",
    "litellm": "api",
    "vllm": "self_hosted",
    "sglang": "self_hosted",
}
PROVIDER_DEFAULT = {
    "openai_chat": "openai",
    "openai_responses": "openai",
    "openai_batch": "openai",
    "anthropic": "anthropic",
    "gemini": "google",
    "bedrock": "bedrock",
    "openrouter": "openrouter",
}


def _api_body(rec: dict, resp: dict, fmt: str) -> tuple[Tokens, str | None, float | None]:
    usage = resp.get("usage")
    started = _timestamp(rec.get("started_at") or rec.get("timestamp") or resp.get("created") or resp.get("created_at"))
    if usage is None and failed_without_usage(rec):
        # a gateway's 504 or 500 carries no usage: a failed attempt that used no tokens, still an attempt (retries cost)
        return _tokens(0, 0, 0, 0), started, None
    if not isinstance(usage, dict):
        raise MappingError(f"no usage object in this {fmt} record")
    mapper = {"anthropic": tokens_anthropic, "openai_responses": tokens_openai_responses}.get(fmt, tokens_openai_chat)
    if fmt == "openai_batch" and resp.get("object") == "response":
        mapper = tokens_openai_responses
    return mapper(usage), started, None


def failed_without_usage(rec: dict) -> bool:
    """A record of a request that failed (its status is not ok) and whose response has no usage at all."""
    resp = _response(rec)
    if any(k in resp for k in ("usage", "usageMetadata", "meta_info")):
        return False
    try:
        return _status(rec, resp) != "ok"
    except MappingError:
        return False


def _litellm(rec: dict, resp: dict, fmt: str) -> tuple[Tokens, str | None, float | None]:
    start_s, end_s = _seconds(rec.get("startTime")), _seconds(rec.get("endTime"))
    latency = (end_s - start_s) * 1000 if start_s is not None and end_s is not None else None
    return tokens_litellm(rec), _timestamp(rec.get("startTime")), latency


def _vllm(rec: dict, resp: dict, fmt: str) -> tuple[Tokens, str | None, float | None]:
    metrics = rec.get("metrics") if isinstance(rec.get("metrics"), dict) else {}
    arrival, finished = metrics.get("arrival_time"), metrics.get("finished_time") or metrics.get("last_token_time")
    latency = (float(finished) - float(arrival)) * 1000 if arrival is not None and finished is not None else None
    return tokens_vllm(rec), _timestamp(rec.get("started_at") or rec.get("timestamp") or arrival), latency


def _sglang(rec: dict, resp: dict, fmt: str) -> tuple[Tokens, str | None, float | None]:
    info = resp.get("meta_info")
    if not isinstance(info, dict):
        raise MappingError("no meta_info object in this sglang record")
    latency = float(info["e2e_latency"]) * 1000 if info.get("e2e_latency") is not None else None
    return tokens_sglang(info), _timestamp(rec.get("started_at") or rec.get("timestamp")), latency


def _gemini(rec: dict, resp: dict, fmt: str) -> tuple[Tokens, str | None, float | None]:
    usage = resp.get("usageMetadata")
    if not isinstance(usage, dict):
        raise MappingError("no usageMetadata object in this gemini record")
    started = _timestamp(rec.get("started_at") or rec.get("timestamp") or resp.get("createTime"))
    return tokens_gemini(usage), started, None


def _bedrock(rec: dict, resp: dict, fmt: str) -> tuple[Tokens, str | None, float | None]:
    out = rec.get("output") if isinstance(rec.get("output"), dict) else {}
    latency = _get(out, "outputBodyJson.metrics.latencyMs")  # Converse responses carry it
    return tokens_bedrock(rec), _timestamp(rec.get("timestamp")), None if latency is None else float(latency)


#: Per log format: (record, its response body, format) -> (tokens, start time, latency in ms if it has one).
_READERS = {
    "openai_chat": _api_body,
    "openai_responses": _api_body,
    "anthropic": _api_body,
    "openrouter": _api_body,
    "openai_batch": _api_body,
    "litellm": _litellm,
    "vllm": _vllm,
    "sglang": _sglang,
    "gemini": _gemini,
    "bedrock": _bedrock,
}


def _tokens_and_times(rec: dict, resp: dict, fmt: str) -> tuple[Tokens, str | None, float | None]:
    """The canonical token columns, start time and latency (ms, if the format carries it) of one record."""
    if fmt not in _READERS:
        raise MappingError(f"unknown log format {fmt!r}")
    return _READERS[fmt](rec, resp, fmt)


def _task_id(rec: dict, meta: dict, mapping: LogMapping) -> Any:
    """The task: the mapped field, else metadata.task_id, else a ``task_id:...`` request tag (LiteLLM), else the
    batch request's ``custom_id``."""
    tag_task = None
    tags = rec.get("request_tags")
    if isinstance(tags, str) and tags.strip().startswith("["):
        try:
            tags = json.loads(tags)
        except (json.JSONDecodeError, RecursionError):
            tags = []
    if isinstance(tags, list):
        tag_task = next((t.split(":", 1)[1] for t in tags if isinstance(t, str) and t.startswith("task_id:")), None)
    mapped = _get(rec, mapping.task_id_field) if mapping.task_id_field else None
    return mapped or meta.get("task_id") or tag_task or rec.get("custom_id")


#: Providers' names for their default tier (OpenAI says "default"; Anthropic "standard").
_TIER_NAMES = {"default": "standard", "auto": "standard"}


def _service_tier(resp: dict, rec: dict) -> str | None:
    """The billed tier a response reports (``service_tier``, in OpenAI and Anthropic bodies), if any."""
    tier = resp.get("service_tier") or _get(resp, "usage.service_tier") or rec.get("service_tier")
    if not isinstance(tier, str) or not tier.strip():
        return None
    return _TIER_NAMES.get(tier.strip().lower(), tier.strip().lower())


def map_record(rec: dict, fmt: str, mapping: LogMapping) -> dict[str, str | None]:
    """One log record -> canonical request columns (as text). Raises MappingError."""
    resp = _response(rec)
    meta = _json_obj(rec.get("metadata"))
    if fmt == "litellm":
        meta = {
            **_json_obj(meta.get("spend_logs_metadata")),
            **{
                k: v
                for k, v in meta.items()
                if k in ("task_id", "attempt", "route", "provider", "cluster_id", "team", "accepted")
            },
        }
    tokens, started, latency_ms = _tokens_and_times(rec, resp, fmt)
    for key in ("latency_ms", "duration_ms"):
        if rec.get(key) is not None:
            latency_ms = float(rec[key])
            break
    request_id = (
        rec.get("request_id")
        or _get(rec, "response.request_id")
        or rec.get("requestId")
        or rec.get("id")
        or resp.get("id")
        or resp.get("responseId")
        or _get(resp, "meta_info.id")
    )
    task_id = _task_id(rec, meta, mapping)
    attempt = (_get(rec, mapping.attempt_field) if mapping.attempt_field else None) or meta.get("attempt")
    route = meta.get("route") or mapping.route or ROUTE_DEFAULT[fmt]
    provider = (
        meta.get("provider")
        or mapping.provider
        or (rec.get("custom_llm_provider") if fmt == "litellm" else None)
        or PROVIDER_DEFAULT.get(fmt)
    )
    accepted = meta.get("accepted")
    row: dict[str, str | None] = {
        "request_id": _text(request_id),
        "task_id": _text(task_id or request_id),
        "attempt": _text(attempt),
        "started_at": started,
        "route": route,
        "provider": _text(provider) if route == "api" else None,
        "cluster_id": _text(meta.get("cluster_id") or mapping.cluster_id) if route == "self_hosted" else None,
        "model": _text(
            resp.get("model") or resp.get("modelVersion") or rec.get("model") or rec.get("modelId") or mapping.model
        ),
        "latency_ms": None if latency_ms is None else str(int(round(latency_ms))),
        "status": _status(rec, resp),
        "service_tier": "batch" if fmt == "openai_batch" else _service_tier(resp, rec),
        # what the provider says the request cost (OpenRouter's usage.cost), kept next to our metered cost
        "reported_cost_usd": _text(_get(resp, "usage.cost")) if fmt == "openrouter" else None,
        "accepted": None
        if accepted is None
        else ("true" if str(accepted).lower() in ("true", "1", "yes") else "false"),
        "team": _text(meta.get("team") or mapping.team or (rec.get("team_id") if fmt == "litellm" else None)),
    }
    row.update({k: str(v) for k, v in tokens.items()})
    return row


def _text(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return str(value)


# ------------------------------------------------------------------ files


def sniff(data: bytes, is_csv: bool) -> str:
    """The log format of a file from its first record that shows one (CSV: its header)."""
    text = data.decode("utf-8", errors="replace")
    if is_csv:
        header = text.split("\n", 1)[0]
        return "litellm" if "startTime" in header and ("spend" in header or "call_type" in header) else "canonical"
    for line in text.splitlines():
        if line.strip():
            try:
                rec = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                return "canonical"  # the canonical reader reports the bad line
            if isinstance(rec, dict) and failed_without_usage(rec):
                continue  # a gateway's 504 says nothing of the format: the next record does
            return (detect(rec) or "canonical") if isinstance(rec, dict) else "canonical"
    return "canonical"


def map_rows(
    records: list[tuple[int, dict]], fmt: str | None, mapping: LogMapping, columns: list[str]
) -> tuple[dict[str, list], list[int], list[tuple[int, str]]]:
    """Map (line, record) pairs: column lists, their lines, and (line, reason) for records that cannot be mapped."""
    cols: dict[str, list] = {c: [] for c in columns}
    lines: list[int] = []
    bad: list[tuple[int, str]] = []
    seen = None  # the format of the file's records so far: a failed request without usage shows none of its own
    for lineno, rec in records:
        record_format = fmt or detect(rec) or (seen if failed_without_usage(rec) else None)
        seen = record_format or seen
        if record_format in (None, "canonical"):
            bad.append(
                (
                    lineno,
                    f"not a record of a known log format ({', '.join(LOG_FORMATS[1:])}); use --format",
                )
            )
            continue
        try:
            row = map_record(rec, record_format, mapping)
        except MappingError as exc:
            bad.append((lineno, f"{record_format}: {exc}"))
            continue
        except (
            ValueError,
            TypeError,
            OverflowError,
            OSError,
            ArithmeticError,
            RecursionError,
            KeyError,
            IndexError,
            AttributeError,
        ) as exc:
            # a value of the wrong type or size (NaN, Infinity, 1e400 seconds, a list where a number goes):
            # the record is quarantined with the reason, never a traceback
            reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
            bad.append((lineno, f"{record_format}: a field has an unusable value ({reason})"))
            continue
        lines.append(lineno)
        for c in columns:
            cols[c].append(row.get(c))
    return cols, lines, bad
