"""Runs: loading files, building and publishing, with a lock and a run log.

``run_ingest`` loads a list of (kind, path); ``run_build`` builds and publishes;
``run_nightly`` walks a landing folder (one subfolder per kind), loads every new
file, builds and publishes. All hold the writer lock, clean up what a crashed run
left behind, check free disk space first, and record themselves in ``meta.runs``.
All are safe to run twice: a file whose content is already loaded is skipped.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Callable

from pipeline.transform.build import AuditFailed, BuildResult, ModelFailed, build, publication
from pipeline.storage.catalog import refresh_stale_raw_views
from pipeline.base.errors import CostledgerError, UsageError
from pipeline.base.faults import crashpoint
from pipeline.ingest.files import FileResult, IngestOptions, loaded_identities
from pipeline.ingest.loader import FileLoader
from pipeline.ingest.landing import KIND_ORDER, Landing, scan_landing
from pipeline.storage.lake import HashAhead
from pipeline.storage.remote_lake import push_lake, restore_lake
from pipeline.base.query import run_query
from pipeline.run.alerts import (
    Anomaly,
    alert_payload,
    budget_dicts,
    post_alerts,
    new_anomalies,
    new_budgets,
    record_alerted,
)
from pipeline.base.settings import Settings
from pipeline.storage.store import Store


OnFile = Callable[[FileResult], None]
OnModel = Callable[[str], None]


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


class Run:
    """One locked run against a store: open, clean up, log; then load / build / publish steps."""

    def __init__(self, store: Store, settings: Settings, command: str, log_format: str | None = None) -> None:
        self.store, self.settings = store, settings
        self.summary = RunSummary(
            run_id=uuid.uuid4().hex[:12], command=command, max_quarantine_share=settings.max_quarantine_share
        )
        self.options = IngestOptions(
            gx_max_rows=settings.gx_max_rows,
            log_format=log_format,
            log_mappings=settings.request_log_mappings,
            load_test_mappings=settings.load_test_mappings,
            billing_mappings=settings.billing_mappings,
            price_list_mappings=settings.price_list_mappings,
            metrics_clusters=settings.metrics_clusters,
            metrics_file_mappings=settings.metrics_file_mappings,
            bounds=settings.bounds,
            max_line_bytes=settings.max_line_bytes,
            max_file_bytes=settings.max_file_bytes,
            max_text_bytes=settings.max_text_bytes,
            invoice_duplicates_wanted=settings.invoice_duplicates_wanted,
            extra_columns=settings.ingest_extra_columns,
        )
        self.t0 = time.perf_counter()

    def __enter__(self) -> "Run":
        self._lock = self.store.writer_lock()
        self._lock.__enter__()
        try:
            self.con = self.store.open_work(self.settings)
            self.summary.orphans_removed = len(self.store.remove_orphans(self.con))
            if self.settings.lake_uri:  # before anything reads the lake: a file missing here comes back first
                self.summary.lake_restored = restore_lake(
                    self.con, self.store.lake, self.store.tmp, self.settings.lake_uri
                )
            self.con.execute("UPDATE meta.runs SET outcome = 'interrupted' WHERE outcome IS NULL")
            self.con.execute(
                "INSERT INTO meta.runs (run_id, command, started_at) VALUES (?, ?, current_localtimestamp())",
                [self.summary.run_id, self.summary.command],
            )
        except BaseException:
            self._lock.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.summary.seconds = time.perf_counter() - self.t0
            outcome = self.summary.outcome if exc is None else f"failed: {type(exc).__name__}"
            self._finish(outcome)
            self.store.close_work(self.con, self.settings)
        finally:
            self._lock.__exit__(exc_type, exc, tb)

    def load(self, pairs: list[tuple[str, Path]], on_file: OnFile | None = None, landing: Path | None = None) -> None:
        """Load the files; under a landing folder a file's identity is its path relative to its kind folder."""
        self.store.check_disk(sum(p.stat().st_size for _, p in pairs if p.is_file()))
        identities = [path.relative_to(landing / kind).as_posix() if landing else path.name for kind, path in pairs]
        loaded = loaded_identities(self.con)
        seen = [(path, loaded[(kind, i)]) for (kind, path), i in zip(pairs, identities) if (kind, i) in loaded]
        if len(seen) < len(pairs):
            # a file whose kind and name are new: GX's process starts and imports GX (~3-5 s) now, beside the hashing of
            # the files loaded before
            from pipeline.ingest.validate import warm_up

            warm_up()
        # the files loaded before (by kind and name) and their lake files are hashed ahead, two at a time
        ahead = [p for path, lake in seen for p in (path, self.store.lake / lake if lake else None) if p]
        # one file's GX check overlaps the next file's read (``pipeline.ingest.loader``)
        loader = FileLoader(
            self.con, self.store, run_id=self.summary.run_id, options=self.options,
            on_done=lambda result: self._file_done(result, on_file),
        )  # fmt: skip
        todo = list(zip(pairs, identities))
        try:
            with HashAhead(ahead, "seen") as hashes:
                i = 0
                while i < len(todo):
                    (kind, path), identity = todo[i]
                    if loader.submit(kind, path, identity, hashes):
                        i += 1
                loader.drain()
            refresh_stale_raw_views(self.con)  # the raw views of the kinds loaded, once per run
        except BaseException:
            loader.abort()
            raise

    def _file_done(self, result: FileResult, on_file: OnFile | None) -> None:
        self.summary.files.append(result)
        self._step("ingest", result.path, result.seconds, result.rows_in)
        crashpoint("run.file_done")
        if on_file:
            on_file(result)

    def build_only(self, selection: tuple[str, ...] = (), on_model: OnModel | None = None) -> None:
        """Build (``selection``: only the models it names), each model's time a step of the run."""
        self.summary.build = build(self.con, self.settings, self.store, progress=on_model, selection=selection)
        for model, seconds in self.summary.build.timings:
            self._step("build", model, seconds, None)

    def build_and_publish(self, on_model: OnModel | None = None) -> None:
        self.build_only(on_model=on_model)
        # every month that does not reconcile, changed by this run or not: a mismatch that persists keeps its exit
        # code (4) on every run until it is mended, so that a scheduler sees it each night
        self.summary.mismatches = [
            (str(m)[:7], p)
            for m, p in self.con.execute(
                "SELECT month, provider FROM marts.monthly_reconciliation WHERE status = 'mismatch' ORDER BY ALL"
            ).fetchall()
        ]
        self.summary.usage_gaps = [
            (str(m)[:7], p, t, s)
            for m, p, t, s in self.con.execute(
                "SELECT month, provider, token_type, status FROM marts.monthly_usage_reconciliation "
                "WHERE status IN ('logs_missing', 'logs_extra') ORDER BY ALL"
            ).fetchall()
        ]
        self.summary.unpriced = [
            (str(m)[:7], p, model, n) for m, p, model, n in run_query(self.con, "unpriced_models")[1]
        ]
        self.summary.budgets = run_query(self.con, "budgets_at_risk")[1]
        self.summary.new_budgets = new_budgets(self.con, self.summary.budgets)
        self.summary.anomalies = new_anomalies(self.con)
        self.summary.name_variants = [(w, list(s)) for w, s in run_query(self.con, "name_variants")[1]]
        self.summary.implausible_samples = run_query(self.con, "implausible_meter_samples")[1]
        if self.settings.lake_uri:  # the published ledger names no lake file that object storage lacks
            self.summary.lake_uploaded = push_lake(self.con, self.store.lake, self.settings.lake_uri)
        self._finish(None)  # the published file's meta.runs shows this run as running
        crashpoint("run.before_publish")
        t = time.perf_counter()
        changed = bool(
            self.summary.count("loaded") or self.summary.count("repaired") or self.summary.build.months_changed
        )
        tables, views = publication(self.con, self.store)
        self.store.shrink_pool(self.con, self.settings)  # the build is done: publishing needs little of the pool
        self.summary.published = str(
            self.store.publish(self.con, self.summary.run_id, self.settings.keep_snapshots, tables, views, changed)
        )
        self._step("publish", self.summary.published, time.perf_counter() - t, None)
        self._send_alerts()

    def take_back_loads(self, exc: CostledgerError) -> CostledgerError:
        """After a build that failed: the files this run loaded are taken back (``forget_file``), so that what made
        the build fail is not left in the work file for every later run to fail on; a file still in the landing
        folder is loaded again by the next run, a file removed from it is gone. Returns ``exc`` saying so."""
        from pipeline.storage.catalog import forget_file

        loaded = self.con.execute(
            "SELECT file_hash, kind FROM meta.loaded_files WHERE run_id = ? ORDER BY load_seq", [self.summary.run_id]
        ).fetchall()
        if not loaded:
            return exc
        self.con.execute("BEGIN TRANSACTION")
        try:
            for file_hash, kind in loaded:
                forget_file(self.con, self.store.lake, kind, file_hash)
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.summary.files = [f for f in self.summary.files if f.status != "loaded"]
        taken = (
            f"; the {len(loaded)} file(s) this run loaded were taken back: the next nightly loads those still in the "
            "landing folder again, and a file removed from it is gone"
        )
        return type(exc)(str(exc) + taken)

    def _send_alerts(self) -> None:
        """POST the run's alerts to the webhook of the settings, after the publish (``pipeline.run.alerts``)."""
        s, url = self.summary, self.settings.alerts_webhook_url
        if url and (s.new_budgets or s.anomalies):
            payload = alert_payload(s.run_id, s.new_budgets, s.anomalies)
            timeout, retries = float(self.settings.alerts_timeout_seconds), self.settings.alerts_retries
            s.alerts = post_alerts(
                url, payload, timeout=timeout, retries=retries, allow_private=self.settings.alerts_allow_private
            )
        if s.alerts is None or s.alerts.startswith("sent"):
            record_alerted(self.con, s.run_id, s.new_budgets)

    def reject_folder(self, folder: Path, nearest: str, on_file: OnFile | None) -> None:
        """A landing folder that is not a kind: its data would be silently absent, so it counts as rejected."""
        hint = f"did you mean {nearest}?" if nearest else f"the kinds are {', '.join(KIND_ORDER)}"
        shown = self.options.shown(folder)
        self.reject(folder.name, shown, f"{shown}: not a kind folder, nothing in it was loaded; {hint}", on_file)

    def reject(self, kind: str, shown: str, message: str, on_file: OnFile | None) -> None:
        """An entry of the landing folder that could not be loaded at all: recorded as rejected, with the reason."""
        self.con.execute(
            "INSERT INTO meta.rejected_files VALUES (NULL, ?, ?, ?, current_localtimestamp(), ?)",
            [kind, shown, message, self.summary.run_id],
        )
        result = FileResult(path=shown, kind=kind, status="rejected", message=message)
        self.summary.files.append(result)
        if on_file:
            on_file(result)

    def not_read(self, kind: str, path: str, why: str, on_file: OnFile | None) -> None:
        """A file in a kind folder that the ledger does not read, or a folder it cannot list: listed as skipped."""
        self._file_done(FileResult(path=path, kind=kind, status="skipped", message=why), on_file)

    def _step(self, step: str, name: str, seconds: float, rows: int | None) -> None:
        self.con.execute(
            "INSERT INTO meta.run_steps VALUES (?, ?, ?, ?, ?)", [self.summary.run_id, step, name, seconds, rows]
        )

    def _finish(self, outcome: str | None) -> None:
        s = self.summary
        months = ",".join(s.build.months_changed) if s.build else None
        self.con.execute(
            """UPDATE meta.runs SET finished_at = CASE WHEN ? IS NULL THEN NULL ELSE current_localtimestamp() END,
               files_seen = ?, files_loaded = ?, files_skipped = ?, files_rejected = ?, rows_in = ?, rows_loaded = ?,
               rows_quarantined = ?, months_changed = ?, seconds = ?, outcome = ?, alerts = ? WHERE run_id = ?""",
            [
                outcome,
                len(s.files),
                s.count("loaded"),
                s.count("skipped"),
                s.count("rejected"),
                s.rows_in,
                s.rows_loaded,
                s.rows_quarantined,
                months,
                time.perf_counter() - self.t0,
                outcome,
                s.alerts,
                s.run_id,
            ],
        )


def run_ingest(
    store: Store,
    settings: Settings,
    pairs: list[tuple[str, Path]],
    command: str,
    *,
    on_file: OnFile | None = None,
    log_format: str | None = None,
    correction: bool = False,
) -> RunSummary:
    """Load files without building (the published file changes at the next build or nightly); ``correction``: the
    files correct rows loaded earlier (``IngestOptions.correction``)."""
    with Run(store, settings, command, log_format) as run:
        run.options = replace(run.options, correction=correction)
        run.load(pairs, on_file)
    return run.summary


def run_reprocess(
    store: Store,
    settings: Settings,
    files: list[Path | str],
    on_file: OnFile | None = None,
    on_model: OnModel | None = None,
) -> RunSummary:
    """Load each file again under the settings in force (``pipeline.run.reprocess``), then build and publish. A file
    given as an ``s3://`` URL is its copy in the ledger's folder (``pipeline.storage.remote``), named by its URL."""
    from pipeline.run.reprocess import copied_from_object_storage, reprocess_file

    with Run(store, settings, "reprocess " + " ".join(str(f) for f in files)) as run:
        for item in files:
            if isinstance(item, str):  # a URL: the copy a nightly made of it
                local = copied_from_object_storage(run.con, store, item)
                if isinstance(local, FileResult):
                    run._file_done(local, on_file)
                    continue
                done = reprocess_file(run.con, local, store, run.summary.run_id, run.options)
                done = replace(done, path=item, message=done.message.replace(str(local), item))
            else:
                done = reprocess_file(run.con, item, store, run.summary.run_id, run.options)
            run._file_done(done, on_file)
        refresh_stale_raw_views(run.con)
        run.build_and_publish(on_model)
    return run.summary


def run_rollback(store: Store, settings: Settings, to: Path | None = None) -> tuple[Path, list[tuple[str, str]]]:
    """Publish an earlier snapshot again, and make it stick: the files loaded after it are taken back from the work
    file (``forget_file``; listed in ``meta.rolled_back_files``, which a nightly does not load again), so the next
    build publishes the snapshot's state plus only what is new. The run is recorded in ``meta.runs``. Returns the
    snapshot and the (kind, path) of the files taken back."""
    import duckdb

    from pipeline.storage.catalog import forget_file, restore_file

    snapshot = store.rollback_target(to)
    with Run(store, settings, f"rollback to {snapshot.name}") as run:
        snap = duckdb.connect(str(snapshot), read_only=True)
        try:
            kept = dict(snap.execute("SELECT file_hash, lake_file FROM meta.loaded_files").fetchall())
        finally:
            snap.close()
        con = run.con
        loaded = con.execute(
            "SELECT file_hash, kind, path, lake_file FROM meta.loaded_files ORDER BY load_seq"
        ).fetchall()
        if set(kept) - {h for h, _, _, _ in loaded}:
            raise UsageError(
                f"{snapshot.name} holds files that an earlier rollback took back: it cannot be published again "
                "(`costledger reprocess FILE` loads such a file again, then a nightly publishes it)"
            )
        later = [(h, kind, path) for h, kind, path, _ in loaded if h not in kept]
        # a file loaded again since the snapshot (``costledger reprocess``): its load as the snapshot holds it
        reloaded = [(h, kind) for h, kind, _, lake in loaded if h in kept and kept[h] != lake]
        _check_lake_files(store, snapshot, [kept[h] for h, _ in reloaded])
        con.execute("BEGIN TRANSACTION")
        try:
            for file_hash, kind, path in later:
                forget_file(con, store.lake, kind, file_hash)
                con.execute(
                    "INSERT INTO meta.rolled_back_files VALUES (?, ?, ?, current_localtimestamp(), ?)",
                    [file_hash, kind, path, snapshot.name],
                )
            for file_hash, kind in reloaded:
                forget_file(con, store.lake, kind, file_hash)
                restore_file(con, store.lake, snapshot, kind, file_hash)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        store.link_as_published(snapshot)
    return snapshot, [(kind, path) for _, kind, path in later]


def _check_lake_files(store: Store, snapshot: Path, lake_files: list[str | None]) -> None:
    """Refuse a rollback to a snapshot whose earlier load of a file loaded again is no longer in the lake."""
    missing = [f for f in lake_files if f and not (store.lake / f).is_file()]
    if missing:
        raise UsageError(
            f"{snapshot.name} reads lake file {missing[0]}, which is gone (a file loaded again before the lake kept "
            "its earlier load): it cannot be published again; `costledger reprocess FILE` and a nightly restore "
            "the file's rows"
        )


def run_build(store: Store, settings: Settings, on_model: OnModel | None = None) -> RunSummary:
    with Run(store, settings, "build") as run:
        run.build_and_publish(on_model)
    return run.summary


def run_selected_build(
    store: Store, settings: Settings, patterns: tuple[str, ...], on_model: OnModel | None = None
) -> RunSummary:
    """The selected models only, in the work file (``build --select``): nothing is published, since the other models
    were not built with them; the next ``build`` or nightly publishes a whole build."""
    with Run(store, settings, "build --select " + " ".join(patterns)) as run:
        run.build_only(patterns, on_model)
    return run.summary


def run_nightly(
    store: Store,
    settings: Settings,
    landing: Path,
    *,
    on_file: OnFile | None = None,
    on_model: OnModel | None = None,
    found: Landing | None = None,
    url: str | None = None,
) -> RunSummary:
    """Load every new file under ``landing/<kind>/``, build, publish (``found``: the folder already scanned; ``url``:
    the object-storage folder ``landing`` is a copy of, by which its files are named)."""
    found = found or scan_landing(landing)
    with Run(store, settings, f"nightly {url or landing}") as run:
        if url:
            run.options = replace(run.options, shown_as=(landing, url))
        shown = run.options.shown
        run.summary.unknown_entries = found.other_entries
        run.summary.outside_links = [shown(Path(p)) for p in found.outside_links]
        for name, nearest in found.unknown_folders:
            run.reject_folder(landing / name, nearest, on_file)
        for kind, path, why in found.not_read:
            run.not_read(kind, shown(Path(path)), why, on_file)
        for kind, name, why in found.rejected:
            run.reject(kind, name, why, on_file)
        run.load(found.pairs, on_file, landing)
        try:
            run.build_and_publish(on_model)
        except (ModelFailed, AuditFailed) as exc:
            raise run.take_back_loads(exc) from exc
    return run.summary
