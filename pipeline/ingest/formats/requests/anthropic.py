"""Anthropic Messages: ``input_tokens`` EXCLUDES ``cache_read_input_tokens`` and the cache writes; writes are kept
apart by lifetime (5 minutes, 1 hour). Thinking tokens are not reported apart: they are in ``output_tokens``."""

from __future__ import annotations

from pipeline.ingest.formats.common import MappingError, Tokens, api_body, get, tokens, whole
from pipeline.ingest.formats.registry import LogFormat, register


def tokens_anthropic(usage: dict) -> Tokens:
    """Anthropic usage: ``input_tokens`` EXCLUDES cache reads and writes (add them, never subtract). Writes are kept
    apart by lifetime (``cache_creation.ephemeral_5m_input_tokens`` / ``ephemeral_1h_input_tokens``; a bare
    ``cache_creation_input_tokens`` is a 5-minute write); ``server_tool_use.web_search_requests`` are web searches."""
    inp = whole(usage.get("input_tokens"), "usage.input_tokens")
    read = whole(usage.get("cache_read_input_tokens"), "usage.cache_read_input_tokens")
    out = whole(usage.get("output_tokens"), "usage.output_tokens")
    creation = usage.get("cache_creation")
    if isinstance(creation, dict):
        write_5m = whole(creation.get("ephemeral_5m_input_tokens"), "usage.cache_creation.ephemeral_5m_input_tokens")
        write_1h = whole(creation.get("ephemeral_1h_input_tokens"), "usage.cache_creation.ephemeral_1h_input_tokens")
        total = usage.get("cache_creation_input_tokens")
        if total is not None and whole(total, "usage.cache_creation_input_tokens") != write_5m + write_1h:
            raise MappingError(
                f"usage.cache_creation_input_tokens ({total}) is not ephemeral_5m + ephemeral_1h "
                f"({write_5m} + {write_1h})"
            )
    else:
        write_5m = whole(usage.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens")
        write_1h = 0
    searches = whole(get(usage, "server_tool_use.web_search_requests"), "usage.server_tool_use.web_search_requests")
    return tokens(read, inp, out, 0, write_5m=write_5m, write_1h=write_1h, web_search_calls=searches)


def _matches(rec: dict, resp: dict) -> bool:
    usage = resp.get("usage")
    return isinstance(usage, dict) and (
        resp.get("type") == "message" or "cache_read_input_tokens" in usage or "cache_creation_input_tokens" in usage
    )


register(
    LogFormat(
        name="anthropic",
        route="api",
        provider="anthropic",
        order=70,
        matches=_matches,
        read=lambda rec, resp: api_body(rec, resp, "anthropic", tokens_anthropic),
    )
)
