"""Price lists other than the canonical one: LiteLLM's ``model_prices_and_context_window.json``.

Like ``pipeline.ingest.formats.billing``. Many teams already maintain that file; each model entry becomes price
rows of the canonical ``prices`` kind:

* per-token costs become per-million (exactly: the JSON numbers are read as decimal text, never as floats; a number
  with more digits than a double holds is a float's artefact, read as its nearest decimal of 15 and said so);
* ``input_cost_per_token`` -> cache-miss, ``cache_read_input_token_cost`` -> cache-hit (default: the input
  price), ``cache_creation_input_token_cost`` -> 5-minute cache writes, ``..._above_1hr`` -> 1-hour writes,
  ``output_cost_per_token`` -> output (and reasoning);
* ``*_batches`` -> rows of service tier ``batch``; ``*_above_<N>k_tokens`` -> a long-context level with
  ``min_input_tokens`` N x 1000. A price a tier or level does not give falls back to its own input price (cache
  reads), the cache-miss price (writes, in staging), or the base output price: never to a cheaper one guessed;
* ``litellm_provider`` -> provider (a ``provider/`` prefix of the key is dropped from the model name).

The file has no dates. A price it gives for a key (provider, model, tier, level) the ledger has no price for takes
effect from the ``effective_from`` of its ``[[price_lists]]`` settings entry, else from a date in the file's name
(``model_prices_2026-10-05.json``); with neither the file is rejected, naming the entry to add. A newer download never
restates a price already in force: a price it repeats keeps the date it took effect on, and a price it changes takes
effect from the file's date (in its name, else the day it is loaded), the months before keeping the price they had;
each change is listed in the file's notes. A price map older than a price in force cannot change it (the row is
quarantined, saying so). Entries without an input and an output price (embeddings, images,
``sample_spec``) are skipped, counted in the reason of nothing: they are not prices of tokens.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any


from pipeline.ingest.formats.registry import FileFormat, register_file_format
from pipeline.ingest.readers import (
    FileRejected,
    ReadResult,
    finite_decimal,
    mapped_result,
    utf8_text,
)
from pipeline.base.fileformats import PRICE_LIST_FORMATS, PriceListMapping  # noqa: F401 (the format's names, also read from here)

if TYPE_CHECKING:
    from pipeline.ingest.formats.landed import Detected

_LEVEL = re.compile(r"^(input_cost_per_token|output_cost_per_token|cache_read_input_token_cost)_above_(\d+)k_tokens$")
_MILLION = Decimal(1_000_000)


def sniff_price_list(head: bytes) -> str | None:
    if b'"litellm_provider"' in head and b"_cost_per_token" in head:
        return "litellm"
    return None


class _FloatText(str):
    """A number the JSON file wrote as a number (a double, in the file's maker), kept as its text."""


#: the significant digits a double holds: a JSON number with more is a float's artefact, not a price someone typed
DOUBLE_DIGITS = 15


def _per_million(value: Any, where: str, normalised: list[str] | None = None) -> str:
    """A price per token as a price per million tokens, exactly. A JSON number with more than 15 significant digits
    (``4.0000000000000003e-07``, a double printed in full) is read as the nearest decimal of 15 (``4e-07``), and the
    change is added to ``normalised``; a price written as text is taken as written."""
    d = finite_decimal(value, where)
    if d < 0:
        raise ValueError(f"{where} is not a finite, non-negative number: {value}")
    if isinstance(value, _FloatText) and len(d.as_tuple().digits) > DOUBLE_DIGITS:
        nearest = Decimal(format(d, f".{DOUBLE_DIGITS}g"))
        if normalised is not None:
            normalised.append(f"{where}: {value} read as {float(nearest)!r}")  # as the file writes numbers
        d = nearest
    return format((d * _MILLION).normalize(), "f")


def _rows_of(
    key: str, entry: dict, effective_from: str, currency: str, normalised: list[str] | None = None
) -> list[dict[str, str | None]]:
    """The price rows of one model entry: standard and batch tiers, each base level and long-context level (a float's
    artefact normalised is added to ``normalised``)."""
    if entry.get("input_cost_per_token") is None or entry.get("output_cost_per_token") is None:
        return []
    provider = str(entry.get("litellm_provider") or key.split("/")[0])
    model = key[len(provider) + 1 :] if key.startswith(provider + "/") else key
    levels = {0} | {int(m.group(2)) * 1000 for k in entry for m in [_LEVEL.match(k)] if m}
    rows = []
    for tier, suffix in (("standard", ""), ("batch", "_batches")):
        if tier == "batch" and entry.get(f"input_cost_per_token{suffix}") is None:
            continue
        for level in sorted(levels):
            above = f"_above_{level // 1000}k_tokens" if level else ""

            def price(name: str, fallback: str | None = None) -> str | None:
                # a batch price only from a *_batches key: the standard one is not the batch one
                names = (f"{name}{above}{suffix}", f"{name}{suffix}{above}") if suffix else (f"{name}{above}",)
                for candidate in names:
                    if entry.get(candidate) is not None:
                        return _per_million(entry[candidate], f"{key}.{candidate}", normalised)
                return fallback

            miss = price("input_cost_per_token") or _per_million(entry["input_cost_per_token"], key, normalised)
            rows.append({
                "provider": provider, "model": model, "effective_from": effective_from, "service_tier": tier,
                "min_input_tokens": str(level), "cache_miss_input_per_million": miss,
                "cache_hit_input_per_million": price("cache_read_input_token_cost", miss),
                "cache_write_5m_per_million": price("cache_creation_input_token_cost"),
                "cache_write_1h_per_million": price("cache_creation_input_token_cost_above_1hr"),
                "output_per_million": price("output_cost_per_token")
                or _per_million(entry["output_cost_per_token"], key, normalised),
                "currency": currency,
            })  # fmt: skip
    return rows


#: the price columns a LiteLLM row gives, compared with the price in force
PRICE_COLUMNS = (
    "cache_miss_input_per_million", "cache_hit_input_per_million", "cache_write_5m_per_million",
    "cache_write_1h_per_million", "output_per_million", "currency",
)  # fmt: skip
_NAME_DAY = re.compile(r"(?<!\d)(\d{4})-?(\d{2})-?(\d{2})(?!\d)")


def name_day(name: str) -> dt.date | None:
    """A date in a file's name (2026-10-05 or 20261005), or None."""
    for m in _NAME_DAY.finditer(name):
        try:
            return dt.date(*(int(g) for g in m.groups()))
        except ValueError:
            continue
    return None


def _value(v: Any) -> Any:
    """A price column's value as compared: a number exactly (10 = 10.000000), a currency in capitals."""
    if v is None or v == "":
        return None
    try:
        return Decimal(str(v)).normalize()
    except ArithmeticError:
        return str(v).upper()


def _shown(v: Any) -> str:
    value = _value(v)
    return "none" if value is None else format(value, "f") if isinstance(value, Decimal) else str(value)


def _same_price(row: Mapping[str, Any], in_force: Mapping[str, Any], columns: tuple[str, ...] = PRICE_COLUMNS) -> bool:
    return all(_value(row.get(c)) == _value(in_force.get(c)) for c in columns)


def _dated(
    row: dict[str, str | None], found: Detected, day: dt.date, changes: list[str]
) -> dict[str, str | None] | str:
    """``row`` dated against the price in force for its key (see the module's text), or why it is not loaded."""
    key = (str(row["provider"]), str(row["model"]), str(row["service_tier"]), str(row["min_input_tokens"]))
    in_force = found.prices_in_force.get(key)
    if in_force is None:
        return row
    since = in_force["effective_from"]
    if _same_price(row, in_force):
        return {**row, "effective_from": since.isoformat()}
    if day <= since.date():
        return (
            f"{'/'.join(key[:2])}: this price map ({day}) is not newer than the price in force from {since.date()}, "
            "which it would change: not loaded (a price map changes prices from its own date on)"
        )
    what = [
        f"{c.removesuffix('_per_million')} {_shown(in_force.get(c))} -> {_shown(row.get(c))}"
        for c in PRICE_COLUMNS
        if not _same_price(row, in_force, (c,))
    ]
    tier = "" if key[2] == "standard" and key[3] == "0" else f" ({key[2]}, from {key[3]} input tokens)"
    changes.append(f"{key[0]}/{key[1]}{tier}: {', '.join(what)}")
    return {**row, "effective_from": day.isoformat()}


def read_price_list(found: Detected, allowed: list[str]) -> ReadResult:
    """A LiteLLM price file mapped onto the canonical price columns (one line per price row)."""
    path, fmt = found.path, found.format
    mapping = found.entry if isinstance(found.entry, PriceListMapping) else PriceListMapping()
    gz = found.json_gz(f"a {fmt} price list is")
    named = name_day(path.name)
    first = mapping.effective_from or (named.isoformat() if named else None)
    if not first:
        raise FileRejected(
            f"{path}: a LiteLLM price list carries no dates; add a [[price_lists]] entry with match = "
            f'"{path.name}" and effective_from = "YYYY-MM-DD" to the settings (or put the date in its name)'
        )
    day = named or found.load_day or dt.datetime.now(dt.timezone.utc).date()
    text = utf8_text(path, gz)
    try:
        models = json.loads(text, parse_float=_FloatText, parse_int=str)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise FileRejected(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(models, dict):
        raise FileRejected(f"{path}: a LiteLLM price list is a JSON object of model entries")
    cols: dict[str, list[str | None]] = {c: [] for c in allowed}
    lines: list[int] = []
    bad: list[tuple[int, str]] = []
    line = 0  # one line per price row (and per unreadable entry): an entry may give several rows
    normalised: list[str] = []
    changes: list[str] = []
    for key, entry in models.items():
        if key == "sample_spec" or not isinstance(entry, dict):
            continue
        try:
            rows = _rows_of(key, entry, first, mapping.currency or "USD", normalised)
        except ValueError as exc:
            line += 1
            bad.append((line, f"litellm entry {key}: {exc}"))
            continue
        for row in rows:
            line += 1
            dated = _dated(row, found, day, changes)
            if isinstance(dated, str):
                bad.append((line, dated))
                continue
            lines.append(line)
            for c in allowed:
                cols[c].append(dated.get(c))
    read = mapped_result(cols, lines, allowed, bad)
    if normalised:
        shown = ", ".join(normalised[:3]) + (f" and {len(normalised) - 3} more" if len(normalised) > 3 else "")
        read.notes.append(
            f"{len(normalised)} price(s) written as floating-point numbers with more digits than a double holds "
            f"were read as the nearest decimal of {DOUBLE_DIGITS} significant digits ({shown})"
        )
    if changes:
        when = "the date in its name" if named else "the day it was loaded"
        read.notes.append(
            f"{len(changes)} price(s) changed, in force from {day} ({when}; the months before keep the price they "
            f"had): {'; '.join(changes)}"
        )
    return read


for _name in PRICE_LIST_FORMATS:
    register_file_format(
        FileFormat(
            name=_name, kind="prices", sniff=lambda head, n=_name: sniff_price_list(head) == n, read=read_price_list
        )
    )
