"""Real-world request logs mapped onto the canonical request columns.

The formats (``--format``, or detected per record) are the modules of ``pipeline.ingest.formats``, one each:
OpenAI Chat Completions, Responses and Batch, Anthropic, Gemini, Bedrock, OpenRouter, LiteLLM, vLLM and SGLang.
What every format shares is here: the envelope a gateway wraps records in, the task and attempt, the service
tier, and a file's records mapped one by one.

Gateway envelope (all JSON formats): a line is either the provider's response body or
``{"request_id", "timestamp"|"started_at", "latency_ms"|"duration_ms", "status"|"status_code",
"metadata": {...}, "request": {...}, "response": {...}}``. Task, attempt, route, provider,
cluster, team, workload and accepted come from ``metadata`` (``task_id``, ``attempt``, ``route``,
``provider``, ``cluster_id``, ``team``, ``workload``, ``accepted``; LiteLLM: ``metadata.spend_logs_metadata``
or a ``task_id:<id>`` request tag), else from the settings' ``[[request_logs]]`` entry matching
the file name, else defaults (route: api for OpenAI / Anthropic / LiteLLM, self_hosted for
vLLM / SGLang; task = the request itself).

Only the named fields are read. Prompts, messages, responses, reasoning text and tool-call
arguments are never copied: a mapped row holds the canonical columns and nothing else.
A record whose counts do not add up (cached > prompt, reasoning > completion) is
quarantined with the fields named, never silently fixed.
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any, Iterable

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.base.fileformats import LOG_FORMATS, LogMapping
from pipeline.ingest.formats.registry import detect, log_format
from pipeline.ingest.readers import (
    FileRejected,
    ReadResult,
    TextColumns,
    decode_utf8,
    json_objects,
    raw_bytes,
    repeated_columns,
    text_lines,
)
from pipeline.ingest.parquetfiles import parquet_metadata, parquet_text_sizes
from pipeline.ingest.formats.common import (
    MappingError,
    failed_without_usage,
    get,
    json_obj,
    response_body,
    status,
    text,
)

if TYPE_CHECKING:
    from pipeline.ingest.formats.landed import Detected


def _task_id(rec: dict, meta: dict, mapping: LogMapping) -> Any:
    """The task: the mapped field, else metadata.task_id, else a ``task_id:...`` request tag (LiteLLM), else the
    batch request's ``custom_id``."""
    tag_task = None
    tags = rec.get("request_tags")
    if isinstance(tags, str) and tags.strip().startswith("["):
        try:
            tags = json.loads(tags)
        except (json.JSONDecodeError, RecursionError):
            tags = []
    if isinstance(tags, list):
        tag_task = next((t.split(":", 1)[1] for t in tags if isinstance(t, str) and t.startswith("task_id:")), None)
    mapped = get(rec, mapping.task_id_field) if mapping.task_id_field else None
    return mapped or meta.get("task_id") or tag_task or rec.get("custom_id")


#: Providers' names for their default tier (OpenAI says "default"; Anthropic "standard").
_TIER_NAMES = {"default": "standard", "auto": "standard"}


def _service_tier(resp: dict, rec: dict) -> str | None:
    """The billed tier a response reports (``service_tier``, in OpenAI and Anthropic bodies), if any."""
    tier = resp.get("service_tier") or get(resp, "usage.service_tier") or rec.get("service_tier")
    if not isinstance(tier, str) or not tier.strip():
        return None
    return _TIER_NAMES.get(tier.strip().lower(), tier.strip().lower())


def map_record(rec: dict, fmt: str, mapping: LogMapping) -> dict[str, str | None]:
    """One log record -> canonical request columns (as text). Raises MappingError."""
    resp = response_body(rec)
    meta = json_obj(rec.get("metadata"))
    if fmt == "litellm":
        meta = {
            **json_obj(meta.get("spend_logs_metadata")),
            **{
                k: v
                for k, v in meta.items()
                if k in ("task_id", "attempt", "route", "provider", "cluster_id", "team", "workload", "accepted")
            },
        }
    tokens, started, latency_ms = log_format(fmt).read(rec, resp)
    for key in ("latency_ms", "duration_ms"):
        if rec.get(key) is not None:
            latency_ms = float(rec[key])
            break
    request_id = (
        rec.get("request_id")
        or get(rec, "response.request_id")
        or rec.get("requestId")
        or rec.get("id")
        or resp.get("id")
        or resp.get("responseId")
        or get(resp, "meta_info.id")
    )
    task_id = _task_id(rec, meta, mapping)
    attempt = (get(rec, mapping.attempt_field) if mapping.attempt_field else None) or meta.get("attempt")
    route = meta.get("route") or mapping.route or log_format(fmt).route
    provider = (
        meta.get("provider")
        or mapping.provider
        or (rec.get("custom_llm_provider") if fmt == "litellm" else None)
        or log_format(fmt).provider
    )
    model = _model(rec, resp, mapping, fmt, provider)
    accepted = meta.get("accepted")
    row: dict[str, str | None] = {
        "request_id": text(request_id),
        "task_id": text(task_id or request_id),
        "attempt": text(attempt),
        "started_at": started,
        "route": route,
        "provider": text(provider) if route == "api" else None,
        "cluster_id": text(meta.get("cluster_id") or mapping.cluster_id) if route == "self_hosted" else None,
        "model": model,
        "latency_ms": None if latency_ms is None else str(int(round(latency_ms))),
        "status": status(rec, resp),
        "service_tier": "batch" if fmt == "openai_batch" else _service_tier(resp, rec),
        # what the provider says the request cost (OpenRouter's usage.cost), kept next to our metered cost
        "reported_cost_usd": text(get(resp, "usage.cost")) if fmt == "openrouter" else None,
        "accepted": None
        if accepted is None
        else ("true" if str(accepted).lower() in ("true", "1", "yes") else "false"),
        "team": text(meta.get("team") or mapping.team or (rec.get("team_id") if fmt == "litellm" else None)),
        "workload": text(meta.get("workload") or mapping.workload),
    }
    row.update({k: str(v) for k, v in tokens.items()})
    return row


def _model(rec: dict, resp: dict, mapping: "LogMapping", fmt: str, provider: str | None) -> str | None:
    model = text(
        resp.get("model") or resp.get("modelVersion") or rec.get("model") or rec.get("modelId") or mapping.model
    )
    return unprefixed_model(model, provider) if fmt == "litellm" else model


def unprefixed_model(model: str | None, provider: str | None) -> str | None:
    """LiteLLM names a model with its provider in front (``deepseek/deepseek-chat``), where the provider's own price
    list says ``deepseek-chat``: the prefix is taken off when it is the request's own provider (compared ignoring
    letter case), and only then. A prefix naming another provider (``openrouter/deepseek/...`` under ``openrouter``
    keeps ``deepseek/...``) is never guessed away: the name stays as the log wrote it, and an unpriced one is named."""
    if model and provider and "/" in model:
        prefix, rest = model.split("/", 1)
        if prefix.lower() == provider.lower() and rest:
            return rest
    return model


# ------------------------------------------------------------------ files


def map_rows(
    records: Iterable[tuple[int, dict]], fmt: str | None, mapping: LogMapping, columns: list[str]
) -> tuple[TextColumns, list[tuple[int, str]]]:
    """Map (line, record) pairs: the mapped rows, and (line, reason) for records that cannot be mapped."""
    cols = TextColumns(columns)
    bad: list[tuple[int, str]] = []
    seen = None  # the format of the file's records so far: a failed request without usage shows none of its own
    for lineno, rec in records:
        record_format = fmt or detect(rec) or (seen if failed_without_usage(rec) else None)
        seen = record_format or seen
        if record_format in (None, "canonical"):
            bad.append(
                (
                    lineno,
                    f"not a record of a known log format ({', '.join(LOG_FORMATS[1:])}); use --format",
                )
            )
            continue
        try:
            row = map_record(rec, record_format, mapping)
        except MappingError as exc:
            bad.append((lineno, f"{record_format}: {exc}"))
            continue
        except (
            ValueError,
            TypeError,
            OverflowError,
            OSError,
            ArithmeticError,
            RecursionError,
            KeyError,
            IndexError,
            AttributeError,
        ) as exc:
            # a value of the wrong type or size (NaN, Infinity, 1e400 seconds, a list where a number goes):
            # the record is quarantined with the reason, never a traceback
            reason = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
            bad.append((lineno, f"{record_format}: a field has an unusable value ({reason})"))
            continue
        cols.append(lineno, row)
    return cols, bad


def read_request_log(found: Detected, allowed: list[str]) -> ReadResult:
    """A real-world request log mapped onto the canonical request columns (``found.format``: its records')."""
    path, fmt, gz = found.path, found.container, found.gz
    mapping = found.entry if isinstance(found.entry, LogMapping) else LogMapping()
    bad: list[tuple[int, str]] = []
    records: Iterable[tuple[int, dict]] = []
    if fmt == "parquet":
        if gz:
            raise FileRejected(f"{path}: gzip-compressed Parquet is not supported; Parquet compresses itself")
        meta, schema = parquet_metadata(path)
        repeated_columns(path, schema.names, {})
        parquet_text_sizes(path, meta, set(schema.names))
        try:
            rows = pq.read_table(path).to_pylist()
        except (pa.ArrowException, OSError) as exc:
            raise FileRejected(f"{path}: not a readable Parquet file: {exc}") from None
        records = [(i + 1, r) for i, r in enumerate(rows)]
    elif fmt == "csv":
        data = raw_bytes(path, gz)
        decode_utf8(path, data)  # a file that is not UTF-8 is rejected whole, naming the line and the byte
        try:
            df = pl.read_csv(io.BytesIO(data), infer_schema=False)
        except pl.exceptions.PolarsError as exc:
            raise FileRejected(f"{path}: not a readable CSV: {str(exc).splitlines()[0]}") from None
        records = [(i + 2, r) for i, r in enumerate(df.to_dicts()) if any(v is not None for v in r.values())]
    else:  # JSON lines, read a chunk at a time: a month's gateway log is never held whole
        records = json_objects(text_lines(path, gz), numbers_as_text=False, bad=bad)
    cols, unmapped = map_rows(records, found.format, mapping, allowed)
    return ReadResult(table=cols.table(), present=list(allowed), bad_lines=sorted(bad + unmapped))
