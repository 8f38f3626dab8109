"""Typed settings, read from one TOML file, overridable by environment and flags.

Precedence (highest first): command-line flag, environment variable
(``COSTLEDGER_DB``, ``COSTLEDGER_SETTINGS``), the TOML file, the defaults below.
The TOML file is ``./costledger.toml`` if present, or the path in
``COSTLEDGER_SETTINGS`` / ``--settings``. ``costledger settings`` prints the
values in force.
"""

from __future__ import annotations

import os
import tomllib
from datetime import date
from dataclasses import asdict, dataclass, field, fields
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

from pipeline.base.errors import ExitCode
from pipeline.base.fileformats import (
    BillingMapping,
    LoadTestMapping,
    Budget,
    LogMapping,
    MetricsCluster,
    MetricsFileMapping,
    PriceListMapping,
)
from pipeline.base.settings_entries import (
    _billing_mapping,
    _budget,
    _load_test_mapping,
    _log_mapping,
    _metrics_cluster,
    _metrics_file_mapping,
    _one_budget_each,
    _one_cluster_each,
    _price_list_mapping,
)
from pipeline.base.settings_checks import (
    SettingsError,
    MAX_SLO_MS,
    URL,
    _bounded_decimal,
    _control_requirements,
    _date,
    _db_path,
    _drills,
    _pue,
    _engine,
    _flag,
    _folder,
    _memory_limit,
    _names,
    _patterns,
    MAX_THREADS,
    _seconds_to_wait,
    _share,
    _size,
    _spark_options,
    _spark_remote,
    _lake_uri,
    _text,
    _webhook_url,
    _whole,
)
from schemas.tables import GATE_DRILLS

#: Defaults the settings own and the loaders take when no settings are given (tests, ``ingest_file`` alone)
GX_MAX_ROWS = 20_000
MAX_LINE_BYTES = 64 * 2**20
MAX_FILE_BYTES = 64 * 2**30
MAX_TEXT_BYTES = 64 * 2**10

DEFAULT_SETTINGS_FILE = Path("costledger.toml")


class UnsupportedLocation(SettingsError):
    """A path written as a URL (``s3://bucket/ledger.duckdb``): the ledger file is a local file, and taking the URL
    as a path would make a local folder named ``s3:``."""

    exit_code = ExitCode.USAGE


def local_path(value: Path | str, what: str) -> Path:
    """``value`` as a local path, or ``UnsupportedLocation`` naming ``what`` when it is written as a URL."""
    text = str(value)
    if URL.match(text):
        scheme = text.split(":", 1)[0]
        raise UnsupportedLocation(
            f"{what} {text!r}: {scheme}:// locations are not supported; give a local path (a URL is never taken "
            "for the name of a local folder)"
        )
    return Path(value)


def setting(default: Any, toml: str, sql: bool = False, example: str | None = None) -> Any:
    """One setting, declared once: its default, its TOML key (``section.key``), whether the SQL models read it
    (``meta.settings``) and, for one without a default, an example value; its doc is the docstring below it.
    The TOML key map, the example file, the settings view and the table of docs/settings.md are all made from these."""
    return field(default=default, metadata={"toml": toml, "sql": sql, "example": example})


@dataclass(kw_only=True, frozen=True)
class Settings:
    """Everything the SQL models and commands read besides the data."""

    db: Path = setting(Path("ledger.duckdb"), "ledger.db")
    """The DuckDB file every command reads or writes (``--db`` overrides)."""

    reference_api_provider: str = setting("moonshot", "reference_api.provider", sql=True)
    """Provider whose price prices self-hosted requests for the API-equivalent cost."""

    reference_api_model: str = setting("kimi-k3", "reference_api.model", sql=True)
    """Model whose price prices self-hosted requests for the API-equivalent cost."""

    api_tax_recoverable: bool = setting(True, "api.tax_recoverable", sql=True)
    """Whether the tax on API invoices is recovered (VAT reclaimed): then it is left out of the API's run-rate and C;
    false puts it in, as a cost the team bears."""

    slo_ms_api: int | None = setting(None, "slo.api_ms", sql=True, example="120000")
    """Latency SLO of the api route in ms: an accepted attempt slower than this counts as not accepted. None = no
    SLO."""

    slo_ms_self_hosted: int | None = setting(None, "slo.self_hosted_ms", sql=True, example="120000")
    """Latency SLO of the self_hosted route in ms. None = no SLO."""

    reconciliation_tolerance_pct: Decimal = setting(Decimal("1.0"), "reconciliation.tolerance_pct", sql=True)
    """Invoice vs metered: a difference within this percent of the metered total is 'ok'."""

    reconciliation_tolerance_usd: Decimal = setting(Decimal("1.00"), "reconciliation.tolerance_usd", sql=True)
    """Invoice vs metered: a difference within this many dollars is 'ok' whatever the percent."""

    review_rate_per_hour_usd: Decimal = setting(Decimal("0"), "review.rate_per_hour_usd", sql=True)
    """Cost of one hour of human review, added to the route of the reviewed task."""

    business_maas_revenue_12m_usd: Decimal | None = setting(
        None, "business.maas_revenue_12m_usd", sql=True, example="0"
    )
    """Model-as-a-Service revenue over the last 12 months (for the Kimi K3 license check); None = not supplied."""

    business_monthly_active_users: int | None = setting(None, "business.monthly_active_users", sql=True, example="0")
    """Monthly active users of the product using the model (license attribution check); None = not supplied."""

    business_monthly_revenue_usd: Decimal | None = setting(None, "business.monthly_revenue_usd", sql=True, example="0")
    """Monthly revenue of the product using the model (license attribution check); None = not supplied."""

    business_model_as_a_service: bool = setting(False, "business.model_as_a_service", sql=True)
    """The model is offered to others as a service (Model-as-a-Service): only then does the Kimi K3 license's
    revenue clause apply. Internal use and features embedded in the team's own product are outside it."""

    business_control_requirements: tuple[str, ...] = setting(
        (), "business.control_requirements", sql=True, example='["data_residency", "isolation"]'
    )
    """Why the team must run the model itself whatever the cost: data_residency, isolation, fine_tuning,
    latency_floor, guaranteed_capacity, version_control. When set, the report says beside the verdict that
    self-hosting is required for them and that the verdict weighs cost alone."""

    min_tasks_for_factor: int = setting(200, "api_waste.min_tasks_for_factor", sql=True)
    """Accepted API tasks the API waste factor needs (what the API spends on failures, retries and rejected tasks per
    dollar of accepted work): with fewer in a month, up to 3 months before are pooled until there are; with fewer
    still the factor is assumed to be 1."""

    bootstrap_random_state: int = setting(20261202, "api_waste.bootstrap_random_state", sql=True)
    """Where the random draws of the bootstrap that gives the API waste factor its 95 % interval start: the same data
    and number give the same interval."""

    robustness_operating_cost_share: Decimal = setting(Decimal("0.20"), "robustness.operating_cost_share", sql=True)
    """How far the verdict's robustness test moves operating costs (opex) down and up: 0.20 tests them 20 % lower
    and 20 % higher."""

    clusters_idle_warning: Decimal = setting(Decimal("0.05"), "clusters.idle_warning", sql=True)
    """A cluster that used less than this share of its token capacity in a month is named on the report's first
    screen with the dollars its idle capacity cost (0.05: under 5 %)."""

    capacity_latency_headroom: Decimal = setting(Decimal("0.90"), "capacity.latency_headroom", sql=True)
    """A cluster whose accepted attempts' p95 latency is above this share of the self-hosted SLO while its busiest
    hour used under half the capacity of its nodes in service is near its latency limit far below what its load
    test says it can serve: the verdict carries the caveat sweep_optimistic."""

    gpus_per_node: int = setting(8, "clusters.gpus_per_node", sql=True)
    """GPUs in one node: a cluster charge billed in gpu_hour buys its quantity / this many node-hours."""

    planning_node_month_usd: Decimal | None = setting(None, "planning.node_month_usd", sql=True, example="60000")
    """The cost of one node for a month (committed + avoidable: hardware or reservation and on-demand charges), for
    the hybrid plan of a month without a cluster of its own (a month with one uses its own cost per node). None =
    not supplied: such a month is planned on the API alone."""

    planning_spare_nodes: int = setting(0, "planning.spare_nodes", sql=True)
    """The hybrid plan's nodes kept spare: n nodes serve each hour up to (n - this) x their capacity, the rest goes to
    the API. The plan also marks the cheapest size with one spare node (to survive the loss of a node) whatever
    this says."""

    planning_bursty_ratio: Decimal = setting(Decimal("2.0"), "planning.bursty_ratio", sql=True)
    """A cluster whose busiest hour carried more than this many times its average hour's tokens had a bursty month:
    the report's first screen says so, with the share of a peak-sized cluster's capacity that waits for peaks."""

    gate_min_cases: int = setting(30, "gate.min_cases", sql=True)
    """Deployment gate: the evaluation set needs at least this many cases, covering every category."""

    gate_min_hosted_days: int = setting(7, "gate.min_hosted_days", sql=True)
    """Deployment gate: the hosted (API) measurements of the evaluation set must span at least this many days (a
    week of hosted measurements before the decision)."""

    gate_acceptance_margin: Decimal = setting(Decimal("0.10"), "gate.acceptance_margin", sql=True)
    """Deployment gate: the cluster's accepted share must be non-inferior to the API's within this margin (0.10 = 10
    points): the one-sided 95 % lower bound of the paired difference must lie above minus the margin."""

    gate_required_drills: tuple[str, ...] = setting(GATE_DRILLS, "gate.required_drills", sql=True)
    """Deployment gate: the failure drills that must be recorded (gate-checks) and passed for the cluster."""

    gate_mix_tolerance: Decimal = setting(Decimal("0.15"), "gate.mix_tolerance", sql=True)
    """Deployment gate: each category's share of the evaluation's cases must lie within this many points (0.15 = 15
    points) of its share of production's accepted tasks (the request log's workload) in the evaluation's months.
    Skipped, and said so, when production logs no workload or the cases carry no category."""

    gate_max_recovery_minutes: Decimal | None = setting(None, "gate.max_recovery_minutes", sql=True, example="15")
    """Deployment gate: when set, a drill passes only if the cluster recovered within this many minutes (the
    gate-checks' recovery_minutes; a drill run without it recorded is a measurement still missing)."""

    focus_cluster_tag_key: str = setting("cluster", "focus.cluster_tag_key", sql=True)
    """FOCUS rows whose Tags JSON has this key belong to the cluster it names."""

    focus_resource_patterns: tuple[tuple[str, str], ...] = setting(
        (), "focus.resource_patterns", example='{ "k3-b200-01" = "^arn:aws:ec2:.*:instance/i-0abc" }'
    )
    """(cluster_id, regular expression on ResourceId): FOCUS rows matching belong to that cluster."""

    request_log_mappings: tuple[LogMapping, ...] = setting((), "[[request_logs]]")
    """[[request_logs]] entries: per file-name pattern, the format and the route, provider, cluster, model, team,
    workload or field paths a log does not carry."""

    load_test_mappings: tuple[LoadTestMapping, ...] = setting((), "[[load_tests]]")
    """[[load_tests]] entries: per file-name pattern, the format, cluster, sweep id and measurement time a benchmark
    result does not carry."""

    billing_mappings: tuple[BillingMapping, ...] = setting((), "[[billing_exports]]")
    """[[billing_exports]] entries: per file-name pattern, the export format (openai_costs, anthropic_costs for
    invoices; openai_usage, anthropic_usage for usage) and the provider it is an export of."""

    price_list_mappings: tuple[PriceListMapping, ...] = setting((), "[[price_lists]]")
    """[[price_lists]] entries: per file-name pattern, a price list's format (litellm), effective_from and
    currency (a LiteLLM file has no dates)."""

    chargeback_share_idle: bool = setting(False, "chargeback.share_idle", sql=True)
    """Chargeback: spread each cluster's idle capacity over its teams in proportion to the node-hours they used (as
    OpenCost's shareIdle does) instead of showing it as a row of its own, team (idle)."""

    budgets: tuple[Budget, ...] = setting((), "[[budgets]]")
    """[[budgets]] entries: a monthly budget in USD (usd) for a team's spend (team; "*" for every team's) on a route
    (route: api, self_hosted, or both, the default), as the chargeback allocates it. marts.budget_status holds each
    month's spend against it and a projection to the month's end; a nightly names the budgets at risk or over."""

    anomalies_threshold: Decimal = setting(Decimal("3.5"), "anomalies.threshold", sql=True)
    """Anomalies: how far a day's API spend or cache-hit rate of a provider and team must lie from its trailing 28
    days to be flagged, as a robust score ((value - median) / (1.4826 x median absolute deviation); 3.5 is the usual
    cut for this modified z-score)."""

    anomalies_min_usd: Decimal = setting(Decimal("25"), "anomalies.min_usd", sql=True)
    """Anomalies: the least spend (USD) a flagged day must move (its difference from the median spend, or what a
    cache-hit drop added), so that a small team's noise is not an alert."""

    alerts_webhook_url: str | None = setting(
        None, "alerts.webhook_url", example='"https://hooks.slack.com/services/T000/B000/XXXX"'
    )
    """Alerts: an http(s) URL the nightly POSTs its new alerts to (budgets at risk or over, new anomalies) as JSON
    with a Slack-compatible text field. A failed POST never fails the nightly; it is recorded with the run."""

    alerts_timeout_seconds: Decimal = setting(Decimal("5"), "alerts.timeout_seconds")
    """Alerts: how long one POST to the webhook may take, all of it (connecting, sending, the answer): a receiver that
    answers slower is cut off then, and the try counts as failed."""

    alerts_allow_private: bool = setting(False, "alerts.allow_private")
    """Alerts: whether the webhook may be at a private address (10.x, 172.16-31.x, 192.168.x, fc00::/7 and other
    non-public ranges). Loopback is always allowed; link-local and cloud metadata addresses never."""

    alerts_retries: int = setting(2, "alerts.retries")
    """Alerts: how many times a failed POST is tried again (after 1 s, then 2 s, ...)."""

    metrics_file_mappings: tuple[MetricsFileMapping, ...] = setting((), "[[metrics_files]]")
    """[[metrics_files]] entries: per file-name pattern, when the engine or GPU metric scrapes it matches were taken
    (scraped_at), for a scrape saved without timestamps whose file name and text do not say (a time in the name, or a
    '# scraped_at' line, comes first)."""

    metrics_clusters: tuple[MetricsCluster, ...] = setting((), "[[metrics_clusters]]")
    """[[metrics_clusters]] entries: a label and its value (label = "Hostname", value = "gpu-node-01") and the
    cluster_id of the engine and GPU metric series that carry it, for series without a cluster_id or cluster label."""

    energy_usd_per_kwh: Decimal | None = setting(None, "energy.usd_per_kwh", sql=True, example="0.12")
    """What a kWh costs at the owned hardware's site. When set, the GPUs' measured energy x this x energy.pue becomes
    the operating cost line energy of each month of a cluster with owned hardware that has no energy opex row (a
    cloud node's energy is in its price and is never added)."""

    energy_pue: Decimal = setting(Decimal("1"), "energy.pue", sql=True)
    """Power usage effectiveness of the site: the facility's energy over the IT equipment's (1.0 = the GPUs' energy
    alone; 1.3 adds 30 % for cooling and power delivery)."""

    ingest_extra_columns: tuple[str, ...] = setting((), "ingest.extra_columns", example='["region", "cost_center"]')
    """Columns of canonical files the ledger leaves out without a word. Any other column it does not know rejects the
    file, naming the nearest known one (a misspelt optional column would otherwise be dropped); content fields
    (messages, prompt, response, ...) are never read and need no listing."""

    invoice_duplicates_wanted: tuple[str, ...] = setting(
        (), "invoices.duplicates_wanted", example='["moonshot-credit-2026-10"]'
    )
    """Invoice ids loaded even though an earlier file holds an invoice of the same provider with the same periods and
    line amounts (otherwise such a file is rejected as the same invoice delivered twice)."""

    max_quarantine_share: Decimal = setting(Decimal("0.10"), "validation.max_quarantine_share")
    """A loaded file with more than this share of its rows quarantined (0.10 = 10 %) makes the run exit 3, naming
    the file: its rows are most likely of another format or a settings mistake."""

    gx_max_rows: int = setting(GX_MAX_ROWS, "validation.gx_max_rows")
    """Great Expectations validates a file's well-typed rows: all those the SQL rules pass up to this many and all
    those they flag up to this many, a deterministic sample of each beyond (every row is checked by the SQL rules)."""

    memory_limit: str = setting("4GB", "ledger.memory_limit")
    """DuckDB memory_limit for the nightly; larger work spills to temp_directory instead of failing."""

    threads: int = setting(0, "ledger.threads")
    """DuckDB threads for the nightly and the build; 0 = one per core of the machine. Fewer leave cores to other work
    on a shared machine."""

    batch_rows: int = setting(10_000_000, "ledger.batch_rows")
    """The build folds new request rows into the request models this many at a time (bounds memory)."""

    temp_directory: str = setting("", "ledger.temp_directory")
    """Where DuckDB spills; '' = the ledger's state folder (<db>.d/tmp)."""

    keep_snapshots: int = setting(3, "ledger.keep_snapshots")
    """Published snapshots kept for `costledger rollback` (the newest is the published file)."""

    max_tokens_per_request: int = setting(10**12, "validation.max_tokens_per_request")
    """Plausibility bound: a request whose token count (any token column) is above this is quarantined at ingest."""

    max_latency_ms: int = setting(7 * 24 * 3600 * 1000, "validation.max_latency_ms")
    """Plausibility bound: a request whose latency_ms is above this (default 7 days) is quarantined at ingest."""

    earliest_date: str = setting("2000-01-01", "validation.earliest_date")
    """Plausibility bound: a timestamp or date before this is quarantined at ingest (none may be from 2100 on, and
    event times not after tomorrow)."""

    max_amount: Decimal = setting(Decimal(10**12), "validation.max_amount")
    """Plausibility bound: a money amount (or other decimal) beyond plus or minus this is quarantined at ingest."""

    max_line_bytes: int = setting(MAX_LINE_BYTES, "ledger.max_line_bytes")
    """A file with a single line (record) longer than this is rejected whole (protects memory from one-line bombs)."""

    max_file_bytes: int = setting(MAX_FILE_BYTES, "ledger.max_file_bytes")
    """A file whose decompressed size passes this is rejected whole (protects memory and disk from gzip bombs)."""

    max_text_bytes: int = setting(MAX_TEXT_BYTES, "ingest.max_text_bytes")
    """A text value (an id, a name, a note) longer than this many bytes quarantines its row; a Parquet row group with
    such values decoding to more than max_line_bytes rejects its file before it is read (a dictionary bomb)."""

    sql_timeout_seconds: int = setting(300, "sql.timeout_seconds")
    """`costledger sql`: a query still running after this many seconds is stopped."""

    sql_memory_limit: str = setting("25%", "sql.memory_limit")
    """`costledger sql`: DuckDB's memory limit for one query session (a size, or a share of the machine's memory)."""

    sql_max_spill: str = setting("4GB", "sql.max_spill")
    """`costledger sql`: how much a query may spill to its own temporary folder (removed when it ends)."""

    lake_uri: str | None = setting(None, "lake.uri", example='"s3://ledger-lake/team-a"')
    """A folder in object storage (`s3://bucket/folder`) that keeps a copy of the lake, the Parquet files of every
    loaded file: each build uploads the new ones before it publishes, and each run restores from it any that are
    missing on this machine, checked against the manifest's SHA-256. The build reads the machine's copy. Credentials
    and the endpoint come from the AWS environment (`AWS_ACCESS_KEY_ID`, `AWS_PROFILE`, `AWS_ENDPOINT_URL`)."""

    engine_name: str = setting("duckdb", "engine.name")
    """The engine `costledger build` and the nightly run the SQL models on: `duckdb` (embedded, the default) or
    `spark` (Apache Spark; needs `pip install costledger[spark]` and Java 17+). `build --engine` overrides."""

    engine_master: str = setting("local[*]", "engine.master")
    """Spark only: the master URL, e.g. `local[2]` (this machine, two cores) or `spark://host:7077`."""

    engine_spark_remote: str | None = setting(
        None, "engine.spark_remote", example='"sc://spark-connect.internal:15002"'
    )
    """Spark only: a Spark Connect server (`sc://host:port`) to run the build on instead of starting Spark here; the
    server runs it on its own cluster, and `engine.master` is not used. The server must read and write the ledger's
    folder at the same path (the same machine, or a shared file system)."""

    engine_spark_options: tuple[tuple[str, str], ...] = setting(
        (), "engine.spark_options", example='{ "spark.driver.memory" = "8g" }'
    )
    """Spark only: more Spark settings (`spark.*` = value). The decimal, time-zone and ANSI settings the models'
    exact arithmetic needs are costledger's own and cannot be changed here."""

    source: str = "defaults"
    """Where these settings came from (for the report's trust section)."""

    @property
    def bounds(self) -> Any:
        from schemas.expectations import Bounds

        return Bounds(
            max_count=self.max_tokens_per_request,
            max_latency_ms=self.max_latency_ms,
            earliest=date.fromisoformat(self.earliest_date),
            max_amount=self.max_amount,
        )

    def sql_rows(self) -> list[tuple[str, str]]:
        """(key, value) rows for the ``meta.settings`` table the SQL models read (the fields marked ``sql``)."""
        rows = [(f.name, _sql_text(getattr(self, f.name))) for f in fields(self) if f.metadata.get("sql")]
        rows += [(f"focus_resource_pattern.{cluster}", pattern) for cluster, pattern in self.focus_resource_patterns]
        rows += [(f"budget.{b.route}.{b.team}", str(b.usd)) for b in self.budgets]
        return rows

    def as_dict(self) -> dict[str, Any]:
        return {k: (str(v) if isinstance(v, (Path, Decimal)) else v) for k, v in asdict(self).items()}


#: The settings the SQL models may read (``meta.settings`` keys), each named in a model's ``-- settings:`` header
SQL_SETTINGS: tuple[str, ...] = tuple(f.name for f in fields(Settings) if f.metadata.get("sql"))


def _sql_text(value: Any) -> str:
    """A setting as the text meta.settings holds: '' for None, a list of names comma-separated."""
    if value is None:
        return ""
    return ",".join(value) if isinstance(value, tuple) else str(value)


#: TOML layout: (section, key) -> Settings field (made from the fields; [[...]] arrays are read apart)
_TOML_KEYS: dict[tuple[str, str], str] = {
    tuple(f.metadata["toml"].split(".", 1)): f.name  # type: ignore[misc]
    for f in fields(Settings)
    if f.metadata.get("toml") and not f.metadata["toml"].startswith("[[")
}
#: The settings whose check is their own; every other one is checked by its declared type (``_check_for``).
_CHECKS: dict[str, Callable[[Any], Any]] = {
    "db": _db_path,
    "focus_resource_patterns": _patterns,
    "engine_name": _engine,
    "engine_spark_options": _spark_options,
    "engine_spark_remote": _spark_remote,
    "lake_uri": _lake_uri,
    "invoice_duplicates_wanted": _names,
    "ingest_extra_columns": _names,
    "max_quarantine_share": _share,
    "robustness_operating_cost_share": _share,
    "clusters_idle_warning": _share,
    "gate_acceptance_margin": _share,
    "gate_mix_tolerance": _share,
    "gate_max_recovery_minutes": _bounded_decimal("a finite, non-negative number of minutes", Decimal(10**6)),
    "energy_usd_per_kwh": _bounded_decimal("a finite, non-negative number of dollars", Decimal(1000)),
    "energy_pue": _pue,
    "capacity_latency_headroom": _share,
    "business_model_as_a_service": _flag,
    "api_tax_recoverable": _flag,
    "chargeback_share_idle": _flag,
    "anomalies_threshold": _bounded_decimal("a finite, non-negative robust score", Decimal(1000)),
    "anomalies_min_usd": _bounded_decimal("a finite, non-negative number of dollars", Decimal(10**12)),
    "alerts_webhook_url": _webhook_url,
    "alerts_timeout_seconds": _seconds_to_wait,
    "alerts_retries": _whole(0, "a whole number of retries, 0 or more", 10),
    "alerts_allow_private": _flag,
    "business_control_requirements": _control_requirements,
    "memory_limit": _memory_limit,
    "threads": _whole(0, "a whole number of threads, or 0 for one per core", MAX_THREADS),
    "sql_memory_limit": _memory_limit,
    "sql_max_spill": _size,
    "temp_directory": _folder,
    "earliest_date": _date,
    "business_monthly_active_users": _whole(0, "a whole number of users"),
    "planning_spare_nodes": _whole(0, "a whole number of nodes, 0 or more", 1000),
    "planning_bursty_ratio": _bounded_decimal(
        "a finite, non-negative ratio of the busiest hour to the average", Decimal(10**6)
    ),
    "planning_node_month_usd": _bounded_decimal("a finite, non-negative number of dollars", Decimal(10**12)),
    "gate_required_drills": _drills,
    "business_monthly_revenue_usd": _bounded_decimal("a finite, non-negative number of dollars", Decimal(10**12)),
    "slo_ms_api": _whole(1, "a positive whole number of milliseconds (30 days)", MAX_SLO_MS),
    "slo_ms_self_hosted": _whole(1, "a positive whole number of milliseconds (30 days)", MAX_SLO_MS),
    "max_latency_ms": _whole(1, "a positive whole number of milliseconds (30 days)", MAX_SLO_MS),
    # the bounds that keep every sum and product of the models inside DECIMAL(38,12) and HUGEINT
    "max_tokens_per_request": _whole(1, "a positive whole number of tokens", 10**12),
    "max_amount": _bounded_decimal("a finite, non-negative number of dollars", Decimal(10**12)),
}


def _check_for(name: str) -> Callable[[Any], Any]:
    """A setting's check: its own, else by the type it is declared with (int: at least 1; Decimal: finite and
    not negative; str: not empty)."""
    if name in _CHECKS:
        return _CHECKS[name]
    declared = str({f.name: f.type for f in fields(Settings)}[name]).removesuffix(" | None")  # None: left unset
    if declared in (int, "int"):
        return _whole(1, "a whole number of at least 1")
    if declared in (Decimal, "Decimal"):  # inside the money bound: a setting enters the models' arithmetic too
        return _bounded_decimal("a finite, non-negative number", Decimal(10**12))
    return _text


def _coerce(name: str, value: Any, where: str) -> Any:
    try:
        return _check_for(name)(value)
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
        except RecursionError:
            raise SettingsError(f"{chosen}: not valid TOML: nested too deeply to read") from None
        for toml_key, name, parse in (
            ("request_logs", "request_log_mappings", _log_mapping),
            ("load_tests", "load_test_mappings", _load_test_mapping),
            ("billing_exports", "billing_mappings", _billing_mapping),
            ("price_lists", "price_list_mappings", _price_list_mapping),
            ("metrics_files", "metrics_file_mappings", _metrics_file_mapping),
            ("metrics_clusters", "metrics_clusters", _metrics_cluster),
            ("budgets", "budgets", _budget),
        ):
            entries = data.pop(toml_key, [])
            if not isinstance(entries, list):
                raise SettingsError(f"{chosen}: {toml_key} must be an array of tables ([[{toml_key}]])")
            values[name] = tuple(parse(e, f"{chosen}: {toml_key}[{i}]") for i, e in enumerate(entries))
            if toml_key == "budgets":
                _one_budget_each(values[name], f"{chosen}: budgets")
            if toml_key == "metrics_clusters":
                _one_cluster_each(values[name], f"{chosen}: metrics_clusters")
            if entries:
                origins[name] = f"{chosen}: [[{toml_key}]]"
        for section, table in data.items():
            if not isinstance(table, dict):
                raise SettingsError(f"{chosen}: top-level key {section!r} must be a [section]")
            for key, value in table.items():
                name = _TOML_KEYS.get((section, key))
                if name is None:
                    raise SettingsError(f"{chosen}: unknown setting {section}.{key}{_did_you_mean(section, key)}")
                values[name] = _coerce(name, value, f"{chosen}: {section}.{key}")
                origins[name] = f"{chosen}: {section}.{key}"
        source = str(chosen)
    env_db = os.environ.get("COSTLEDGER_DB")
    if env_db:
        values["db"] = Path(env_db)
        origins["db"] = "environment COSTLEDGER_DB"
    if db is not None:
        values["db"] = db
        origins["db"] = "flag --db"
    if "db" in values:
        values["db"] = local_path(values["db"], f"the ledger file ({origins['db']})")
    settings = Settings(**values, source=source)
    _webhook_allowed(settings, origins)
    return settings, {f.name: origins.get(f.name, "default") for f in fields(settings) if f.name != "source"}


def _webhook_allowed(settings: Settings, origins: dict[str, str]) -> None:
    """The alerts webhook's host, when it is an address, is one the ledger sends to (``pipeline.base.addresses``)."""
    from urllib.parse import urlsplit

    from pipeline.base.addresses import address_refused

    url = settings.alerts_webhook_url
    if not url:
        return
    why = address_refused(urlsplit(url).hostname or "", settings.alerts_allow_private)
    if why:
        raise SettingsError(f"{origins.get('alerts_webhook_url', 'alerts.webhook_url')}: the webhook's host is {why}")


def _did_you_mean(section: str, key: str) -> str:
    """'; did you mean X?' with the nearest known key, else the keys of the section (or the sections)."""
    import difflib

    known = [f"{s}.{k}" for s, k in _TOML_KEYS]
    close = difflib.get_close_matches(f"{section}.{key}", known, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]}?"
    in_section = [k for s, k in _TOML_KEYS if s == section]
    if in_section:
        return f"; [{section}] has {', '.join(in_section)}"
    return f"; the sections are {', '.join(sorted({s for s, _ in _TOML_KEYS}))}"
