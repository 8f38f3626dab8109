"""OpenAI Chat Completions: ``usage.prompt_tokens`` INCLUDES ``prompt_tokens_details.cached_tokens``;
``completion_tokens`` INCLUDES ``completion_tokens_details.reasoning_tokens``. vLLM's and SGLang's OpenAI-compatible
servers answer in this format (vLLM reports cached_tokens only with ``--enable-prompt-tokens-details``)."""

from __future__ import annotations

from pipeline.ingest.formats.common import Tokens, api_body, get, split, tokens, whole
from pipeline.ingest.formats.registry import LogFormat, register


def tokens_openai(usage: dict, inp: str, out: str) -> Tokens:
    """OpenAI usage objects: ``inp`` tokens with ``<inp>_details.cached_tokens`` inside them, ``out`` tokens with
    ``<out>_details.reasoning_tokens`` inside them (the Chat and Responses APIs differ only in these names)."""
    total_in = whole(usage.get(inp), f"usage.{inp}")
    cached = whole(get(usage, f"{inp}_details.cached_tokens"), f"usage.{inp}_details.cached_tokens")
    total_out = whole(usage.get(out), f"usage.{out}")
    reasoning = whole(get(usage, f"{out}_details.reasoning_tokens"), f"usage.{out}_details.reasoning_tokens")
    hit, miss = split(total_in, cached, inp, f"{inp}_details.cached_tokens")
    reasoning, output = split(total_out, reasoning, out, f"{out}_details.reasoning_tokens")
    return tokens(hit, miss, output, reasoning)


def tokens_openai_chat(usage: dict) -> Tokens:
    return tokens_openai(usage, "prompt_tokens", "completion_tokens")


def _usage(resp: dict) -> dict | None:
    usage = resp.get("usage")
    return usage if isinstance(usage, dict) else None


register(
    LogFormat(
        name="openai_chat",
        route="api",
        provider="openai",
        order=90,
        matches=lambda rec, resp: "prompt_tokens" in (_usage(resp) or {}),
        read=lambda rec, resp: api_body(rec, resp, "openai_chat", tokens_openai_chat),
    )
)
