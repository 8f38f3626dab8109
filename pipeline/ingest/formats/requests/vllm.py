"""vLLM per-request records (``RequestOutput``-like): ``prompt_token_ids`` or ``num_prompt_tokens``,
``num_cached_tokens``, ``outputs[].token_ids`` or ``num_generation_tokens``, ``metrics.arrival_time`` /
``finished_time`` (unix s). Self-hosted unless the record or the settings say otherwise."""

from __future__ import annotations

from pipeline.ingest.formats.common import Tokens, split, timestamp, tokens, whole
from pipeline.ingest.formats.registry import LogFormat, register


def tokens_vllm(rec: dict) -> Tokens:
    if rec.get("prompt_token_ids") is not None:
        prompt = len(rec["prompt_token_ids"])
    else:
        prompt = whole(rec.get("num_prompt_tokens", rec.get("prompt_tokens")), "num_prompt_tokens")
    cached = whole(rec.get("num_cached_tokens"), "num_cached_tokens")
    outputs = rec.get("outputs")
    if isinstance(outputs, list) and outputs and any("token_ids" in o for o in outputs if isinstance(o, dict)):
        generated = sum(len(o.get("token_ids") or []) for o in outputs if isinstance(o, dict))
    else:
        generated = whole(rec.get("num_generation_tokens", rec.get("completion_tokens")), "num_generation_tokens")
    hit, miss = split(prompt, cached, "prompt tokens", "num_cached_tokens")
    return tokens(hit, miss, generated, 0)


def _read(rec: dict, resp: dict) -> tuple[Tokens, str | None, float | None]:
    metrics = rec.get("metrics") if isinstance(rec.get("metrics"), dict) else {}
    arrival, finished = metrics.get("arrival_time"), metrics.get("finished_time") or metrics.get("last_token_time")
    latency = (float(finished) - float(arrival)) * 1000 if arrival is not None and finished is not None else None
    return tokens_vllm(rec), timestamp(rec.get("started_at") or rec.get("timestamp") or arrival), latency


register(
    LogFormat(
        name="vllm",
        route="self_hosted",
        provider=None,
        order=60,
        matches=lambda rec, resp: "num_cached_tokens" in rec or "prompt_token_ids" in rec or "num_prompt_tokens" in rec,
        read=_read,
    )
)
