"""Capacity sweeps as teams already write them: vLLM's and SGLang's serving benchmarks.

A ``load-tests`` file is canonical (CSV / JSONL / Parquet with the ``load_tests`` columns)
or the result files of the two serving benchmarks, one run (one concurrency) per record:

``vllm_bench``   ``vllm bench serve --save-result`` (one JSON object per file; ``--append-result``
                 adds one per line). tokens_per_second = ``total_token_throughput``;
                 output_tokens_per_second = ``output_throughput``; concurrency = ``max_concurrency``;
                 p95 = ``p95_e2el_ms`` (run with ``--percentile-metrics e2el --metric-percentiles 50,95``),
                 else ``p99_e2el_ms``; p50 = ``median_e2el_ms``; measured_at = ``date``
                 (``%Y%m%d-%H%M%S``, read as UTC); sweep_id = ``label``, else the file name.
``sglang_bench`` ``python -m sglang.bench_serving --output-file`` (one JSON line per run).
                 tokens_per_second = ``total_throughput``, else ``input_throughput`` +
                 ``output_throughput``; concurrency = ``max_concurrency``, else the measured mean
                 ``concurrency`` rounded; p95 = ``p95_e2e_latency_ms``, else ``p99_e2e_latency_ms``;
                 p50 = ``median_e2e_latency_ms``. The file has no timestamp: measured_at comes from
                 the ``[[load_tests]]`` entry.

Where a tool wrote no p95, its p99 stands in: p99 >= p95, so a point within the SLO by its p99
is within it by its p95 (the capacity found is never above the true one). The cluster, and any
sweep id or timestamp the file does not carry, come from the first ``[[load_tests]]`` settings
entry whose ``match`` fits the file name. A record that cannot be mapped is quarantined with
the field named; numbers stay text until DuckDB casts them (exact decimals).
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any


from pipeline.ingest.formats.common import MappingError
from pipeline.ingest.formats.registry import FileFormat, register_file_format
from pipeline.ingest.readers import (
    ReadResult,
    finite_decimal,
    json_document,
    mapped_result,
    utf8_text,
)
from pipeline.base.fileformats import LOAD_TEST_FORMATS, LoadTestMapping  # noqa: F401 (the format's names, also read from here)

if TYPE_CHECKING:
    from pipeline.ingest.formats.landed import Detected


def detect(rec: dict) -> str | None:
    """The benchmark a result record comes from, by its fields."""
    if "total_token_throughput" in rec:
        return "vllm_bench"
    if "mean_e2e_latency_ms" in rec and "output_throughput" in rec:
        return "sglang_bench"
    return None


def sniff(head: bytes) -> str:
    """'vllm_bench', 'sglang_bench' or 'canonical' from the start of a JSON(L) file (field names only, so a
    result file cut short by the head's size is still recognised)."""
    if b'"total_token_throughput"' in head:
        return "vllm_bench"
    if b'"mean_e2e_latency_ms"' in head and b'"output_throughput"' in head:
        return "sglang_bench"
    return "canonical"


def _number(rec: dict, *names: str) -> str | None:
    """The first of ``names`` the record has as a finite number (as text), else None."""
    for name in names:
        value = rec.get(name)
        if value is None:
            continue
        return str(finite_decimal(value, name, MappingError))
    return None


def _vllm_date(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.strptime(value, "%Y%m%d-%H%M%S").isoformat()
    except ValueError:
        raise MappingError(f"date {value[:40]!r} is not %Y%m%d-%H%M%S") from None


def map_record(rec: dict, fmt: str, mapping: LoadTestMapping, path: Path) -> dict[str, str | None]:
    """One benchmark run as a canonical load-test row (values as text)."""
    if fmt == "vllm_bench":
        tps = _number(rec, "total_token_throughput")
        p95 = _number(rec, "p95_e2el_ms", "p99_e2el_ms")
        p50 = _number(rec, "median_e2el_ms", "p50_e2el_ms")
        concurrency = _number(rec, "max_concurrency")
        measured_at = mapping.measured_at or _vllm_date(rec.get("date"))
        label = rec.get("label") if isinstance(rec.get("label"), str) and rec.get("label") else None
        if concurrency is None:
            raise MappingError("max_concurrency is null: run vllm bench serve with --max-concurrency N")
        if p95 is None:
            raise MappingError(
                "no p95_e2el_ms or p99_e2el_ms: run vllm bench serve with "
                "--percentile-metrics e2el --metric-percentiles 50,95"
            )
    else:
        tps = _number(rec, "total_throughput")
        if tps is None:
            parts = [_number(rec, "input_throughput"), _number(rec, "output_throughput")]
            tps = str(Decimal(parts[0]) + Decimal(parts[1])) if None not in parts else None  # type: ignore[arg-type]
        p95 = _number(rec, "p95_e2e_latency_ms", "p99_e2e_latency_ms")
        p50 = _number(rec, "median_e2e_latency_ms")
        concurrency = _number(rec, "max_concurrency")
        if concurrency is None:
            mean = _number(rec, "concurrency")
            concurrency = str(round(Decimal(mean))) if mean is not None else None
        measured_at = mapping.measured_at
        label = None
        if concurrency is None:
            raise MappingError("neither max_concurrency nor concurrency is given")
        if p95 is None:
            raise MappingError("no p95_e2e_latency_ms or p99_e2e_latency_ms")
        if measured_at is None:
            raise MappingError("bench_serving writes no timestamp: give measured_at in the file's [[load_tests]] entry")
    if tps is None:
        raise MappingError("no total token throughput")
    cluster = mapping.cluster_id
    if cluster is None:
        raise MappingError("the file names no cluster: add a [[load_tests]] entry with match and cluster_id")
    if Decimal(concurrency) == Decimal(concurrency).to_integral_value():
        concurrency = str(int(Decimal(concurrency)))  # 32.0 -> 32; a fraction stays and fails its type check
    return {
        "sweep_id": mapping.sweep_id or label or path.stem,
        "cluster_id": cluster,
        "concurrency": concurrency,
        "measured_at": measured_at,
        "tokens_per_second": tps,
        "p95_latency_ms": p95,
        "p50_latency_ms": p50,
        "output_tokens_per_second": _number(rec, "output_throughput"),
    }


def read_load_test(found: Detected, allowed: list[str]) -> ReadResult:
    """A vLLM or SGLang benchmark result file mapped onto the canonical load-test columns."""
    path, fmt = found.path, found.format
    mapping = found.entry if isinstance(found.entry, LoadTestMapping) else LoadTestMapping()
    gz = found.json_gz(f"{fmt} results are")
    records, bad = json_document(utf8_text(path, gz), "not a JSON object or an array of objects")
    cols: dict[str, list[str | None]] = {c: [] for c in allowed}
    lines: list[int] = []
    for lineno, rec in records:
        record_format = detect(rec) or fmt
        try:
            row = map_record(rec, record_format, mapping, path)
        except MappingError as exc:
            bad.append((lineno, f"{record_format}: {exc}"))
            continue
        lines.append(lineno)
        for c in allowed:
            cols[c].append(row.get(c))
    return mapped_result(cols, lines, allowed, bad)


for _name in LOAD_TEST_FORMATS[1:]:  # after "canonical"
    register_file_format(
        FileFormat(
            name=_name, kind="load-tests", sniff=lambda head, n=_name: sniff(head) == n, read=read_load_test,
            head_bytes=1 << 22,  # a result file's fields may follow a long per-request list
        )
    )  # fmt: skip
