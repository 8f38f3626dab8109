"""Provider exports: cost exports read as invoices (the OpenAI Costs API, the Anthropic cost report)
and usage exports read as usage lines (the OpenAI completions usage API, the Anthropic usage report).

Like a request log (``requestlogs``), a file is detected from its content (or named by ``--format`` or a
``[[billing_exports]]`` settings entry) and each cost result becomes one canonical invoice line:

``openai_costs``      ``GET /v1/organization/costs`` pages: ``data[]`` daily buckets (``start_time``,
                      ``end_time``: Unix seconds), each with ``results[]`` of ``organization.costs.result``:
                      ``amount.value`` in dollars (``amount.currency`` lower case), ``line_item``, ``project_id``.
``anthropic_costs``   ``GET /v1/organizations/cost_report``: ``data[]`` buckets (``starting_at``, ``ending_at``:
                      RFC 3339), each with ``results[]``: ``amount`` in cents as a decimal string, ``currency``,
                      ``cost_type``, ``token_type``, ``model``, ``service_tier``, ``context_window``,
                      ``workspace_id``.

``openai_usage``      ``GET /v1/organization/usage/completions`` pages: results of
                      ``organization.usage.completions.result``: ``input_tokens`` (INCLUDES
                      ``input_cached_tokens``), ``output_tokens``, ``num_model_requests``.
``anthropic_usage``   ``GET /v1/organizations/usage_report/messages``: results with ``uncached_input_tokens``,
                      ``cache_read_input_tokens``, ``cache_creation.ephemeral_5m/1h_input_tokens``,
                      ``output_tokens``.

The snapshot unit is the provider's month: every line of a bucket starting in month M belongs to the invoice
``<provider>-costs-<M>``, so a later export of the same month replaces it (invoices are snapshots per invoice).
A file may hold one page object, an array of pages, or one page per line. A row's ``source_line`` is its
position among the rows the file gives (1-based); a quarantine reason also names the result's position.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any


from pipeline.ingest.formats.common import MappingError, get as _get
from pipeline.ingest.formats.registry import FileFormat, register_file_format
from pipeline.ingest.readers import (
    ReadResult,
    finite_decimal,
    json_document,
    mapped_result,
    utf8_text,
)
from pipeline.base.fileformats import BILLING_FORMATS, BillingMapping, USAGE_FORMATS  # noqa: F401 (the format's names, also read from here)

if TYPE_CHECKING:
    from pipeline.ingest.formats.landed import Detected

DEFAULT_PROVIDER = {"openai_costs": "openai", "anthropic_costs": "anthropic", "openai_usage": "openai",
                    "anthropic_usage": "anthropic"}  # fmt: skip


def sniff_billing(head: bytes) -> str | None:
    """The export format a file's first bytes show, if any."""
    if b'"organization.costs.result"' in head:
        return "openai_costs"
    if b'"cost_type"' in head or (b'"starting_at"' in head and b'"results"' in head and b'"amount"' in head):
        return "anthropic_costs"
    return None


def sniff_usage(head: bytes) -> str | None:
    """The usage export format a file's first bytes show, if any."""
    if b'"organization.usage.completions.result"' in head:
        return "openai_usage"
    if b'"uncached_input_tokens":' in head or b'"uncached_input_tokens" :' in head:
        return "anthropic_usage"
    return None


def _pages(text: str) -> tuple[list[dict], list[tuple[int, str]]]:
    """The page objects of a file: one JSON document (an object or an array of them), else one per line."""
    records, bad = json_document(text, "not a cost report page (a JSON object with data[]) or an array of them")
    return [r for _, r in records], bad


def _instant(value: Any, field: str) -> dt.datetime:
    """Unix seconds (OpenAI) or RFC 3339 (Anthropic), as naive UTC."""
    try:
        if isinstance(value, str) and not value.strip().lstrip("-").isdigit():
            parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            if parsed.tzinfo is not None:
                parsed = parsed.astimezone(dt.timezone.utc).replace(tzinfo=None)
            return parsed
        return dt.datetime.fromtimestamp(int(value), dt.timezone.utc).replace(tzinfo=None)
    except (TypeError, ValueError, OverflowError, OSError):
        raise MappingError(f"{field} is not a time: {str(value)[:40]!r}") from None


def _openai_line_type(item: Any) -> str:
    text = str(item or "").lower()
    if "cached" in text:
        return "input_cache_hit"
    if "input" in text:
        return "input_cache_miss"
    if "output" in text:
        return "output"
    if "search" in text or "tool" in text:
        return "tool"
    return "other"


_ANTHROPIC_TOKEN_TYPES = {
    "uncached_input_tokens": "input_cache_miss",
    "cache_read_input_tokens": "input_cache_hit",
    "cache_creation.ephemeral_5m_input_tokens": "input_cache_write",
    "cache_creation.ephemeral_1h_input_tokens": "input_cache_write",
    "output_tokens": "output",
}


def _line(fmt: str, result: dict) -> dict[str, str | None]:
    """One cost result -> the invoice columns it sets (amount in the currency's units, line type, model)."""
    if fmt == "openai_costs":
        amount = result.get("amount")
        if not isinstance(amount, dict) or amount.get("value") is None:
            raise MappingError("no amount.value")
        return {
            "amount": str(finite_decimal(amount["value"], "amount.value", MappingError)),
            "currency": str(amount.get("currency") or "usd").upper(),
            "line_type": _openai_line_type(result.get("line_item")),
            "model": None,
        }
    if result.get("amount") is None:
        raise MappingError("no amount")
    cost_type = result.get("cost_type")
    if cost_type in ("web_search", "code_execution"):
        line_type = "tool"
    else:
        line_type = _ANTHROPIC_TOKEN_TYPES.get(str(result.get("token_type")), "other")
    return {
        "amount": str(finite_decimal(result["amount"], "amount", MappingError) / 100),  # cents -> dollars, exact
        "currency": str(result.get("currency") or "USD").upper(),
        "line_type": line_type,
        "model": result.get("model"),
    }


def _bucket_times(fmt: str, bucket: dict) -> tuple[dt.datetime, dt.datetime]:
    start_key, end_key = ("start_time", "end_time") if fmt.startswith("openai") else ("starting_at", "ending_at")
    return _instant(bucket.get(start_key), start_key), _instant(bucket.get(end_key), end_key)


#: The fields of a cost result that say what it bills: its line id within a bucket (a later export restates the
#: lines it repeats, whatever their order, and keeps the ones it lacks)
_LINE_FIELDS = {
    "openai_costs": ("line_item", "project_id"),
    "anthropic_costs": (
        "workspace_id", "model", "service_tier", "context_window", "cost_type", "token_type", "description",
    ),
}  # fmt: skip


def line_tag(fmt: str, result: dict, seen: dict[str, int]) -> str:
    """The line's name within its bucket: what it bills (``_LINE_FIELDS``), numbered from the second result that
    bills the same (``seen`` counts them per bucket)."""
    name = "|".join(str(result[k]) for k in _LINE_FIELDS.get(fmt, ()) if result.get(k) is not None) or "line"
    seen[name] = seen.get(name, 0) + 1
    return name if seen[name] == 1 else f"{name}#{seen[name]}"


def _invoice_rows(fmt: str, result: dict, start: dt.datetime, tag: str, provider: str) -> list[dict[str, str | None]]:
    """A cost result as one invoice line of the provider's month."""
    return [
        _line(fmt, result)
        | {
            "provider": provider,
            "invoice_id": f"{provider}-costs-{start:%Y-%m}",
            "line_id": f"{start:%Y-%m-%dT%H:%M}/{tag}",
        }
    ]


def _count(result: dict, path: str) -> int:
    value = _get(result, path)
    if value is None:
        return 0
    try:
        n = int(str(value))
    except ValueError:
        raise MappingError(f"{path} is not a whole number: {str(value)[:40]!r}") from None
    if n < 0:
        raise MappingError(f"{path} is negative: {n}")
    return n


def _usage_rows(fmt: str, result: dict, start: dt.datetime, tag: str, provider: str) -> list[dict[str, str | None]]:
    """A usage result as one row per token type (the request log's token columns; output includes reasoning)."""
    if fmt == "openai_usage":
        total, cached = _count(result, "input_tokens"), _count(result, "input_cached_tokens")
        if cached > total:
            raise MappingError(f"input_cached_tokens ({cached}) > input_tokens ({total})")
        counts = {
            "input_cache_hit": cached,  # input_tokens INCLUDES the cached ones
            "input_cache_miss": total - cached,
            "output": _count(result, "output_tokens"),
            "requests": _count(result, "num_model_requests"),
        }
    else:
        counts = {
            "input_cache_hit": _count(result, "cache_read_input_tokens"),
            "input_cache_miss": _count(result, "uncached_input_tokens"),
            "input_cache_write_5m": _count(result, "cache_creation.ephemeral_5m_input_tokens"),
            "input_cache_write_1h": _count(result, "cache_creation.ephemeral_1h_input_tokens"),
            "output": _count(result, "output_tokens"),
        }
    model = result.get("model")
    return [
        {
            "provider": provider,
            "line_id": f"{tag}/{token_type}",
            "model": None if model is None else str(model),
            "token_type": token_type,
            "quantity": str(n),
        }  # fmt: skip
        for token_type, n in counts.items()
    ]


def read_export(found: Detected, allowed: list[str]) -> ReadResult:
    """A provider's cost export (as invoice lines) or usage export (as usage lines), one result at a time."""
    fmt = found.format
    mapping = found.entry if isinstance(found.entry, BillingMapping) else BillingMapping()
    gz = found.json_gz(f"{fmt} exports are")
    pages, bad = _pages(utf8_text(found.path, gz))
    provider = mapping.provider or DEFAULT_PROVIDER[fmt]
    rows_of = _usage_rows if fmt in USAGE_FORMATS else _invoice_rows
    cols: dict[str, list[str | None]] = {c: [] for c in allowed}
    lines: list[int] = []
    n = line = 0  # n counts results (named in reasons); line counts rows (a usage result gives several)
    for page in pages:
        buckets = page.get("data")
        if not isinstance(buckets, list):
            line += 1
            bad.append((line, "a page without a data[] list of buckets"))
            continue
        for bucket in buckets:
            results = bucket.get("results") if isinstance(bucket, dict) else None
            seen: dict[str, int] = {}
            for i, result in enumerate(results if isinstance(results, list) else [], start=1):
                n += 1
                result = result if isinstance(result, dict) else {}
                tag = str(i) if fmt in USAGE_FORMATS else line_tag(fmt, result, seen)
                try:
                    start, end = _bucket_times(fmt, bucket)
                    rows = rows_of(fmt, result, start, tag, provider)
                except MappingError as exc:
                    line += 1
                    bad.append((line, f"{fmt} result {n}: {exc}"))
                    continue
                times = {"period_start": start.isoformat(), "period_end": end.isoformat(),
                         "bucket_start": start.isoformat(), "bucket_end": end.isoformat()}  # fmt: skip
                for row in rows:
                    line += 1
                    lines.append(line)
                    for c in allowed:
                        cols[c].append((row | times).get(c))
    return mapped_result(cols, lines, allowed, bad)


for _name in BILLING_FORMATS:
    register_file_format(
        FileFormat(name=_name, kind="invoices", sniff=lambda head, n=_name: sniff_billing(head) == n, read=read_export)
    )
for _name in USAGE_FORMATS:
    register_file_format(
        FileFormat(name=_name, kind="usage", sniff=lambda head, n=_name: sniff_usage(head) == n, read=read_export)
    )
