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
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from pipeline.transform.build import AuditFailed, ModelFailed, build, check_lake, publication
from pipeline.storage.catalog import init_ledger, refresh_stale_raw_views
from pipeline.base.errors import CostledgerError, UsageError
from pipeline.base.faults import crashpoint
from pipeline.ingest.files import FileResult, IngestOptions, loaded_identities
from pipeline.ingest.loader import FileLoader
from pipeline.ingest.landing import KIND_ORDER, Landing, scan_landing
from pipeline.storage.lake import HashAhead
from pipeline.transform.state import build_inputs, last_build, record_build
from pipeline.storage.remote_lake import push_lake, restore_lake
from pipeline.base.query import run_query
from pipeline.run.alerts import alert_payload, post_alerts, new_anomalies, new_budgets, record_alerted
from pipeline.run.summary import RunSummary
from pipeline.base.fileformats import METRIC_KINDS
from pipeline.base.settings import Settings
from pipeline.storage.store import Store


OnFile = Callable[[FileResult], None]
OnModel = Callable[[str], None]


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
                if self.summary.lake_restored:  # the raw views were made before the files came back
                    init_ledger(self.con, self.store.lake)
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
        quarantined = self._quarantined_loads()
        again: list[tuple[str, Path]] = []
        try:
            with HashAhead(ahead, "seen") as hashes:
                i, clusters_known = 0, False
                while i < len(todo):
                    (kind, path), identity = todo[i]
                    if kind in METRIC_KINDS and not clusters_known:  # the files before (charges, requests) committed
                        loader.drain()
                        loader.options = self.options = self._with_only_cluster(self.options)
                        clusters_known = True
                    if kind == "prices":  # a price map is compared with the prices in force, the one before included
                        loader.drain()
                        loader.options = self.options = self._with_prices_in_force(self.options)
                    if self._read_again(quarantined.get((kind, identity)), kind, path):
                        again.append((kind, path))
                        i += 1
                    elif loader.submit(kind, path, identity, hashes):
                        i += 1
                loader.drain()
            for kind, path in again:
                self._file_done(self._reread(kind, path), on_file)
            refresh_stale_raw_views(self.con)  # the raw views of the kinds loaded, once per run
        except BaseException:
            loader.abort()
            raise

    def _quarantined_loads(self) -> dict[tuple[str, str], tuple[str, str]]:
        """(kind, identity) -> (content hash, the settings it was read under) of each loaded file with rows
        quarantined for something other than being an identical duplicate."""
        rows = self.con.execute(
            "SELECT kind, relative_path, file_hash, read_with FROM meta.loaded_files AS l WHERE read_with IS NOT NULL "
            "AND relative_path IS NOT NULL AND EXISTS (SELECT 1 FROM meta.quarantine AS q WHERE q.file_hash = "
            "l.file_hash AND NOT starts_with(q.reason, 'identical duplicate'))"
        ).fetchall()
        return {(kind, identity): (file_hash, read_with) for kind, identity, file_hash, read_with in rows}

    def _read_again(self, loaded: tuple[str, str] | None, kind: str, path: Path) -> bool:
        """Whether the landing file at ``path``, of ``kind``, is one loaded before with rows quarantined under
        settings that have changed since for its kind (then it is read again: the change may mend them)."""
        if loaded is None or loaded[1] == self.options.reading_settings(kind):
            return False
        from pipeline.ingest.recognise import landed_hash
        from pipeline.storage.lake import file_sha256

        return landed_hash(kind, path, file_sha256(path)) == loaded[0]

    def _reread(self, kind: str, path: Path) -> FileResult:
        from pipeline.run.reprocess import reprocess_file

        if kind == "prices":
            self.options = self._with_prices_in_force(self.options)
        done = reprocess_file(self.con, path, self.store, self.summary.run_id, self.options)
        if done.status != "loaded":
            return done
        why = "read again: rows of it were quarantined and the settings for its kind have changed since"
        return replace(done, message=f"{why}; {done.message}" if done.message else why)

    def _with_prices_in_force(self, options: IngestOptions) -> IngestOptions:
        """``options`` with the prices in force now (``sql/queries/prices_in_force.sql``) and today's date: what a
        LiteLLM price map, which carries no dates, is read against."""
        refresh_stale_raw_views(self.con, ["prices"])
        names, rows = run_query(self.con, "prices_in_force")
        in_force = {}
        for row in rows:
            r = dict(zip(names, row))
            in_force[(r["provider"], r["model"], r["service_tier"], str(r["min_input_tokens"]))] = r
        return replace(
            options, prices_in_force=in_force, load_day=options.load_day or datetime.now(timezone.utc).date()
        )

    def _with_only_cluster(self, options: IngestOptions) -> IngestOptions:
        """``options`` with the ledger's only cluster (``sql/queries/ledger_clusters.sql``), when it has exactly one
        and no [[metrics_clusters]] entry names another: what a metrics series naming no cluster belongs to."""
        refresh_stale_raw_views(self.con)
        known = {c for (c,) in run_query(self.con, "ledger_clusters")[1]} | {
            m.cluster_id for m in options.metrics_clusters
        }
        return replace(options, only_cluster=next(iter(known)) if len(known) == 1 else None)

    def _file_done(self, result: FileResult, on_file: OnFile | None) -> None:
        self.summary.files.append(result)
        self._step("ingest", result.path, result.seconds, result.rows_in)
        crashpoint("run.file_done")
        if on_file:
            on_file(result)

    def build_only(self, selection: tuple[str, ...] = (), on_model: OnModel | None = None) -> None:
        """Build (``selection``: only the models it names), each model's time a step of the run."""
        record_build(self.con, None)  # the work file is about to hold a build no snapshot has yet
        self.summary.build = build(self.con, self.settings, self.store, progress=on_model, selection=selection)
        for model, seconds in self.summary.build.timings:
            self._step("build", model, seconds, None)

    def build_and_publish(self, on_model: OnModel | None = None, *, unless_unchanged: bool = False) -> None:
        """Build and publish; with ``unless_unchanged`` (a nightly), nothing when this run loaded nothing and the
        build's inputs (models, settings, engine, files loaded) are those of the last build published."""
        inputs = build_inputs(self.con, self.settings.sql_rows(), self.settings.engine_name)
        if unless_unchanged and self._unchanged_since_published(inputs):
            # the lake is still checked every night: a lake file gone is named now, not at the next build
            check_lake(self.con, self.store, rehash=lambda *_: False)
            self.summary.nothing_new = True
            self._outcomes()
            self._send_alerts()
            return
        self.build_only(on_model=on_model)
        self._outcomes()
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
        record_build(self.con, inputs, self.summary.run_id)
        self._step("publish", self.summary.published, time.perf_counter() - t, None)
        self._send_alerts()

    def _unchanged_since_published(self, inputs: str) -> bool:
        """Nothing loaded, repaired or rejected (a rejection is news readers see in the published file), the
        published file there, and the build's inputs those of the last build published."""
        changed = any(f.status in ("loaded", "repaired", "rejected") for f in self.summary.files)
        return not changed and self.store.published.exists() and last_build(self.con) == inputs

    def _outcomes(self) -> None:
        """What the marts say the run must warn of: every month that does not reconcile (changed by this run or not:
        a mismatch that persists keeps its exit code, 4, on every run until it is mended, so that a scheduler sees it
        each night), unpriced requests, budgets, anomalies, name variants, meter samples set aside."""
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
                run.options = run._with_prices_in_force(run.options)  # a price map keeps its dates (cheap: a query)
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
            run.build_and_publish(on_model, unless_unchanged=True)
        except (ModelFailed, AuditFailed) as exc:
            raise run.take_back_loads(exc) from exc
    return run.summary
