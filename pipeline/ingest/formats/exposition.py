"""Engine and GPU metrics saved as Prometheus text exposition or OpenMetrics (a ``.prom`` file): scrapes of an
exporter's ``/metrics``, one sample a line, each with its timestamp::

    # TYPE vllm:prompt_tokens_total counter
    vllm:prompt_tokens_total{cluster_id="k3",instance="node-1:8000"} 1234567 1793577600000

A sample's timestamp is milliseconds since 1970 in the Prometheus text format and seconds in OpenMetrics (a file
with a ``# EOF`` line, where it ends: a line after it is quarantined). A scrape saved as ``curl`` writes it has no
timestamps: its samples take the scrape's time from the file's name, a ``# scraped_at`` line or the file's
``[[metrics_files]]`` entry (``pipeline.ingest.formats.scrapetime``); a sample with none is quarantined, as is one
naming a label twice. Lines end at a line feed only. A scrape holds every metric its exporter publishes; the samples
of metrics the kind does not read (the clocks, temperatures, histograms, ...) are not rows of the ledger and are
passed over, as the content fields of a request log are, and a file with none of a metric the kind reads says so
(``nothing_read``).
``# HELP``, ``# TYPE`` and other comment lines are skipped. A row's ``source_line`` is its line in the file. Clusters
are named from labels as in a query_range response (``metrics``).
"""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal
from typing import TYPE_CHECKING

from pipeline.base.fileformats import METRIC_FORMATS, METRIC_KINDS, MetricsFileMapping
from pipeline.ingest.formats.metrics import assumed_note, READ_METRICS, instant, series_labels
from pipeline.ingest.formats.registry import FileFormat, register_file_format
from pipeline.ingest.formats.scrapetime import from_comment, from_name, from_setting, is_scraped_at
from pipeline.ingest.readers import ReadResult, TextColumns, finite_decimal, utf8_text
from pipeline.base.text import counted

if TYPE_CHECKING:
    from pipeline.ingest.formats.landed import Detected

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
#: name="value", the value's escapes unrolled and possessive (no backtracking): linear on a long value
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"([^"\\]*+(?:\\.[^"\\]*+)*+)"\s*(,|\})')
_ESCAPES = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}


def _labels(line: str, at: int) -> tuple[dict[str, str], int]:
    """The labels of a sample line from its ``{`` at ``at``: (name -> unescaped value, the position after ``}``)."""
    labels: dict[str, str] = {}
    pos = at + 1
    if line[pos : pos + 1] == "}":
        return labels, pos + 1
    while True:
        m = _LABEL.match(line, pos)
        if m is None:
            raise ValueError(f'column {pos + 1}: a label is not name="value"')
        if m.group(1) in labels:
            raise ValueError(f"the label {m.group(1)[:40]!r} appears twice: an ambiguous sample is not loaded")
        labels[m.group(1)] = re.sub(r'\\[\\"n]', lambda e: _ESCAPES[e.group(0)], m.group(2))
        pos = m.end()
        if m.group(3) == "}":
            return labels, pos


def _sample(line: str) -> tuple[str, dict[str, str], str, str | None]:
    """(metric, labels, value, timestamp or None) of one sample line; raises ValueError naming what is wrong."""
    m = _NAME.match(line)
    if m is None:
        raise ValueError("column 1: not a metric name")
    labels, pos = _labels(line, m.end()) if line[m.end() : m.end() + 1] == "{" else ({}, m.end())
    rest = line[pos:].split(" # ", 1)[0].split()  # an OpenMetrics exemplar follows " # "
    if not rest or len(rest) > 2:
        raise ValueError(f"column {pos + 1}: expected a value and a timestamp after the labels")
    return m.group(0), labels, rest[0], rest[1] if len(rest) == 2 else None


def _seconds(stamp: str, openmetrics: bool) -> Decimal:
    unit = "seconds" if openmetrics else "milliseconds"
    try:  # a number past any decimal context's range (1e2000000) is no time either
        value = finite_decimal(stamp, "time")
    except ValueError:
        raise ValueError(f"time {stamp[:40]!r} is not Unix {unit}") from None
    return value if openmetrics else value.scaleb(-3)


def _scrape_time(found: Detected, lines: list[str], bad: list[tuple[int, str]]) -> Decimal | None:
    """The scrape's Unix seconds from the file's name, else its first ``# scraped_at`` line (a malformed one is a bad
    line), else its [[metrics_files]] entry's scraped_at; None when none gives one."""
    named = from_name(found.path.name)
    if named is not None:
        return named
    for number, line in enumerate(lines, start=1):
        text = line.strip(" \t")
        if is_scraped_at(text):
            try:
                return from_comment(text)
            except ValueError as exc:
                bad.append((number, str(exc)))
    if isinstance(found.entry, MetricsFileMapping) and found.entry.scraped_at:
        return from_setting(found.entry.scraped_at)
    return None


NO_TIME = (
    "the sample has no timestamp, and neither the file's name nor a '# scraped_at' line says when it was scraped: "
    "name the file by the scrape's time in UTC (vllm-2026-10-05T10-00-00Z.prom), add a line "
    "'# scraped_at 2026-10-05T10:00:00Z', or give it a [[metrics_files]] entry with scraped_at"
)


def read_exposition(found: Detected, allowed: list[str], kind: str) -> ReadResult:
    """The samples of the metrics ``kind`` reads, one row each (see the module's text)."""
    # lines end at a line feed alone (the format's own rule): a form feed or U+2028 inside a label does not move the
    # line numbers the quarantine names
    lines = [line.removesuffix("\r") for line in utf8_text(found.path, found.gz).split("\n")]
    eof = next((i for i, line in enumerate(lines) if line.strip() == "# EOF"), None)
    openmetrics = eof is not None
    wanted = READ_METRICS[kind]
    cols = TextColumns(allowed)
    assumed: set[str] = set()
    bad: list[tuple[int, str]] = []
    scraped = _scrape_time(found, lines, bad)
    passed_over: Counter[str] = Counter()
    for number, line in enumerate(lines, start=1):
        text = line.strip(" \t")
        if not text or text.startswith("#"):
            continue
        if eof is not None and number > eof + 1:
            bad.append((number, "a line after # EOF, where an OpenMetrics exposition ends"))
            continue
        name = _NAME.match(text)
        if name is None:
            bad.append((number, "not a sample line (metric{labels} value timestamp)"))
            continue
        if name.group(0) not in wanted:
            passed_over[name.group(0)] += 1
            continue
        try:
            metric, labels, value, stamp = _sample(text)
            if stamp is None and scraped is None:
                raise ValueError(NO_TIME)
            cluster, series, only = series_labels(labels, found.metrics_clusters, found.only_cluster)
            if only:
                assumed.add(f"{metric}{{{series}}}")
            row = {
                "sampled_at": instant(_seconds(stamp, openmetrics) if stamp is not None else scraped),
                "cluster_id": cluster,
                "metric": metric,
                "labels": series,
                "value": value,
            }
        except ValueError as exc:
            bad.append((number, str(exc)))
            continue
        cols.append(number, row)
    result = ReadResult(table=cols.table(), present=list(allowed), bad_lines=bad)
    result.notes += assumed_note(len(assumed), found.only_cluster)
    if result.rows_in == 0 and passed_over:
        result.nothing(_nothing_read(passed_over, wanted))
    return result


def _nothing_read(passed_over: Counter[str], wanted: frozenset[str]) -> str:
    """Why a scrape gave no row: its samples, and the metrics it holds and the ledger reads."""
    samples = sum(passed_over.values())
    names = sorted(passed_over)
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    return (
        f"{counted(samples, 'sample')}, none of a metric the ledger reads: {shown} "
        f"(it reads {', '.join(sorted(wanted))})"
    )


def _reader(kind: str):  # noqa: ANN202 - a FileFormat reader
    return lambda found, allowed: read_exposition(found, allowed, kind)


for _kind in METRIC_KINDS:
    register_file_format(FileFormat(name=METRIC_FORMATS[2], kind=_kind, sniff=lambda head: False, read=_reader(_kind)))
