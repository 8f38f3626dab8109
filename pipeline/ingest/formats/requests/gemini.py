"""Gemini / Vertex AI responses: ``usageMetadata.promptTokenCount`` INCLUDES ``cachedContentTokenCount``; output is
``candidatesTokenCount``, reasoning ``thoughtsTokenCount`` (apart from it)."""

from __future__ import annotations

from pipeline.ingest.formats.common import MappingError, Tokens, split, timestamp, tokens, whole
from pipeline.ingest.formats.registry import LogFormat, register


def tokens_gemini(usage: dict) -> Tokens:
    """Gemini / Vertex ``usageMetadata``: ``promptTokenCount`` INCLUDES ``cachedContentTokenCount``; output is
    ``candidatesTokenCount``, reasoning ``thoughtsTokenCount`` (apart from it)."""
    prompt = whole(usage.get("promptTokenCount"), "usageMetadata.promptTokenCount")
    cached = whole(usage.get("cachedContentTokenCount"), "usageMetadata.cachedContentTokenCount")
    hit, miss = split(prompt, cached, "promptTokenCount", "cachedContentTokenCount")
    output = whole(usage.get("candidatesTokenCount"), "usageMetadata.candidatesTokenCount")
    reasoning = whole(usage.get("thoughtsTokenCount"), "usageMetadata.thoughtsTokenCount")
    return tokens(hit, miss, output, reasoning)


def _read(rec: dict, resp: dict) -> tuple[Tokens, str | None, float | None]:
    usage = resp.get("usageMetadata")
    if not isinstance(usage, dict):
        raise MappingError("no usageMetadata object in this gemini record")
    started = timestamp(rec.get("started_at") or rec.get("timestamp") or resp.get("createTime"))
    return tokens_gemini(usage), started, None


register(
    LogFormat(
        name="gemini",
        route="api",
        provider="google",
        order=40,
        matches=lambda rec, resp: isinstance(resp.get("usageMetadata"), dict),
        read=_read,
    )
)
