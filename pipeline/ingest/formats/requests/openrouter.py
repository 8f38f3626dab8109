"""OpenRouter: Chat Completions bodies whose ``usage.cost`` is what OpenRouter says the request cost (kept as
``reported_cost_usd`` beside the metered cost)."""

from __future__ import annotations

from pipeline.ingest.formats.common import api_body
from pipeline.ingest.formats.requests.openai_chat import tokens_openai_chat
from pipeline.ingest.formats.registry import LogFormat, register


def _matches(rec: dict, resp: dict) -> bool:
    usage = resp.get("usage")
    return isinstance(usage, dict) and "prompt_tokens" in usage and "cost" in usage


register(
    LogFormat(
        name="openrouter",
        route="api",
        provider="openrouter",
        order=80,
        matches=_matches,
        read=lambda rec, resp: api_body(rec, resp, "openrouter", tokens_openai_chat),
    )
)
