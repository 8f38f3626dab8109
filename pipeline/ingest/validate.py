"""Running a kind's Great Expectations suite on a file's typed rows.

GX Core 1.x validates a pandas batch (it cannot validate DuckDB through
duckdb_engine: every expectation "fails" with an exception). The GX context is
ephemeral, created once per process, with progress bars and analytics off; the
import (~3-5 s) happens only when files are to be validated, so ``--help`` stays instant.
GX runs in a worker process of its own (``gx_worker``), beside DuckDB's work on the next file.

The caller gives the rows and, per check, the lines its DuckDB compilation flagged;
``validate`` returns nothing when GX agrees and raises ``ValidationPipelineError``
when GX raised an exception or disagrees (a bug in the pipeline, not bad data).
"""

from __future__ import annotations

import atexit
import datetime as dt
import os
from concurrent.futures import Executor
from typing import Any
from pipeline.base.errors import CostledgerError

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

_CONTEXT: dict[str, Any] = {}
_WORKER: list[Executor] = []


def gx_worker() -> Executor:
    """The one process GX runs in (started on first use, spawned: nothing of the caller's DuckDB state is copied;
    one validation at a time uses its GX context). A file's validation overlaps DuckDB's work on the next file.

    A process, not a thread: GX is Python from end to end and held the GIL most of the time it ran, so every
    statement the ingest thread sent to DuckDB waited up to a switch interval (5 ms) for the GIL on its return,
    some 25 statements a file (same files, alternated: the 1 M nightly 16.6 -> 14.0 s, the 10 M one 38.8 -> 36.9
    s). See ``_gx_process_started`` for how the process lives and ends."""
    if not _WORKER:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        context = multiprocessing.get_context("spawn")
        atexit.register(stop_worker)
        _WORKER.append(
            ProcessPoolExecutor(
                max_workers=1, mp_context=context, initializer=_gx_process_started, initargs=(os.getpid(),)
            )
        )
    return _WORKER[0]


def stop_worker() -> None:
    """When the command ends (and at exit): stop GX's process and let go of the pool while the interpreter is whole
    (a pool collected during its teardown prints an ignored exception). A call still running is not waited for: no
    verdict it could give is read any more, and a command that started GX early (``pipeline.cli.entry``) and then
    failed, or found no new file, would otherwise wait for GX's import (2-3.5 s) before exiting. ``entry`` calls it
    itself: an atexit hook runs after ``concurrent.futures`` has already waited for the running call."""
    for pool in _WORKER:
        # a call still queued or running (the warm-up's import, a check abandoned by a failed run) is stopped with its
        # process; an idle process is shut down as usual (terminating one blocked on its work queue leaks the queue's
        # semaphore, and Python says so at exit). ProcessPoolExecutor has no public way to stop a running call before
        # Python 3.14 (terminate_workers), hence its private fields, read defensively.
        if getattr(pool, "_pending_work_items", None):
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
    _WORKER.clear()
    _CONTEXT.pop("warming", None)  # the next warm_up starts a new process


def _gx_process_started(caller: int) -> None:
    """In GX's process, first: ignore Ctrl-C (the run handles it, letting the check in progress finish); write
    nothing to the caller's stdout and stderr (GX's results come back through the future; a pipe the caller's own
    caller reads must close when the caller ends); and end as soon as the caller is gone (a run killed with
    SIGKILL leaves no GX process behind: the process's work queue, which it holds both ends of, never closes)."""
    import signal
    import threading
    import time

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)

    def watch() -> None:
        while os.getppid() == caller:
            time.sleep(0.2)
        os._exit(0)

    threading.Thread(target=watch, name="gx-caller-watch", daemon=True).start()


def warm_up() -> None:
    """Start GX's process, import GX and make its context there now (~3-5 s, once per run), overlapping whatever
    the caller does next (ingest calls it when a file is new, before reading and checking it)."""
    if "warming" not in _CONTEXT:
        _CONTEXT["warming"] = gx_worker().submit(_warm)


class ValidationPipelineError(CostledgerError, RuntimeError):
    """GX could not evaluate an expectation, or its verdict differs from the SQL rules."""


def _warm() -> None:
    _batch_definition()  # the batch definition stays in GX's process (it does not pickle)


def _batch_definition() -> Any:
    if "batch" not in _CONTEXT:
        from schemas.expectations import import_gx

        gx = import_gx()
        ProgressBarsConfig = gx.data_context.types.base.ProgressBarsConfig

        ctx = gx.get_context(mode="ephemeral")
        ctx.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
        asset = ctx.data_sources.add_pandas("costledger").add_dataframe_asset("rows")
        _CONTEXT["ctx"] = ctx
        _CONTEXT["batch"] = asset.add_batch_definition_whole_dataframe("all rows")
    return _CONTEXT["batch"]


def _raised(exception_info: Any) -> str | None:
    """The message of an exception GX caught, if any (exception_info is flat or keyed by metric)."""
    if not exception_info:
        return None
    infos = [exception_info] if "raised_exception" in exception_info else list(exception_info.values())
    for info in infos:
        if isinstance(info, dict) and info.get("raised_exception"):
            return str(info.get("exception_message") or "unknown GX exception")
    return None


def validate_rows(
    kind: str, rows: Any, timestamps: list[str], sql_flags: dict[str, set[int]], where: str, bounds: Any = None
) -> int:
    """``validate`` on rows fetched from DuckDB as an Arrow table: they become the pandas frame GX reads here, in
    GX's process, off the path of the file's DuckDB work (the same frame DuckDB's ``.df()`` makes, through DuckDB's
    own conversion in a connection of this process); ``timestamps``: the columns given to GX as nanosecond datetimes
    (GX compares those vectorised, microsecond ones row by row, ~10x slower). An error GX itself raises comes back
    as a ``ValidationPipelineError`` naming the file (its own exception classes need not pickle)."""
    import duckdb
    import pyarrow as pa

    if "duckdb" not in _CONTEXT:
        _CONTEXT["duckdb"] = duckdb.connect()
    frame = _CONTEXT["duckdb"].from_arrow(rows).df()
    for name in timestamps:
        frame[name] = frame[name].astype("datetime64[ns]")
    # DuckDB hands DECIMALs to pandas as float64, where 1e12 + 1e-12 is 1e12: GX would compare other values than
    # the SQL rules do and disagree at every bound. Exact Python Decimals compare exactly, as DECIMAL does in SQL.
    for name, typ in zip(rows.schema.names, rows.schema.types):
        if pa.types.is_decimal(typ):
            frame[name] = rows.column(name).to_pandas()
    try:
        return validate(kind, frame, sql_flags, where, bounds)
    except ValidationPipelineError:
        raise
    except Exception as exc:
        raise ValidationPipelineError(f"{where}: Great Expectations failed: {type(exc).__name__}: {exc}") from None


def validate(kind: str, frame: Any, sql_flags: dict[str, set[int]], where: str, bounds: Any = None) -> int:
    """Validate ``frame`` (pandas, with a ``_line`` column) with the kind's suite; returns rows validated.

    ``sql_flags`` maps each check name to the lines the DuckDB compilation flagged among these rows.
    """
    from schemas.expectations import Bounds, gx_suite

    bounds = bounds or Bounds()

    if len(frame) == 0:
        return 0
    ctx_batch = _batch_definition()
    ctx = _CONTEXT["ctx"]
    # the suite is built once per kind and day; its "not in the future" bound is the end of tomorrow (UTC),
    # the same instant as the SQL compilation's CAST(current_date AS TIMESTAMP) + INTERVAL 2 DAY
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None, hour=0, minute=0, second=0, microsecond=0)
    key = ("suite", kind, now, bounds)
    if key not in _CONTEXT:
        _CONTEXT[key] = ctx.suites.add_or_update(gx_suite(kind, now + dt.timedelta(days=2), bounds))
    suite = _CONTEXT[key]
    batch = ctx_batch.get_batch(batch_parameters={"dataframe": frame})
    if not any(sql_flags.values()):
        # the SQL rules flagged no sampled row: GX's yes/no per expectation is the whole comparison (no expectation
        # has ``mostly``, so success means no unexpected row), at half the cost of listing the unexpected rows
        # (measured 0.13 against 0.26 s a file); anything but a clean pass is compared line by line below
        quick = batch.validate(suite, result_format={"result_format": "BOOLEAN_ONLY"})
        if all(r.success for r in quick.results):  # an expectation GX could not evaluate is not a success
            return len(frame)
    result = batch.validate(
        suite, result_format={"result_format": "COMPLETE", "unexpected_index_column_names": ["_line"]}
    )
    for r in result.results:
        name = r.expectation_config.meta["check"]
        problem = _raised(r.exception_info)
        if problem:
            raise ValidationPipelineError(f"{where}: Great Expectations could not evaluate {name}: {problem}")
        gx_lines = {int(u["_line"]) for u in (r.result.get("unexpected_index_list") or [])}
        sql_lines = sql_flags.get(name, set())
        if gx_lines != sql_lines:
            only_gx = sorted(gx_lines - sql_lines)[:5]
            only_sql = sorted(sql_lines - gx_lines)[:5]
            raise ValidationPipelineError(
                f"{where}: check {name}: Great Expectations and the SQL rules disagree "
                f"(lines only GX flags: {only_gx}; only SQL flags: {only_sql})"
            )
    return len(frame)
