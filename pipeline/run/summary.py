"""What a run did, as a record: the files it loaded, skipped and rejected, its build, what it published, and what it
warns of (reconciliation gaps, budgets, anomalies, unpriced requests, meter samples set aside); ``as_dict`` is the
``--json`` form."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from pipeline.ingest.files import FileResult
from pipeline.run.alerts import Anomaly, budget_dicts
from pipeline.transform.build import BuildResult


@dataclass(kw_only=True)
class RunSummary:
    run_id: str
    command: str
    files: list[FileResult] = field(default_factory=list)
    build: BuildResult | None = None
    seconds: float = 0.0
    unknown_entries: list[str] = field(default_factory=list)
    outside_links: list[str] = field(default_factory=list)
    mismatches: list[tuple[str, str]] = field(default_factory=list)
    """(month, provider) reconciliation mismatches, in any month of the ledger (a persisting one on every run)."""
    usage_gaps: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(month, provider, token type, status) where a usage export and the logs disagree, in any month of the ledger
    (marts.monthly_usage_reconciliation: logs_missing or logs_extra)."""
    budgets: list[tuple[str, str, str, str, Decimal, Decimal, Decimal]] = field(default_factory=list)
    """(month, team, route, status, spent, projected, budget): the latest month's budgets at risk or over
    (marts.budget_status)."""
    new_budgets: list[tuple[str, str, str, str, Decimal, Decimal, Decimal]] = field(default_factory=list)
    """Those of ``budgets`` no earlier run named with their status: what the webhook is sent."""
    anomalies: list[Anomaly] = field(default_factory=list)
    """The anomalies (marts.daily_anomalies) no earlier run named (``pipeline.run.alerts``)."""
    alerts: str | None = None
    """What became of the alerts webhook (sent, or failed and why); None when nothing was sent."""
    unpriced: list[tuple[str, str, str, int]] = field(default_factory=list)
    """(month, provider, requests) API requests with no price for their provider, model and time (any month)."""
    name_variants: list[tuple[str, list[str]]] = field(default_factory=list)
    """(provider or model, spellings) names that differ only in letter case."""
    nothing_new: bool = False
    """A nightly that loaded nothing and found the build's inputs as the last build published them: nothing was
    built or published."""
    implausible_samples: list[tuple[str, int, str, str]] = field(default_factory=list)
    """(path, line, cluster, reason) the meters' counter samples set aside as implausible (not counted)."""
    published: str | None = None
    orphans_removed: int = 0
    lake_restored: int = 0
    """Lake files missing on this machine that the lake in object storage gave back (``lake.uri``)."""
    lake_uploaded: int = 0
    """Lake files this run copied to the lake in object storage (``lake.uri``)."""
    max_quarantine_share: Decimal = Decimal("0.10")

    def count(self, status: str) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def rows_in(self) -> int:
        return sum(f.rows_in for f in self.files)

    @property
    def rows_loaded(self) -> int:
        return sum(f.rows_loaded for f in self.files)

    @property
    def rows_quarantined(self) -> int:
        return sum(f.rows_quarantined for f in self.files)

    @property
    def rows_duplicate(self) -> int:
        """Of the rows quarantined, the identical duplicates (of a row already loaded, or of one earlier in their
        file): an overlapping delivery, counted once, not bad data."""
        return sum(f.rows_duplicate for f in self.files)

    @property
    def over_quarantined(self) -> list[FileResult]:
        """Loaded files with more than ``max_quarantine_share`` of their rows quarantined for a fault (identical
        duplicates, counted once, are an overlapping delivery, not a fault)."""
        share = self.max_quarantine_share
        return [
            f
            for f in self.files
            if f.status == "loaded" and f.rows_in and Decimal(f.rows_quarantined - f.rows_duplicate) / f.rows_in > share
        ]

    @property
    def outcome(self) -> str:
        if self.count("rejected"):
            return "files_rejected"
        if self.over_quarantined:
            return "rows_quarantined"
        if self.mismatches or self.usage_gaps:
            return "reconciliation_mismatch"
        return "ok"

    def as_dict(self) -> dict:
        return {
            "run_id": self.run_id,
            "command": self.command,
            "outcome": self.outcome,
            "seconds": round(self.seconds, 3),
            "files_seen": len(self.files),
            "files_loaded": self.count("loaded"),
            "files_skipped": self.count("skipped"),
            "files_repaired": self.count("repaired"),
            "files_rejected": self.count("rejected"),
            "rows_in": self.rows_in,
            "rows_loaded": self.rows_loaded,
            "rows_quarantined": self.rows_quarantined,
            "rows_identical_duplicates": self.rows_duplicate,
            "models_built": self.build.models if self.build else 0,
            "audits_passed": self.build.audits if self.build else 0,
            "months_changed": self.build.months_changed if self.build else [],
            "models_rebuilt_in_full": self.build.rebuilt_in_full if self.build else {},
            "reconciliation_mismatches": [{"month": m, "provider": p} for m, p in self.mismatches],
            "usage_mismatches": [
                {"month": m, "provider": p, "token_type": t, "status": s} for m, p, t, s in self.usage_gaps
            ],
            "files_over_quarantine_share": [
                {"path": f.path, "rows_in": f.rows_in, "rows_quarantined": f.rows_quarantined}
                for f in self.over_quarantined
            ],
            "budgets_at_risk_or_over": budget_dicts(self.budgets),
            "new_anomalies": [a.as_dict() for a in self.anomalies],
            "alerts_webhook": self.alerts,
            "unpriced_requests": [
                {"month": m, "provider": p, "model": model, "requests": n} for m, p, model, n in self.unpriced
            ],
            "names_differing_only_in_case": [{"what": w, "spellings": s} for w, s in self.name_variants],
            "meter_samples_set_aside": [
                {"path": p, "line": n, "cluster_id": c, "reason": r} for p, n, c, r in self.implausible_samples
            ],
            "published": self.published,
            "nothing_new": self.nothing_new,
            "orphans_removed": self.orphans_removed,
            "lake_files_restored": self.lake_restored,
            "lake_files_uploaded": self.lake_uploaded,
            "unknown_entries": self.unknown_entries,
            "outside_links_skipped": self.outside_links,
            "files": [
                {
                    "path": f.path,
                    "kind": f.kind,
                    "status": f.status,
                    "rows_in": f.rows_in,
                    "rows_loaded": f.rows_loaded,
                    "rows_quarantined": f.rows_quarantined,
                    "message": f.message,
                }
                for f in self.files
            ],
        }
