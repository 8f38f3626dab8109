"""Typed settings, read from one TOML file, overridable by environment and flags.

Precedence (highest first): command-line flag, environment variable
(``COSTLEDGER_DB``, ``COSTLEDGER_SETTINGS``), the TOML file, the defaults below.
The TOML file is ``./costledger.toml`` if present, or the path in
``COSTLEDGER_SETTINGS`` / ``--settings``. ``costledger settings`` prints the
values in force.
"""

from __future__ import annotations

import os
import re
import tomllib
from datetime import date, datetime, timezone
from dataclasses import asdict, dataclass, fields
from decimal import Decimal
from pathlib import Path
from typing import Any

from pipeline.loadtests import LOAD_TEST_FORMATS, LoadTestMapping
from pipeline.logformats import LOG_FORMATS, LogMapping
from pipeline.errors import CostledgerError

DEFAULT_SETTINGS_FILE = Path("costledger.toml")


class SettingsError(CostledgerError, ValueError):
    """The settings file is unreadable or holds a value of the wrong kind."""


@dataclass(frozen=True)
class Settings:
    """Everything the SQL models and commands read besides the data."""

    db: Path = Path("ledger.duckdb")
    """The DuckDB file every command reads or writes (``--db`` overrides)."""

    reference_api_provider: str = "moonshot"
    """Provider whose price prices self-hosted requests for the API-equivalent cost."""

    reference_api_model: str = "kimi-k3"
    """Model whose price prices self-hosted requests for the API-equivalent cost."""

    slo_ms_api: int | None = None
    """Latency SLO of the api route in ms: an accepted attempt slower than this counts as not accepted. None = no SLO."""

    slo_ms_self_hosted: int | None = None
    """Latency SLO of the self_hosted route in ms. None = no SLO."""

    reconciliation_tolerance_pct: Decimal = Decimal("1.0")
    """Invoice vs metered: a difference within this percent of the metered total is 'ok'."""

    reconciliation_tolerance_usd: Decimal = Decimal("1.00")
    """Invoice vs metered: a difference within this many dollars is 'ok' whatever the percent."""

    review_rate_per_hour_usd: Decimal = Decimal("0")
    """Cost of one hour of human review, added to the route of the reviewed task."""

    business_maas_revenue_12m_usd: Decimal | None = None
    """Model-as-a-Service revenue over the last 12 months (for the Kimi K3 license check); None = not supplied."""

    business_monthly_active_users: int | None = None
    """Monthly active users of the product using the model (license attribution check); None = not supplied."""

    business_monthly_revenue_usd: Decimal | None = None
    """Monthly revenue of the product using the model (license attribution check); None = not supplied."""

    focus_cluster_tag_key: str = "cluster"
    """FOCUS rows whose Tags JSON has this key belong to the cluster it names."""

    focus_resource_patterns: tuple[tuple[str, str], ...] = ()
    """(cluster_id, regular expression on ResourceId): FOCUS rows matching belong to that cluster."""

    request_log_mappings: tuple[LogMapping, ...] = ()
    """[[request_logs]] entries: per file-name pattern, the format and the route, provider, cluster, model, team or field paths a log does not carry."""

    load_test_mappings: tuple[LoadTestMapping, ...] = ()
    """[[load_tests]] entries: per file-name pattern, the format, cluster, sweep id and measurement time a benchmark result does not carry."""

    gx_max_rows: int = 100_000
    """Great Expectations validates every well-typed row of a file up to this many, a deterministic sample beyond."""

    memory_limit: str = "4GB"
    """DuckDB memory_limit for the nightly; larger work spills to temp_directory instead of failing."""

    batch_rows: int = 10_000_000
    """The build folds new request rows into the request models this many at a time (bounds memory)."""

    temp_directory: str = ""
    """Where DuckDB spills; '' = the ledger's state folder (<db>.d/tmp)."""

    keep_snapshots: int = 3
    """Published snapshots kept for `costledger rollback` (the newest is the published file)."""

    max_tokens_per_request: int = 10**12
    """Plausibility bound: a request whose token count (any token column) is above this is quarantined at ingest."""

    max_latency_ms: int = 7 * 24 * 3600 * 1000
    """Plausibility bound: a request whose latency_ms is above this (default 7 days) is quarantined at ingest."""

    earliest_date: str = "2000-01-01"
    """Plausibility bound: a timestamp or date before this is quarantined at ingest (none may be from 2100 on, and event times not after tomorrow)."""

    max_amount: Decimal = Decimal(10**12)
    """Plausibility bound: a money amount (or other decimal) beyond plus or minus this is quarantined at ingest."""

    max_line_bytes: int = 64 * 2**20
    """A file with a single line (record) longer than this is rejected whole (protects memory from one-line bombs)."""

    max_file_bytes: int = 64 * 2**30
    """A file whose decompressed size passes this is rejected whole (protects memory and disk from gzip bombs)."""

    source: str = "defaults"
    """Where these settings came from (for the report's trust section)."""

    @property
    def bounds(self) -> Any:
        from schemas.expectations import Bounds

        return Bounds(max_count=self.max_tokens_per_request, max_latency_ms=self.max_latency_ms,
                      earliest=date.fromisoformat(self.earliest_date), max_amount=self.max_amount)

    def sql_rows(self) -> list[tuple[str, str]]:
        """(key, value) rows for the ``meta.settings`` table the SQL models read."""
        rows = []
        for f in fields(self):
            if f.name in ("db", "source", "memory_limit", "temp_directory", "keep_snapshots", "gx_max_rows",
                          "batch_rows", "focus_resource_patterns", "request_log_mappings", "load_test_mappings",
                          "max_tokens_per_request", "max_latency_ms", "earliest_date", "max_amount",
                          "max_line_bytes", "max_file_bytes"):
                continue
            value = getattr(self, f.name)
            rows.append((f.name, "" if value is None else str(value)))
        rows += [(f"focus_resource_pattern.{cluster}", pattern) for cluster, pattern in self.focus_resource_patterns]
        return rows

    def as_dict(self) -> dict[str, Any]:
        return {k: (str(v) if isinstance(v, (Path, Decimal)) else v) for k, v in asdict(self).items()}


# TOML layout: section.key -> Settings field
_TOML_KEYS: dict[tuple[str, str], str] = {
    ("ledger", "db"): "db",
    ("reference_api", "provider"): "reference_api_provider",
    ("reference_api", "model"): "reference_api_model",
    ("slo", "api_ms"): "slo_ms_api",
    ("slo", "self_hosted_ms"): "slo_ms_self_hosted",
    ("reconciliation", "tolerance_pct"): "reconciliation_tolerance_pct",
    ("reconciliation", "tolerance_usd"): "reconciliation_tolerance_usd",
    ("review", "rate_per_hour_usd"): "review_rate_per_hour_usd",
    ("business", "maas_revenue_12m_usd"): "business_maas_revenue_12m_usd",
    ("business", "monthly_active_users"): "business_monthly_active_users",
    ("business", "monthly_revenue_usd"): "business_monthly_revenue_usd",
    ("validation", "gx_max_rows"): "gx_max_rows",
    ("focus", "cluster_tag_key"): "focus_cluster_tag_key",
    ("focus", "resource_patterns"): "focus_resource_patterns",
    ("ledger", "memory_limit"): "memory_limit",
    ("ledger", "temp_directory"): "temp_directory",
    ("ledger", "keep_snapshots"): "keep_snapshots",
    ("ledger", "batch_rows"): "batch_rows",
    ("ledger", "max_line_bytes"): "max_line_bytes",
    ("ledger", "max_file_bytes"): "max_file_bytes",
    ("validation", "max_tokens_per_request"): "max_tokens_per_request",
    ("validation", "max_latency_ms"): "max_latency_ms",
    ("validation", "earliest_date"): "earliest_date",
    ("validation", "max_amount"): "max_amount",
}
_UNITS = {"kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
MIN_MEMORY_BYTES = 256 * 10**6


def memory_bytes(text: str) -> int | None:
    """Bytes of a DuckDB size such as '4GB' or '512MiB'; None for a percentage (of the machine's memory)."""
    m = _MEMORY.match(text.strip())
    if not m:
        raise ValueError(text)
    unit = m.group(2).lower()
    if unit == "%":
        return None
    return int(Decimal(text.strip()[: m.start(2)].strip()) * _UNITS[unit])
_MEMORY = re.compile(r"^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB|%)$", re.IGNORECASE)


def _coerce(name: str, value: Any, where: str) -> Any:
    default = getattr(Settings, name, None)
    try:
        if name == "db":
            if not isinstance(value, str) or not value or "\x00" in value:
                raise ValueError("a file path")
            if Path(value).is_dir():
                raise ValueError("a file path (this is a folder)")
            return Path(value)
        if name == "focus_resource_patterns":
            if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
                raise ValueError('a table of cluster_id = "regular expression" lines')
            for cluster, pattern in value.items():
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ValueError(f"regular expressions; {cluster} = {pattern!r}: {exc}") from None
            return tuple(sorted(value.items()))
        if name == "memory_limit":
            if not isinstance(value, str) or not _MEMORY.match(value.strip()):
                raise ValueError("a size such as '4GB', '512MiB' or '80%'")
            size = memory_bytes(value)
            if size is not None and size < MIN_MEMORY_BYTES:
                raise ValueError("a size of at least 256MB (DuckDB cannot build the models in less)")
            if size is None and not 10 <= Decimal(value.strip()[:-1]) <= 100:
                raise ValueError("a percentage between 10% and 100%")
            return value.strip()
        if name == "temp_directory":
            if not isinstance(value, str) or "\x00" in value:
                raise ValueError("a folder path")
            if value and Path(value).exists() and not Path(value).is_dir():
                raise ValueError("a folder path (this is a file)")
            return value
        if name == "earliest_date":
            if not isinstance(value, str):
                raise ValueError("a date YYYY-MM-DD")
            if not "1900-01-01" <= date.fromisoformat(value).isoformat() < "2100-01-01":
                raise ValueError("a date between 1900-01-01 and 2099-12-31")
            return value
        if name in ("keep_snapshots", "gx_max_rows", "batch_rows", "max_tokens_per_request", "max_latency_ms",
                    "max_line_bytes", "max_file_bytes"):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError("a whole number of at least 1")
            return value
        if name == "business_monthly_active_users":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError("a whole number of users")
            return value
        if name.startswith("business_"):
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise ValueError("a number of dollars")
            d = Decimal(str(value))
            if not d.is_finite() or d < 0:
                raise ValueError("a finite, non-negative number of dollars")
            return d
        if name.startswith("slo_ms_"):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError("a positive whole number of milliseconds")
            return value
        if isinstance(default, Decimal):
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                raise ValueError("a number")
            d = Decimal(str(value))
            if not d.is_finite() or d < 0:
                raise ValueError("a finite, non-negative number")
            return d
        if not isinstance(value, str) or not value:
            raise ValueError("a non-empty string")
        return value
    except ArithmeticError:
        raise SettingsError(f"{where}: {value!r} is not valid; expected a number") from None
    except ValueError as exc:
        raise SettingsError(f"{where}: {value!r} is not valid; expected {exc}") from None


def load_settings(path: Path | None = None, db: Path | None = None) -> Settings:
    """Settings from ``path`` (or COSTLEDGER_SETTINGS, or ./costledger.toml), then env, then flags."""
    return load_settings_with_origins(path, db)[0]


def load_settings_with_origins(path: Path | None = None, db: Path | None = None) -> tuple[Settings, dict[str, str]]:
    """The settings and, per field, where its value came from: ``FILE: section.key``, an environment
    variable, a flag, or ``default``."""
    origins: dict[str, str] = {}
    env_path = os.environ.get("COSTLEDGER_SETTINGS")
    chosen = path or (Path(env_path) if env_path else None)
    values: dict[str, Any] = {}
    source = "defaults"
    if chosen is None and DEFAULT_SETTINGS_FILE.exists():
        chosen = DEFAULT_SETTINGS_FILE
    if chosen is not None:
        if not chosen.exists():
            raise SettingsError(f"settings file {chosen} does not exist")
        try:
            data = tomllib.loads(chosen.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{chosen}: not valid TOML: {exc}") from None
        logs = data.pop("request_logs", [])
        if not isinstance(logs, list):
            raise SettingsError(f"{chosen}: request_logs must be an array of tables ([[request_logs]])")
        values["request_log_mappings"] = tuple(_log_mapping(entry, f"{chosen}: request_logs[{i}]")
                                               for i, entry in enumerate(logs))
        tests = data.pop("load_tests", [])
        if not isinstance(tests, list):
            raise SettingsError(f"{chosen}: load_tests must be an array of tables ([[load_tests]])")
        values["load_test_mappings"] = tuple(_load_test_mapping(entry, f"{chosen}: load_tests[{i}]")
                                             for i, entry in enumerate(tests))
        for section, table in data.items():
            if not isinstance(table, dict):
                raise SettingsError(f"{chosen}: top-level key {section!r} must be a [section]")
            for key, value in table.items():
                name = _TOML_KEYS.get((section, key))
                if name is None:
                    known = ", ".join(f"{s}.{k}" for s, k in _TOML_KEYS)
                    raise SettingsError(f"{chosen}: unknown setting {section}.{key} (known: {known})")
                values[name] = _coerce(name, value, f"{chosen}: {section}.{key}")
                origins[name] = f"{chosen}: {section}.{key}"
        if logs:
            origins["request_log_mappings"] = f"{chosen}: [[request_logs]]"
        if tests:
            origins["load_test_mappings"] = f"{chosen}: [[load_tests]]"
        source = str(chosen)
    env_db = os.environ.get("COSTLEDGER_DB")
    if env_db:
        values["db"] = Path(env_db)
        origins["db"] = "environment COSTLEDGER_DB"
    if db is not None:
        values["db"] = db
        origins["db"] = "flag --db"
    settings = Settings(**values, source=source)
    return settings, {f.name: origins.get(f.name, "default") for f in fields(settings) if f.name != "source"}


def _file_entry(entry: Any, where: str, cls: type, formats: tuple[str, ...]) -> dict[str, str]:
    """The checks every per-file settings entry ([[request_logs]], [[load_tests]]) shares: a table of the
    class's keys, non-empty strings, a known format."""
    if not isinstance(entry, dict):
        raise SettingsError(f"{where}: must be a table")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(entry) - known)
    if unknown:
        raise SettingsError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    if not all(isinstance(v, str) and v for v in entry.values()):
        raise SettingsError(f"{where}: every value must be a non-empty string")
    if entry.get("format") and entry["format"] not in formats:
        raise SettingsError(f"{where}: format {entry['format']!r} is not one of {', '.join(formats)}")
    return entry


def _log_mapping(entry: Any, where: str) -> LogMapping:
    entry = _file_entry(entry, where, LogMapping, LOG_FORMATS)
    if entry.get("route") and entry["route"] not in ("api", "self_hosted"):
        raise SettingsError(f"{where}: route must be api or self_hosted")
    return LogMapping(**entry)


def _load_test_mapping(entry: Any, where: str) -> LoadTestMapping:
    entry = _file_entry(entry, where, LoadTestMapping, LOAD_TEST_FORMATS)
    if entry.get("measured_at"):
        try:
            ts = datetime.fromisoformat(entry["measured_at"].replace("Z", "+00:00"))
            if ts.tzinfo is not None:  # one without an offset is UTC already
                ts = ts.astimezone(timezone.utc).replace(tzinfo=None)
            entry = {**entry, "measured_at": ts.isoformat()}
        except ValueError:
            raise SettingsError(f"{where}: measured_at {entry['measured_at']!r} is not an ISO-8601 timestamp") from None
    return LoadTestMapping(**entry)


def _field_docs() -> dict[str, str]:
    """Field docstrings, for ``costledger settings`` (read from this module's source)."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(Settings))
    docs: dict[str, str] = {}
    body = tree.body[0].body  # type: ignore[attr-defined]
    for node, nxt in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
            docs[node.target.id] = str(nxt.value.value)  # type: ignore[union-attr]
    return docs


FIELD_DOCS = _field_docs
EXAMPLE_TOML = """\
# costledger settings (all optional; defaults shown)
[ledger]
db = "ledger.duckdb"
memory_limit = "4GB"     # DuckDB spills to disk beyond this
temp_directory = ""      # '' = <db>.d/tmp
keep_snapshots = 3       # published snapshots kept for `costledger rollback`
batch_rows = 10000000    # new request rows folded into the request models at a time (bounds memory)
max_line_bytes = 67108864        # a file with a longer single line is rejected whole (64 MiB)
max_file_bytes = 68719476736     # a file that decompresses to more is rejected whole (64 GiB)

[reference_api]          # prices self-hosted requests for the API-equivalent cost
provider = "moonshot"
model = "kimi-k3"

[slo]                    # latency SLO per route, ms; an accepted attempt slower than this is a violation
# api_ms = 120000
# self_hosted_ms = 120000

[reconciliation]         # invoice vs metered: 'ok' within either tolerance
tolerance_pct = 1.0
tolerance_usd = 1.00

[review]
rate_per_hour_usd = 0    # human review cost per hour, added to the reviewed task's route

[focus]                  # FOCUS cloud bills: which rows belong to which cluster
cluster_tag_key = "cluster"   # a row whose Tags has this key belongs to that cluster
# [focus.resource_patterns]   # else: cluster_id = "regular expression on ResourceId"
# "k3-b200-01" = "^arn:aws:ec2:.*:instance/i-0abc"

# [[request_logs]]       # per log file name: what the log does not say (repeat the table for more)
# match = "vllm-*.jsonl"
# format = "vllm"        # openai_chat, openai_responses, anthropic, litellm, vllm, sglang, canonical
# route = "self_hosted"
# cluster_id = "k3-b200-01"
# model = "kimi-k3"
# task_id_field = "metadata.task_id"

[validation]
gx_max_rows = 100000     # Great Expectations validates every row up to this many per file, a sample beyond
# plausibility bounds: a value beyond them is quarantined at ingest (never a build failure)
max_tokens_per_request = 1000000000000   # each token column of a request
max_latency_ms = 604800000               # 7 days
earliest_date = "2000-01-01"             # no timestamp before; none from 2100 on; event times not after tomorrow
max_amount = 1000000000000               # money and other decimals, either sign

[business]               # optional: enables the Kimi K3 license checks in the report
# maas_revenue_12m_usd = 0
# monthly_active_users = 0
# monthly_revenue_usd = 0
"""
