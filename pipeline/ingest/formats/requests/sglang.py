"""SGLang native ``/generate`` responses: ``meta_info.prompt_tokens``, ``cached_tokens``, ``completion_tokens``
(incl. ``reasoning_tokens`` when reported), ``e2e_latency`` (s). Self-hosted unless the record or the settings say
otherwise."""

from __future__ import annotations

from pipeline.ingest.formats.common import MappingError, Tokens, split, timestamp, tokens, whole
from pipeline.ingest.formats.registry import LogFormat, register


def tokens_sglang(meta: dict) -> Tokens:
    prompt = whole(meta.get("prompt_tokens"), "meta_info.prompt_tokens")
    cached = whole(meta.get("cached_tokens"), "meta_info.cached_tokens")
    completion = whole(meta.get("completion_tokens"), "meta_info.completion_tokens")
    reasoning = whole(meta.get("reasoning_tokens"), "meta_info.reasoning_tokens")
    hit, miss = split(prompt, cached, "meta_info.prompt_tokens", "meta_info.cached_tokens")
    reasoning, output = split(completion, reasoning, "meta_info.completion_tokens", "meta_info.reasoning_tokens")
    return tokens(hit, miss, output, reasoning)


def _read(rec: dict, resp: dict) -> tuple[Tokens, str | None, float | None]:
    info = resp.get("meta_info")
    if not isinstance(info, dict):
        raise MappingError("no meta_info object in this sglang record")
    latency = float(info["e2e_latency"]) * 1000 if info.get("e2e_latency") is not None else None
    return tokens_sglang(info), timestamp(rec.get("started_at") or rec.get("timestamp")), latency


register(
    LogFormat(
        name="sglang",
        route="self_hosted",
        provider=None,
        order=50,
        matches=lambda rec, resp: isinstance(resp.get("meta_info"), dict),
        read=_read,
    )
)
