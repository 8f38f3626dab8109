"""LiteLLM SpendLogs rows (JSONL or CSV export): ``prompt_tokens`` / ``completion_tokens``, the usage details from
``metadata.usage_object`` (else ``metadata.additional_usage_values``), ``startTime`` / ``endTime``,
``custom_llm_provider``, ``status`` (success / failure), ``request_tags``; the task from
``metadata.spend_logs_metadata`` or a ``task_id:<id>`` request tag. LiteLLM's ``prompt_tokens`` include the prompt
cache's reads and writes: the writes (``prompt_tokens_details.cache_creation_tokens``) are priced as writes, never as
cache-miss input."""

from __future__ import annotations

from pipeline.ingest.formats.common import Tokens, get, json_obj, seconds, split, timestamp, tokens, whole
from pipeline.ingest.formats.registry import LogFormat, register


def tokens_litellm(row: dict) -> Tokens:
    meta = json_obj(row.get("metadata"))
    usage = json_obj(meta.get("usage_object"))
    extra = json_obj(meta.get("additional_usage_values"))
    prompt = whole(usage.get("prompt_tokens", row.get("prompt_tokens")), "prompt_tokens")
    completion = whole(usage.get("completion_tokens", row.get("completion_tokens")), "completion_tokens")
    # one source for cached tokens, never two (the classic double count)
    cached_raw = get(usage, "prompt_tokens_details.cached_tokens")
    if cached_raw is None:
        cached_raw = usage.get("cache_read_input_tokens", extra.get("cache_read_input_tokens"))
    cached = whole(cached_raw, "metadata.usage_object.prompt_tokens_details.cached_tokens")
    reasoning = whole(
        get(usage, "completion_tokens_details.reasoning_tokens"),
        "metadata.usage_object.completion_tokens_details.reasoning_tokens",
    )
    write_5m, write_1h = _cache_writes(usage, extra)
    hit, uncached = split(prompt, cached, "prompt_tokens", "cached_tokens")
    writes, miss = split(uncached, write_5m + write_1h, "prompt_tokens less cached_tokens", "cache_creation_tokens")
    reasoning, output = split(completion, reasoning, "completion_tokens", "reasoning_tokens")
    return tokens(hit, miss, output, reasoning, write_5m=write_5m, write_1h=write_1h)


def _cache_writes(usage: dict, extra: dict) -> tuple[int, int]:
    """(5-minute, 1-hour) prompt-cache writes, which LiteLLM counts inside ``prompt_tokens`` (its usage object is
    cache-inclusive): ``prompt_tokens_details.cache_creation_tokens`` (else ``cache_creation_input_tokens``), split by
    ``prompt_tokens_details.cache_creation_token_details``; writes without a lifetime are 5-minute ones."""
    total_raw = get(usage, "prompt_tokens_details.cache_creation_tokens")
    if total_raw is None:
        total_raw = usage.get("cache_creation_input_tokens", extra.get("cache_creation_input_tokens"))
    total = whole(total_raw, "metadata.usage_object.prompt_tokens_details.cache_creation_tokens")
    detail = "prompt_tokens_details.cache_creation_token_details"
    one_hour = whole(get(usage, f"{detail}.ephemeral_1h_input_tokens"), f"metadata.usage_object.{detail}.ephemeral_1h")
    five_min = whole(get(usage, f"{detail}.ephemeral_5m_input_tokens"), f"metadata.usage_object.{detail}.ephemeral_5m")
    total = max(total, five_min + one_hour)
    return total - one_hour, one_hour


def _read(rec: dict, resp: dict) -> tuple[Tokens, str | None, float | None]:
    start_s, end_s = seconds(rec.get("startTime")), seconds(rec.get("endTime"))
    latency = (end_s - start_s) * 1000 if start_s is not None and end_s is not None else None
    return tokens_litellm(rec), timestamp(rec.get("startTime")), latency


register(
    LogFormat(
        name="litellm",
        route="api",
        provider=None,
        order=10,
        matches=lambda rec, resp: "startTime" in rec and ("spend" in rec or "call_type" in rec),
        read=_read,
    )
)
