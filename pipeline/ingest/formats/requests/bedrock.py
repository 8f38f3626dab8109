"""Amazon Bedrock model invocation logs: ``input.inputTokenCount`` is the uncached input (it EXCLUDES cache reads and
writes), ``input.cacheReadInputTokenCount``, ``input.cacheWriteInputTokenCount`` (a 5-minute write),
``output.outputTokenCount``; Converse responses carry their latency."""

from __future__ import annotations

from pipeline.ingest.formats.common import Tokens, get, timestamp, tokens, whole
from pipeline.ingest.formats.registry import LogFormat, register


def tokens_bedrock(rec: dict) -> Tokens:
    """Bedrock model invocation logs: ``input.inputTokenCount`` is the uncached input (it EXCLUDES cache reads and
    writes), ``input.cacheReadInputTokenCount``, ``input.cacheWriteInputTokenCount`` (a 5-minute write),
    ``output.outputTokenCount``."""
    inp = rec.get("input") if isinstance(rec.get("input"), dict) else {}
    out = rec.get("output") if isinstance(rec.get("output"), dict) else {}
    return tokens(
        whole(inp.get("cacheReadInputTokenCount"), "input.cacheReadInputTokenCount"),
        whole(inp.get("inputTokenCount"), "input.inputTokenCount"),
        whole(out.get("outputTokenCount"), "output.outputTokenCount"),
        0,
        write_5m=whole(inp.get("cacheWriteInputTokenCount"), "input.cacheWriteInputTokenCount"),
    )


def _read(rec: dict, resp: dict) -> tuple[Tokens, str | None, float | None]:
    out = rec.get("output") if isinstance(rec.get("output"), dict) else {}
    latency = get(out, "outputBodyJson.metrics.latencyMs")  # Converse responses carry it
    return tokens_bedrock(rec), timestamp(rec.get("timestamp")), None if latency is None else float(latency)


def _matches(rec: dict, resp: dict) -> bool:
    return rec.get("schemaType") == "ModelInvocationLog" or (
        "modelId" in rec and isinstance(rec.get("input"), dict) and "inputTokenCount" in rec["input"]
    )


register(LogFormat(name="bedrock", route="api", provider="bedrock", order=20, matches=_matches, read=_read))
