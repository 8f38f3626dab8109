"""Incremental builds: folding new files into the request models gives what a full build of all files gives."""

from __future__ import annotations

import shutil
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from pipeline.transform import incremental
from pipeline.transform.build import discover
from pipeline.ingest.files import ingest_file
from scripts.marts_equal import copy_ledger
from tests.conftest import PRICE_MOONSHOT, ROOT, Ledger, request

#: every table a full build and an incremental one must agree on
COMPARED = [
    "intermediate.int_requests_priced",
    "intermediate.int_tasks_resolved",
    "intermediate.int_requests_monthly",
    "intermediate.int_route_volume_monthly",
    "intermediate.int_task_outcomes_monthly",
    "intermediate.int_cluster_requests_monthly",
    "intermediate.int_cluster_busy_monthly",
    "intermediate.int_requests_daily",
    "intermediate.int_cluster_requests_daily",
    "intermediate.int_cluster_busy_daily",
    "intermediate.int_task_retries",
    "intermediate.int_team_usage_daily",
    "intermediate.int_route_volume_daily",
    "marts.monthly_route_cost",
    "marts.monthly_self_hosted_cost",
    "marts.monthly_utilisation",
    "marts.monthly_break_even",
    "marts.monthly_reconciliation",
    "marts.monthly_sensitivity",
    "marts.monthly_team_usage",
]


def assert_same_as_full_build(led: Ledger, tmp_path: Path) -> None:
    """The tables of ``led``'s builds against those a build of them alone computes (``build --select``: each model
    whole, from every row the lake holds, without the incremental machinery), in a copy of the ledger."""
    led.con.execute("CHECKPOINT")
    folder = tmp_path / f"whole-{len(list(tmp_path.glob('whole-*')))}"
    folder.mkdir()
    copy_ledger(led.settings.db, folder)
    whole = Ledger(folder, led.settings)
    whole.build(*(f"+{table}" for table in COMPARED))
    for table in COMPARED:
        a = sorted(map(repr, led.con.execute(f"SELECT * FROM {table}").fetchall()))
        b = sorted(map(repr, whole.con.execute(f"SELECT * FROM {table}").fetchall()))
        assert a == b, f"{table}: incremental and full builds differ"
    whole.con.close()


def _cluster_charge(led: Ledger, until: str) -> None:
    """Cluster c1 on demand from 1 July to ``until``, 1,000 USD."""
    charge = {"charge_id": "c", "cluster_id": "c1", "charge_start": "2026-07-01T00:00:00Z", "charge_end": until}
    led.load("cluster-charges", [{**charge, "kind": "on_demand", "amount": "1000", "currency": "USD"}])


@pytest.mark.slow
def test_a_retried_task_crossing_midnight_at_month_end_moves_month_when_its_retry_arrives(ledger, tmp_path):
    ledger.load("prices", [PRICE_MOONSHOT])
    _cluster_charge(ledger, "2026-09-01T00:00:00Z")
    # attempt 1 of t1: a timeout from 23:59 on 31 July running 3 minutes into August (self-hosted)
    ledger.load(
        "requests",
        [
            request("r1", "t1", "2026-07-31T23:59:00Z", route="self_hosted", status="timeout", latency_ms=180_000),
            request("r9", "t9", "2026-07-15T10:00:00Z", cache_miss_input_tokens=1_000_000),  # an unrelated July task
        ],
    )
    ledger.build()
    first = ledger.one("SELECT month, accepted FROM intermediate.int_tasks_resolved WHERE task_id = 't1'")
    assert (str(first["month"]), first["accepted"]) == ("2026-07-01", False)
    # busy: 60 s in July (23:59-24:00) and 120 s in August (00:00-00:02)
    busy = dict(
        ledger.con.execute(
            "SELECT CAST(month AS VARCHAR), busy_ms FROM intermediate.int_cluster_busy_monthly"
        ).fetchall()
    )
    assert busy == {"2026-07-01": 60_000, "2026-08-01": 120_000}
    assert_same_as_full_build(ledger, tmp_path)

    # an unrelated August request inside r1's August minutes: only August is touched, yet its busy time must still
    # see July's r1 running into it: the union stays 00:00-00:02 = 120 s (10 s alone, if July's row were missed)
    ledger.load("requests", [request("r5", "t5", "2026-08-01T00:00:30Z", route="self_hosted", latency_ms=10_000)])
    ledger.build()
    assert ledger.one("SELECT busy_ms FROM intermediate.int_cluster_busy_monthly WHERE month = DATE '2026-08-01'") == {
        "busy_ms": 120_000
    }
    assert_same_as_full_build(ledger, tmp_path)

    # the retry arrives the next night, in August, and is accepted: t1 now belongs to August
    ledger.load(
        "requests",
        [
            request(
                "r2", "t1", "2026-08-01T00:10:00Z", route="self_hosted", attempt=2, latency_ms=30_000, accepted="true"
            )
        ],
    )
    p = incremental.plan(ledger.con, discover(), ledger.settings.batch_rows)
    assert not p.full and len(p.batches({"requests"})) == 1
    ledger.build()
    t1 = ledger.one(
        "SELECT month, accepted, attempts, accepted_request_id FROM intermediate.int_tasks_resolved "
        "WHERE task_id = 't1'"
    )
    assert (str(t1["month"]), t1["accepted"], t1["attempts"], t1["accepted_request_id"]) == (
        "2026-08-01",
        True,
        2,
        "r2",
    )
    # busy August: 120 s + 30 s (no overlap: 00:00-00:02 and 00:10-00:10:30)
    assert ledger.one("SELECT busy_ms FROM intermediate.int_cluster_busy_monthly WHERE month = DATE '2026-08-01'") == {
        "busy_ms": 150_000
    }
    assert_same_as_full_build(ledger, tmp_path)

    # a later decision (outcomes file) rejects t1: only its months are recomputed, and again equal to a full build
    ledger.load("outcomes", [{"task_id": "t1", "accepted": "false", "decided_at": "2026-08-02T09:00:00Z"}])
    ledger.build()
    assert ledger.one("SELECT accepted FROM intermediate.int_tasks_resolved WHERE task_id = 't1'") == {
        "accepted": False
    }
    assert_same_as_full_build(ledger, tmp_path)


def _days_recomputed(monkeypatch) -> list[list[str]]:
    """A spy on the days strategy: the days each days model recomputes, per model run ('all' on a full build)."""
    seen: list[list[str]] = []
    original = incremental.Days.run

    def run(self, con, p, run, audit, progress):  # type: ignore[no-untyped-def]
        seen.append(["all"] if p.full else [d.isoformat() for d in p.days])
        return original(self, con, p, run, audit, progress)

    monkeypatch.setattr(incremental.Days, "run", run)
    return seen


def _busy_by_day(led: Ledger) -> dict[str, int]:
    rows = led.con.execute("SELECT CAST(day AS VARCHAR), busy_ms FROM intermediate.int_cluster_busy_daily").fetchall()
    return {day[5:]: int(ms) for day, ms in rows}


def _team_usage(led: Ledger) -> dict[str, tuple[int, int, int]]:
    rows = led.con.execute(
        "SELECT route, requests, tasks, accepted_tasks FROM marts.monthly_team_usage WHERE team = '(none)'"
    ).fetchall()
    return {route: (requests, tasks, accepted) for route, requests, tasks, accepted in rows}


def _first_days(led: Ledger) -> dict[tuple[str, str], int]:
    # the days a task is counted on (a day with requests of already-counted tasks only has tasks = 0)
    query = "SELECT route, CAST(day AS VARCHAR), tasks FROM intermediate.int_team_usage_daily WHERE tasks > 0"
    rows = led.con.execute(query).fetchall()
    return {(route, day[5:]): tasks for route, day, tasks in rows}


@pytest.mark.slow
def test_a_late_day_recomputes_its_days_not_its_month(ledger, tmp_path, monkeypatch):
    """Day partitions: a late file recomputes the days its rows touch (every day a long request runs through), and
    the days of every attempt of a task whose attempts or decision changed; the month models add the days up. Team
    usage counts each task on its first day in the month, route and team, so it adds up by day too."""
    seen = _days_recomputed(monkeypatch)
    ledger.load("prices", [PRICE_MOONSHOT])
    _cluster_charge(ledger, "2026-08-01T00:00:00Z")
    hour = 3_600_000
    ledger.load(
        "requests",
        [
            # 10 Jul 22:00 for 50 h, to 13 Jul 00:00: 2 h on the 10th, 24 h on the 11th and on the 12th
            request("r1", "t1", "2026-07-10T22:00:00Z", route="self_hosted", latency_ms=50 * hour),
            request("r2", "t2", "2026-07-15T12:00:00Z", route="self_hosted", latency_ms=hour),
            request("r5", "t5", "2026-07-20T09:00:00Z"),  # an api task, first seen on the 20th
        ],
    )
    ledger.build()
    assert _busy_by_day(ledger) == {"07-10": 2 * hour, "07-11": 24 * hour, "07-12": 24 * hour, "07-15": hour}
    assert seen[-5:] == [["all"]] * 5  # the five days models, on the first (full) build
    assert _first_days(ledger) == {("self_hosted", "07-10"): 1, ("self_hosted", "07-15"): 1, ("api", "07-20"): 1}

    ledger.load(
        "requests",
        [
            # inside r1 on the 11th (the union stays 24 h), accepted
            request("r3", "t3", "2026-07-11T10:00:00Z", route="self_hosted", latency_ms=30_000, accepted="true"),
            # 14 Jul 22:00 for 4 h: 2 h on the 14th, 2 h on the 15th (after r2's 12:00-13:00: 3 h that day)
            request("r4", "t4", "2026-07-14T22:00:00Z", route="self_hosted", latency_ms=4 * hour),
            # a late retry of t5 dated before its first attempt: t5's first day moves from the 20th to the 18th
            request("r6", "t5", "2026-07-18T09:00:00Z", attempt=2),
        ],
    )
    ledger.build()
    # new rows' days (11; 14 and 15 for r4; 18) and the days of t5's earlier attempts (20)
    assert seen[-5:] == [["2026-07-11", "2026-07-14", "2026-07-15", "2026-07-18", "2026-07-20"]] * 5
    # every task counted once, on its first day: t1 10th, t3 11th, t4 14th, t2 15th; t5 now on the 18th, not the 20th
    assert _first_days(ledger) == {
        ("self_hosted", "07-10"): 1,
        ("self_hosted", "07-11"): 1,
        ("self_hosted", "07-14"): 1,
        ("self_hosted", "07-15"): 1,
        ("api", "07-18"): 1,
    }
    # self-hosted: 4 requests of 4 tasks, t3 accepted (the log says so); api: t5's 2 requests, one task, undecided
    assert _team_usage(ledger) == {"self_hosted": (4, 4, 1), "api": (2, 1, 0)}
    assert _busy_by_day(ledger) == {
        "07-10": 2 * hour,
        "07-11": 24 * hour,
        "07-12": 24 * hour,
        "07-14": 2 * hour,
        "07-15": 3 * hour,
    }
    # July: 2 + 24 + 24 + 2 + 3 = 55 h
    assert ledger.one("SELECT busy_ms FROM intermediate.int_cluster_busy_monthly") == {"busy_ms": 55 * hour}
    day11 = "SELECT requests, accepted_attempt_request_ms AS acc FROM intermediate.int_cluster_requests_daily "
    day11 += "WHERE day = DATE '2026-07-11'"
    assert ledger.one(day11) == {"requests": 1, "acc": 30_000}  # r1 counts on its start day, the 10th
    assert_same_as_full_build(ledger, tmp_path)

    # a decision rejects t3: no new request, but the day of t3's attempt is recomputed (its accepted time goes)
    ledger.load("outcomes", [{"task_id": "t3", "accepted": "false", "decided_at": "2026-07-20T09:00:00Z"}])
    ledger.build()
    assert seen[-5:] == [["2026-07-11"]] * 5
    assert ledger.one(day11) == {"requests": 1, "acc": 0}
    assert _team_usage(ledger) == {"self_hosted": (4, 4, 0), "api": (2, 1, 0)}
    assert_same_as_full_build(ledger, tmp_path)


@pytest.mark.slow
def test_nothing_new_recomputes_nothing_and_new_prices_rebuild_everything(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("r1", "t1", "2026-07-01T10:00:00Z", cache_miss_input_tokens=1_000_000)])
    ledger.build()
    p = incremental.plan(ledger.con, discover(), ledger.settings.batch_rows)
    assert (p.full, p.new_files, p.months) == (False, [], [])
    # a new price from 1 July (a new file) reprices the loaded request: 1,000,000 miss x $2 / 1e6 = $2
    ledger.load(
        "prices", [dict(PRICE_MOONSHOT, effective_from="2026-07-01T00:00:00Z", cache_miss_input_per_million="2.00")]
    )
    ledger.build()
    assert ledger.one("SELECT metered_cost_usd FROM intermediate.int_requests_priced") == {
        "metered_cost_usd": Decimal("2")
    }


@pytest.mark.slow
def test_batches_fold_files_a_few_rows_at_a_time_and_agree_with_one_pass(ledger, tmp_path):
    # batch_rows = 2: three files of 2 rows each are folded in three batches; task t1 spans the first and last
    ledger.settings = replace(ledger.settings, batch_rows=2)
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [
            request("a", "t1", "2026-07-01T10:00:00Z", status="error"),
            request("b", "t2", "2026-07-01T11:00:00Z", accepted="true"),
        ],
    )
    ledger.load(
        "requests",
        [
            request("c", "t3", "2026-07-02T10:00:00Z", accepted="false"),
            request("d", "t4", "2026-07-02T11:00:00Z", accepted="true"),
        ],
    )
    ledger.load(
        "requests",
        [
            request("e", "t1", "2026-07-03T10:00:00Z", attempt=2, accepted="true"),
            request("f", "t5", "2026-07-03T11:00:00Z"),
        ],
    )
    p = incremental.plan(ledger.con, discover(), ledger.settings.batch_rows)
    assert p.full and len(p.batches({"requests"})) == 3
    ledger.build()
    # accepted by the log: t1 (attempt e), t2, t4; t3 rejected; t5 undecided
    assert ledger.one("SELECT tasks, accepted_tasks, requests FROM marts.monthly_route_cost WHERE route = 'api'") == {
        "tasks": 5,
        "accepted_tasks": 3,
        "requests": 6,
    }
    assert_same_as_full_build(ledger, tmp_path)
    # then an incremental build of two batches: t3 (rejected in the first build) is retried and accepted in the
    # first new file, t6 spans both new files (an error, then accepted), t7 is new
    ledger.load(
        "requests",
        [
            request("g", "t3", "2026-07-04T10:00:00Z", attempt=2, accepted="true"),
            request("h", "t6", "2026-07-04T11:00:00Z", status="error"),
        ],
    )
    ledger.load(
        "requests",
        [
            request("i", "t6", "2026-07-05T10:00:00Z", attempt=2, accepted="true"),
            request("j", "t7", "2026-07-05T11:00:00Z", accepted="true"),
        ],
    )
    p = incremental.plan(ledger.con, discover(), ledger.settings.batch_rows)
    assert not p.full and len(p.batches({"requests"})) == 2
    ledger.build()
    # accepted: t1, t2, t4 as before, t3 (g), t6 (i), t7 = 6 of 7 tasks (t5 undecided); 10 requests
    assert ledger.one("SELECT tasks, accepted_tasks, requests FROM marts.monthly_route_cost WHERE route = 'api'") == {
        "tasks": 7,
        "accepted_tasks": 6,
        "requests": 10,
    }
    assert_same_as_full_build(ledger, tmp_path)


@pytest.mark.slow
def test_a_task_is_counted_once_per_team_and_once_per_route(ledger, tmp_path, monkeypatch):
    """Distinct tasks add up by day: a task is counted on one day per month, route and team (team usage) and on one
    day per month and route (route volume), also when a late retry from another team makes it a retried task."""
    lookups: list[list[str]] = []  # a spy: the keys models each lookup of keys serves
    original = incremental.Keys.lookup

    def lookup(con, p, group, batch, other_files):  # type: ignore[no-untyped-def]
        lookups.append([f.model.name for f in group])
        return original(con, p, group, batch, other_files)

    monkeypatch.setattr(incremental.Keys, "lookup", staticmethod(lookup))
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [request("r1", "t1", "2026-07-03T10:00:00Z", team="a"), request("r2", "t2", "2026-07-03T11:00:00Z", team="a")],
    )
    ledger.build()
    ledger.load(
        "requests",
        [
            # a retry of t1 by team b dated the day before its first attempt (the log accepts it)
            request("r3", "t1", "2026-07-02T10:00:00Z", team="b", attempt=2, accepted="true"),
            # a second attempt of t2, same day and team
            request("r4", "t2", "2026-07-03T12:00:00Z", team="a", attempt=2),
        ],
    )
    ledger.build()
    # one lookup of the batch's tasks and their earlier rows for both keys models (the first build was full)
    assert lookups == [["int_tasks_resolved", "int_task_retries"]]
    usage = ledger.con.execute(
        "SELECT team, requests, tasks, accepted_tasks FROM marts.monthly_team_usage WHERE route = 'api' ORDER BY team"
    ).fetchall()
    # team a: r1, r2, r4 = 3 requests of t1 and t2; t1 is accepted on api in July (r3), t2 is not decided
    # team b: r3 = 1 request of t1, accepted
    assert usage == [("a", 3, 2, 1), ("b", 1, 1, 1)]
    # the route counts t1 and t2 once each, not t1 once per team: 4 requests, 2 tasks
    assert ledger.one("SELECT requests, tasks FROM intermediate.int_route_volume_monthly WHERE route = 'api'") == {
        "requests": 4,
        "tasks": 2,
    }
    days = ledger.con.execute(
        "SELECT CAST(day AS VARCHAR), team, tasks, route_tasks FROM intermediate.int_team_usage_daily ORDER BY ALL"
    ).fetchall()
    # t1 is first seen in the route on the 2nd (team b), in team a on the 3rd; t2 on the 3rd
    assert days == [("2026-07-02", "b", 1, 1), ("2026-07-03", "a", 2, 1)]
    assert_same_as_full_build(ledger, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 2, 3, 19, 20, 21, 40, 60, 99, 100, 101, 1000])
def test_latency_percentiles_from_the_histogram_equal_quantile_disc(ledger, n):
    import random

    rnd = random.Random(n)
    latencies = [rnd.choice([100, 200, 250, 300, 1000, 5000, rnd.randint(1, 10_000)]) for _ in range(n)]
    ledger.load(
        # spread over the month's days: the monthly percentiles come from the days' histograms added up
        "requests",
        [
            request(f"r{i}", f"t{i}", f"2026-07-{1 + i % 28:02d}T10:00:00Z", latency_ms=ms)
            for i, ms in enumerate(latencies)
        ],
    )
    ledger.build("+intermediate.int_route_volume_monthly")
    got = ledger.one("SELECT p50_latency_ms, p95_latency_ms FROM intermediate.int_route_volume_monthly")
    want = ledger.one(
        "SELECT quantile_disc(latency_ms, 0.5) AS p50_latency_ms, quantile_disc(latency_ms, 0.95) AS p95_latency_ms "
        "FROM intermediate.int_requests_priced"
    )
    assert got == want
    # and by hand: the ceil(q x n)-th smallest value
    ordered = sorted(latencies)
    assert got["p50_latency_ms"] == ordered[-(-n * 50 // 100) - 1]
    assert got["p95_latency_ms"] == ordered[-(-n * 95 // 100) - 1]


@pytest.mark.slow
def test_sample_loaded_month_by_month_equals_one_nightly(ledger, tmp_path):
    sample = ROOT / "sample_data"
    for kind in ("prices", "hardware", "cluster-charges", "opex", "invoices"):
        for path in sorted((sample / kind).iterdir()):
            assert ingest_file(ledger.con, kind, path, ledger.store).status == "loaded"
    for month in ("2026-07", "2026-08", "2026-09"):
        for kind in ("requests", "outcomes"):
            for path in sorted((sample / kind).glob(f"*{month}*")):
                copy = tmp_path / path.name
                shutil.copy(path, copy)
                assert ingest_file(ledger.con, kind, copy, ledger.store).status == "loaded"
        ledger.build()
    assert_same_as_full_build(ledger, tmp_path)


@pytest.mark.slow
def test_a_changed_setting_the_request_models_read_rebuilds_them(ledger, tmp_path):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("r1", "t1", "2026-07-01T10:00:00Z", latency_ms=1000, accepted="true")])
    ledger.build()
    assert ledger.one("SELECT accepted, latency_violation FROM intermediate.int_tasks_resolved") == {
        "accepted": True,
        "latency_violation": False,
    }
    # an API SLO of 500 ms: the 1,000 ms accepted attempt is now a violation, with no new file loaded
    ledger.build(slo_ms_api=500)
    assert ledger.one("SELECT accepted, latency_violation FROM intermediate.int_tasks_resolved") == {
        "accepted": False,
        "latency_violation": True,
    }
    assert ledger.one(
        "SELECT accepted_tasks, latency_violations FROM marts.monthly_route_cost WHERE route = 'api'"
    ) == {"accepted_tasks": 0, "latency_violations": 1}
    assert_same_as_full_build(ledger, tmp_path)


@pytest.mark.slow
def test_a_review_rate_change_rebuilds_the_models_that_read_it_and_the_priced_requests_go_on(ledger, tmp_path):
    """Only the models whose rows depend on the review rate are computed again: the tasks (which price the review)
    and the models that read them; the priced requests and the models that read only them go on incrementally."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("r1", "t1", "2026-07-01T10:00:00Z", accepted="true")])
    ledger.load("outcomes", [{"task_id": "t1", "accepted": "true", "decided_at": "2026-07-01T11:00:00Z",
                              "review_minutes": "30"}])  # fmt: skip
    first = ledger.build(review_rate_per_hour_usd=Decimal("60"))
    assert set(first.rebuilt_in_full.values()) == {"no earlier build"}
    # 30 minutes at $60 an hour = $30
    assert ledger.one("SELECT review_cost_usd FROM intermediate.int_tasks_resolved") == {"review_cost_usd": 30}
    second = ledger.build(review_rate_per_hour_usd=Decimal("90"))
    tasks = "intermediate.int_tasks_resolved"
    assert second.rebuilt_in_full[tasks] == "setting review_rate_per_hour_usd changed"
    # every other model rebuilt reads the tasks, directly or through another model rebuilt
    assert all(
        why.startswith("it reads intermediate.") for name, why in second.rebuilt_in_full.items() if name != tasks
    )
    assert "intermediate.int_requests_priced" not in second.rebuilt_in_full
    assert "intermediate.int_workload_usage_hourly" not in second.rebuilt_in_full  # reads the priced requests only
    # 30 minutes at $90 an hour = $45
    assert ledger.one("SELECT review_cost_usd FROM intermediate.int_tasks_resolved") == {"review_cost_usd": 45}
    assert ledger.build().rebuilt_in_full == {}  # the same settings again: nothing rebuilt
    assert_same_as_full_build(ledger, tmp_path)


@pytest.mark.slow
def test_an_incremental_keys_model_audits_its_new_rows(ledger, monkeypatch):
    """A keys model's grain audit reads the rows a batch recomputes, before they are inserted (the
    keys' old rows deleted first), not the keys' rows of the whole table. A duplicate among them fails the build."""
    from pipeline.transform import build as build_module
    from pipeline.transform.build import AuditFailed

    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("r1", "t1", "2026-07-03T10:00:00Z")])
    ledger.build()
    ledger.load(
        "requests",
        [request("r2", "t1", "2026-07-03T11:00:00Z", attempt=2), request("r3", "t3", "2026-07-04T09:00:00Z")],
    )
    real = build_module.grain_audit_sql
    audited: list[tuple[str, str]] = []  # a spy: (model, the rows it audits over)

    def counted(model, where="true", rows=None):  # type: ignore[no-untyped-def]
        # the spy's query reports the number of rows audited, as a "duplicate" the build then lists
        audited.append((model.name, rows or model.qualified))
        return f"SELECT 'audited', count(*) FROM {rows}" if rows else real(model, where, rows)

    monkeypatch.setattr(build_module, "grain_audit_sql", counted)
    with pytest.raises(AuditFailed) as failed:
        ledger.build()
    # t1 (its second attempt) and t3 are recomputed: 2 tasks; t1 is retried (2 attempts), t3 is not: 1 retry row
    assert "int_tasks_resolved: grain (task_id) not unique, e.g. ('audited', 2)" in str(failed.value)
    assert "int_task_retries: grain (task_id, month, route, team) not unique, e.g. ('audited', 1)" in str(failed.value)
    # the keys models were audited once each, over their inserted rows (the counts above), never their whole tables
    keys_audits = [a for a in audited if a[0] in ("int_tasks_resolved", "int_task_retries")]
    assert [m for m, _ in keys_audits] == ["int_tasks_resolved", "int_task_retries"]
    assert all(rows != f"intermediate.{m}" for m, rows in keys_audits)

    # a model that wrote one of its new rows twice: the audit of the new rows finds it and the build rolls back
    def doubled(model, where="true", rows=None):  # type: ignore[no-untyped-def]
        if rows is not None and model.name == "int_tasks_resolved":
            rows = f"(SELECT * FROM {rows} UNION ALL (SELECT * FROM {rows} LIMIT 1))"
        return real(model, where, rows)

    monkeypatch.setattr(build_module, "grain_audit_sql", doubled)
    with pytest.raises(AuditFailed, match=r"int_tasks_resolved: grain \(task_id\) not unique"):
        ledger.build()
    # without the fault the same build passes
    monkeypatch.setattr(build_module, "grain_audit_sql", real)
    ledger.build()
    assert ledger.one("SELECT count(*) AS n FROM intermediate.int_tasks_resolved")["n"] == 2


def _singles(led: Ledger) -> list[tuple[str, str]]:
    """The single-attempt tasks team usage read last: (day, route), sorted."""
    query = "SELECT CAST(single_day AS VARCHAR), route FROM scoped.singles_of_days ORDER BY ALL"
    return led.con.execute(query).fetchall()


def _accepted(led: Ledger) -> list[tuple[str, str, str | None]]:
    """The accepted tasks the clusters' request time read last: (accepted day, route, cluster), sorted."""
    query = "SELECT CAST(accepted_day AS VARCHAR), route, accepted_cluster_id FROM scoped.accepted_of_days ORDER BY ALL"
    return led.con.execute(query).fetchall()


@pytest.mark.slow
def test_a_day_model_reads_the_tasks_of_its_days_only(ledger, tmp_path):
    """Team usage reads the single-attempt tasks of the touched days (by their attempt's day) and the
    retried tasks in the range of the touched days' retried task ids; the clusters' accepted time the accepted tasks
    whose accepted attempt is on a touched day (by that attempt's day). All still equal a full build, also when a late
    retry widens the range to old tasks."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [request("r1", "a1", "2026-07-01T10:00:00Z"), request("r2", "a2", "2026-07-01T11:00:00Z", route="self_hosted")],
    )
    ledger.build()
    ledger.load(
        "requests",
        [
            request("r3", "b1", "2026-07-02T10:00:00Z", accepted="true"),
            request("r4", "b2", "2026-07-02T11:00:00Z", accepted="true"),
        ],
    )
    ledger.build()
    # the touched day is 2 July: its single-attempt tasks b1, b2 (a1 and a2 are on 1 July); no retried task
    assert _singles(ledger) == [("2026-07-02", "api"), ("2026-07-02", "api")]
    assert ledger.con.execute("SELECT task_id FROM scoped.tasks_of_days").fetchall() == []
    # the accepted tasks whose accepted attempt is on 2 July: b1 and b2 (a1, a2 are undecided)
    assert _accepted(ledger) == [("2026-07-02", "api", None), ("2026-07-02", "api", None)]
    assert_same_as_full_build(ledger, tmp_path)
    # a retry of a2 (self-hosted, accepted) on 2 July: the days of a2 (1 and 2 July) are touched; the singles of both
    # days are a1, b1, b2, all api (a2, self-hosted, has two attempts now), the retried tasks in the range a2..a2
    ledger.load(
        "requests", [request("r5", "a2", "2026-07-02T12:00:00Z", route="self_hosted", attempt=2, accepted="true")]
    )
    ledger.build()
    assert _singles(ledger) == [("2026-07-01", "api"), ("2026-07-02", "api"), ("2026-07-02", "api")]
    tasks = ledger.con.execute("SELECT task_id FROM scoped.tasks_of_days ORDER BY ALL").fetchall()
    assert tasks == [("a2",)]
    # the accepted tasks of 1 and 2 July: b1, b2 and now a2, by its accepted attempt r5 (2 July, cluster c1)
    assert _accepted(ledger) == [
        ("2026-07-02", "api", None),
        ("2026-07-02", "api", None),
        ("2026-07-02", "self_hosted", "c1"),
    ]
    day2 = (
        "SELECT accepted_attempt_request_ms AS ms FROM intermediate.int_cluster_requests_daily WHERE day = '2026-07-02'"
    )
    assert ledger.one(day2) == {"ms": 1000}  # r5's latency (the request() default: 1,000 ms)
    assert_same_as_full_build(ledger, tmp_path)


@pytest.mark.slow
def test_a_retry_or_an_outcome_of_an_old_task_finds_its_earlier_rows(ledger, tmp_path):
    """The keys models look for their keys' earlier rows only where the batch's task ids can be (the range of the
    batch's keys); a retry of an old task, or an outcome for one, widens that range to it: every build still
    equals a full build."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("r1", "a1", "2026-07-01T10:00:00Z"), request("r2", "a2", "2026-07-01T11:00:00Z")])
    ledger.build()
    ledger.load("requests", [request("r3", "b1", "2026-07-02T10:00:00Z"), request("r4", "b2", "2026-07-02T11:00:00Z")])
    ledger.build()
    assert_same_as_full_build(ledger, tmp_path)
    # a retry of a1 (the least task id) with a new task c1: the range a1..c1 finds a1's first attempt
    ledger.load(
        "requests",
        [request("r5", "a1", "2026-07-03T10:00:00Z", attempt=2), request("r6", "c1", "2026-07-03T11:00:00Z")],
    )
    ledger.build()
    assert ledger.one("SELECT attempts FROM intermediate.int_tasks_resolved WHERE task_id = 'a1'") == {"attempts": 2}
    assert_same_as_full_build(ledger, tmp_path)
    # an outcome for a2 with a day of new requests d1: the range a2..d1 finds a2's attempt
    ledger.load("outcomes", [{"task_id": "a2", "accepted": "false", "decided_at": "2026-07-04T09:00:00Z"}])
    ledger.load("requests", [request("r7", "d1", "2026-07-04T10:00:00Z")])
    ledger.build()
    a2 = "SELECT accepted FROM intermediate.int_tasks_resolved WHERE task_id = 'a2'"
    assert ledger.one(a2) == {"accepted": False}
    assert_same_as_full_build(ledger, tmp_path)


@pytest.mark.slow
def test_only_keys_with_earlier_input_rows_are_looked_for_in_the_keys_models(ledger, tmp_path, monkeypatch):
    """A keys model's rows for a key come from that key's input rows alone, so a key without earlier
    rows (a new task) has none to delete: the delete, a scan of the whole table, looks for the keys with earlier rows
    of the append model (a retry) or of another input (an outcome loaded before) only, and is skipped when there
    are none. Every build still equals a full build."""
    seen: list[list[str]] = []
    real_clear = incremental.Keys.clear

    def clear(self, con):  # type: ignore[no-untyped-def]
        # the keys looked for in the models' tables, noted before the scratch tables are dropped (once per group)
        if con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'old_keys'").fetchall()[0][0]:
            seen.append([k for (k,) in con.execute("SELECT task_id FROM scoped.old_keys ORDER BY ALL").fetchall()])
        real_clear(self, con)

    monkeypatch.setattr(incremental.Keys, "clear", clear)
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("r1", "a1", "2026-07-01T10:00:00Z"), request("r2", "a2", "2026-07-01T11:00:00Z")])
    ledger.build()  # full: no lookup
    ledger.load("requests", [request("r3", "b1", "2026-07-02T10:00:00Z"), request("r4", "b2", "2026-07-02T11:00:00Z")])
    ledger.build()
    assert seen[-1] == []  # two new tasks: nothing to delete
    assert_same_as_full_build(ledger, tmp_path)
    # a retry of a1 (earlier rows in the request log) beside a new task c1
    ledger.load(
        "requests",
        [request("r5", "a1", "2026-07-03T10:00:00Z", attempt=2), request("r6", "c1", "2026-07-03T11:00:00Z")],
    )
    ledger.build()
    assert seen[-1] == ["a1"]
    assert_same_as_full_build(ledger, tmp_path)
    # a decision for b2 (no new request): its key has earlier request rows
    ledger.load("outcomes", [{"task_id": "b2", "accepted": "true", "decided_at": "2026-07-04T09:00:00Z"}])
    ledger.build()
    assert seen[-1] == ["b2"]
    assert ledger.one("SELECT accepted FROM intermediate.int_tasks_resolved WHERE task_id = 'b2'") == {"accepted": True}
    assert_same_as_full_build(ledger, tmp_path)
    # a decision for d1 before any of its requests, then its first request: an earlier row of another input
    ledger.load("outcomes", [{"task_id": "d1", "accepted": "false", "decided_at": "2026-07-05T09:00:00Z"}])
    ledger.build()
    ledger.load("requests", [request("r7", "d1", "2026-07-05T08:00:00Z")])
    ledger.build()
    assert seen[-1] == ["d1"]
    assert ledger.one("SELECT accepted FROM intermediate.int_tasks_resolved WHERE task_id = 'd1'") == {
        "accepted": False
    }
    assert ledger.one("SELECT count(*) AS n FROM intermediate.int_tasks_resolved") == {"n": 6}
    assert_same_as_full_build(ledger, tmp_path)


@pytest.mark.slow
def test_a_change_to_a_macro_rebuilds_the_models_that_call_it_and_a_comment_does_not(ledger, tmp_path):
    """The macros are part of what the incremental models compute: a change of meaning in a macro rebuilds in full
    the incremental models that call it (and those that read them); a comment or a layout change rebuilds nothing,
    nor does a change to a macro no incremental model calls."""
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load("requests", [request("r1", "t1", "2026-07-01T10:00:00Z", cache_miss_input_tokens=10)])
    ledger.build()
    sql = tmp_path / "sql"
    shutil.copytree(ROOT / "sql", sql)

    def rebuilt() -> dict[str, str]:
        return incremental.plan(ledger.con, discover(sql), ledger.settings.batch_rows).rebuilt

    assert rebuilt() == {}  # the same SQL in another folder
    macros = sql / "macros.sql"
    text = macros.read_text(encoding="utf-8")
    macros.write_text("-- a note\n" + text.replace("left(md5(", "left(\n    md5("), encoding="utf-8")
    assert rebuilt() == {}
    # the break-even verdict is a mart's: no incremental model calls it
    macros.write_text(text.replace("THEN 'never_breaks_even'", "THEN 'never'"), encoding="utf-8")
    assert rebuilt() == {}
    # hash_key draws the task groups of the API waste's bootstrap, an incremental model read by none
    macros.write_text(text.replace("left(md5(CAST(x AS VARCHAR)), 15)", "left(md5(CAST(x AS VARCHAR)), 14)"))
    assert rebuilt() == {"intermediate.int_api_task_groups_monthly": "a macro it calls changed"}
