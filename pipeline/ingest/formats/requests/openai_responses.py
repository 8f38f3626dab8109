"""OpenAI Responses API: ``input_tokens`` / ``input_tokens_details.cached_tokens``, ``output_tokens`` /
``output_tokens_details.reasoning_tokens``, each part inside its total, as in Chat Completions."""

from __future__ import annotations

from pipeline.ingest.formats.common import Tokens, api_body
from pipeline.ingest.formats.requests.openai_chat import tokens_openai
from pipeline.ingest.formats.registry import LogFormat, register


def tokens_openai_responses(usage: dict) -> Tokens:
    return tokens_openai(usage, "input_tokens", "output_tokens")


register(
    LogFormat(
        name="openai_responses",
        route="api",
        provider="openai",
        order=100,
        matches=lambda rec, resp: isinstance(resp.get("usage"), dict) and "input_tokens" in resp["usage"],
        read=lambda rec, resp: api_body(rec, resp, "openai_responses", tokens_openai_responses),
    )
)
