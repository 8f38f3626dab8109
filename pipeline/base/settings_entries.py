"""The checks of the settings' list entries ([[request_logs]], [[load_tests]], [[billing_exports]], [[price_lists]],
[[metrics_files]], [[metrics_clusters]], [[budgets]]): each takes one TOML table and returns it typed, or raises
``SettingsError`` naming where it is."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from pipeline.base.fileformats import (
    BILLING_FORMATS,
    BUDGET_ROUTES,
    LOAD_TEST_FORMATS,
    LOG_FORMATS,
    METRIC_FORMATS,
    PRICE_LIST_FORMATS,
    USAGE_FORMATS,
    BillingMapping,
    Budget,
    LoadTestMapping,
    LogMapping,
    MetricsCluster,
    MetricsFileMapping,
    PriceListMapping,
)
from pipeline.base.settings_checks import SettingsError, _bounded_decimal


def _file_entry(entry: Any, where: str, cls: type, formats: tuple[str, ...]) -> dict[str, str]:
    """The checks every per-file settings entry ([[request_logs]], [[load_tests]], [[billing_exports]]) shares: a
    table of the class's keys, non-empty strings, a known format."""
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


def _utc(entry: dict[str, str], key: str, where: str) -> dict[str, str]:
    """The entry with its ``key`` timestamp as ISO-8601 UTC (one without an offset is UTC already)."""
    if not entry.get(key):
        return entry
    try:
        ts = datetime.fromisoformat(entry[key].replace("Z", "+00:00"))
    except ValueError:
        raise SettingsError(f"{where}: {key} {entry[key]!r} is not an ISO-8601 timestamp") from None
    if ts.tzinfo is not None:
        ts = ts.astimezone(timezone.utc).replace(tzinfo=None)
    return {**entry, key: ts.isoformat()}


def _load_test_mapping(entry: Any, where: str) -> LoadTestMapping:
    entry = _file_entry(entry, where, LoadTestMapping, LOAD_TEST_FORMATS)
    return LoadTestMapping(**_utc(entry, "measured_at", where))


def _billing_mapping(entry: Any, where: str) -> BillingMapping:
    return BillingMapping(**_file_entry(entry, where, BillingMapping, BILLING_FORMATS + USAGE_FORMATS))


def _price_list_mapping(entry: Any, where: str) -> PriceListMapping:
    entry = _file_entry(entry, where, PriceListMapping, PRICE_LIST_FORMATS)
    return PriceListMapping(**_utc(entry, "effective_from", where))


def _metrics_file_mapping(entry: Any, where: str) -> MetricsFileMapping:
    entry = _file_entry(entry, where, MetricsFileMapping, METRIC_FORMATS)
    if not entry.get("scraped_at"):
        raise SettingsError(f"{where}: scraped_at is required (when the files it matches were scraped, ISO 8601)")
    return MetricsFileMapping(**_utc(entry, "scraped_at", where))


def _metrics_cluster(entry: Any, where: str) -> MetricsCluster:
    if not isinstance(entry, dict) or set(entry) != {"label", "value", "cluster_id"}:
        raise SettingsError(f"{where}: must be a table of label, value and cluster_id")
    if not all(isinstance(v, str) and v for v in entry.values()):
        raise SettingsError(f"{where}: label, value and cluster_id must be non-empty strings")
    return MetricsCluster(**entry)


def _budget(entry: Any, where: str) -> Budget:
    if not isinstance(entry, dict) or not {"team", "usd"} <= set(entry) <= {"team", "route", "usd"}:
        raise SettingsError(f"{where}: must be a table of team, usd and (optionally) route")
    team, route = entry["team"], entry.get("route", "both")
    if not isinstance(team, str) or not team:
        raise SettingsError(f'{where}: team must be a team\'s name, or "*" for every team')
    if route not in BUDGET_ROUTES:
        raise SettingsError(f"{where}: route must be one of {', '.join(BUDGET_ROUTES)}")
    try:
        usd = _bounded_decimal("a finite, non-negative number of dollars a month", Decimal(10**12))(entry["usd"])
    except ValueError as exc:
        raise SettingsError(f"{where}: usd: {exc}") from None
    return Budget(team=team, route=route, usd=usd)


def _one_budget_each(budgets: tuple[Budget, ...], where: str) -> None:
    seen = set()
    for b in budgets:
        if (b.team, b.route) in seen:
            raise SettingsError(f"{where}: two budgets for team {b.team!r} on route {b.route}")
        seen.add((b.team, b.route))


def _one_cluster_each(entries: tuple[MetricsCluster, ...], where: str) -> None:
    """One cluster per label and value: two entries mapping the same series to different clusters would move its
    samples by the order of the file."""
    seen: dict[tuple[str, str], str] = {}
    for m in entries:
        other = seen.setdefault((m.label, m.value), m.cluster_id)
        if other != m.cluster_id:
            raise SettingsError(
                f"{where}: {m.label} = {m.value!r} is mapped to two clusters, {other!r} and {m.cluster_id!r}"
            )
