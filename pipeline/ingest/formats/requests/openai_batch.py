"""OpenAI Batch output: a line per request, ``custom_id`` and the response under ``response.body`` (a Chat
Completions or a Responses body). Billed at the batch tier."""

from __future__ import annotations

from pipeline.ingest.formats.common import api_body
from pipeline.ingest.formats.requests.openai_chat import tokens_openai_chat
from pipeline.ingest.formats.requests.openai_responses import tokens_openai_responses
from pipeline.ingest.formats.registry import LogFormat, register


def _read(rec: dict, resp: dict):  # type: ignore[no-untyped-def]
    mapper = tokens_openai_responses if resp.get("object") == "response" else tokens_openai_chat
    return api_body(rec, resp, "openai_batch", mapper)


register(
    LogFormat(
        name="openai_batch",
        route="api",
        provider="openai",
        order=30,
        matches=lambda rec, resp: (
            "custom_id" in rec and isinstance(rec.get("response"), dict) and "body" in rec["response"]
        ),
        read=_read,
    )
)
