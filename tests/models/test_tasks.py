"""Tasks, attempts and outcomes: every attempt costs, only accepted tasks count."""

import pytest
from decimal import Decimal

from tests.conftest import PRICE_MOONSHOT, request

#: the models these tests read, each with what it reads: the build runs only those
READS = ("+intermediate.int_tasks_resolved", "+marts.monthly_break_even", "+marts.monthly_route_cost")


def test_task_accepted_on_third_attempt_after_error_and_timeout(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [
            # error: 100,000 miss x $3 / 1e6 = $0.30
            request("a1", "t1", "2026-07-01T10:00:00Z", attempt=1, status="error", cache_miss_input_tokens=100_000),
            # timeout: $0.30 + 500 output x $15 / 1e6 = $0.0075 -> $0.3075
            request(
                "a2",
                "t1",
                "2026-07-01T10:05:00Z",
                attempt=2,
                status="timeout",
                cache_miss_input_tokens=100_000,
                output_tokens=500,
                latency_ms=180_000,
            ),
            # ok: $0.30 + 2,000 output x $15 / 1e6 = $0.03 -> $0.33
            request(
                "a3",
                "t1",
                "2026-07-01T10:10:00Z",
                attempt=3,
                status="ok",
                cache_miss_input_tokens=100_000,
                output_tokens=2000,
            ),
        ],
    )
    # no request_id: the accepted attempt is the task's last 'ok' attempt (a3)
    ledger.load("outcomes", [{"task_id": "t1", "accepted": "true", "decided_at": "2026-07-01T11:00:00Z"}])
    ledger.build(*READS)
    task = ledger.one("SELECT accepted, accepted_request_id, attempts FROM intermediate.int_tasks_resolved")
    assert task == {"accepted": True, "accepted_request_id": "a3", "attempts": 3}
    row = ledger.one(
        "SELECT requests, tasks, accepted_tasks, cost_usd, cost_per_accepted_task_usd "
        "FROM marts.monthly_route_cost WHERE route = 'api'"
    )
    # all three attempts costed: 0.30 + 0.3075 + 0.33 = 0.9375, for one accepted task
    assert row == {
        "requests": 3,
        "tasks": 1,
        "accepted_tasks": 1,
        "cost_usd": Decimal("0.9375"),
        "cost_per_accepted_task_usd": Decimal("0.9375"),
    }


@pytest.mark.slow
def test_month_without_accepted_tasks_gives_null_not_an_error(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [
            request("j", "t-july", "2026-07-10T10:00:00Z", cache_miss_input_tokens=1_000_000),  # $3.00
            request("a", "t-aug", "2026-08-10T10:00:00Z", cache_miss_input_tokens=1_000_000),  # $3.00
        ],
    )
    ledger.load(
        "outcomes",
        [
            {"task_id": "t-july", "accepted": "true", "decided_at": "2026-07-10T12:00:00Z"},
            {"task_id": "t-aug", "accepted": "false", "decided_at": "2026-08-10T12:00:00Z", "reason": "wrong"},
        ],
    )
    ledger.build(*READS)
    rows = {
        str(r["month"]): r
        for r in ledger.rows(
            "SELECT month, accepted_tasks, cost_usd, cost_per_accepted_task_usd FROM marts.monthly_route_cost WHERE "
            "route = 'api'"
        )
    }
    assert rows["2026-07-01"]["cost_per_accepted_task_usd"] == Decimal("3.00")
    # August: $3.00 spent, nothing accepted -> NULL cost per accepted task
    assert rows["2026-08-01"]["accepted_tasks"] == 0
    assert rows["2026-08-01"]["cost_usd"] == Decimal("3.00")
    assert rows["2026-08-01"]["cost_per_accepted_task_usd"] is None
    be = ledger.one(
        "SELECT api_cost_per_accepted_task_usd, break_even_accepted_tasks FROM marts.monthly_break_even "
        "WHERE month = DATE '2026-08-01'"
    )
    assert be == {"api_cost_per_accepted_task_usd": None, "break_even_accepted_tasks": None}


@pytest.mark.slow
def test_accepted_attempt_over_slo_is_a_latency_violation(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [
            request("fast", "t1", "2026-07-01T10:00:00Z", latency_ms=119_999, cache_miss_input_tokens=1_000_000),
            request("slow", "t2", "2026-07-01T10:00:00Z", latency_ms=120_001, cache_miss_input_tokens=1_000_000),
        ],
    )
    ledger.load(
        "outcomes",
        [
            {"task_id": "t1", "accepted": "true", "decided_at": "2026-07-01T12:00:00Z"},
            {"task_id": "t2", "accepted": "true", "decided_at": "2026-07-01T12:00:00Z"},
        ],
    )
    ledger.build(*READS, slo_ms_api=120_000)
    row = ledger.one(
        "SELECT accepted_tasks, latency_violations, cost_usd, cost_per_accepted_task_usd "
        "FROM marts.monthly_route_cost WHERE route = 'api'"
    )
    # both requests cost $3.00; only the fast one counts: $6.00 / 1 accepted task
    assert row == {
        "accepted_tasks": 1,
        "latency_violations": 1,
        "cost_usd": Decimal("6.00"),
        "cost_per_accepted_task_usd": Decimal("6.00"),
    }


@pytest.mark.slow
def test_latest_decision_wins_and_named_attempt_is_used(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [
            request("x1", "t1", "2026-07-31T23:00:00Z", attempt=1),
            request("x2", "t1", "2026-08-01T01:00:00Z", attempt=2),
        ],
    )
    ledger.load(
        "outcomes",
        [
            {"task_id": "t1", "accepted": "false", "decided_at": "2026-08-01T02:00:00Z", "review_minutes": "30"},
            # the later decision accepts, naming the first attempt: the task belongs to July
            {
                "task_id": "t1",
                "accepted": "true",
                "decided_at": "2026-08-02T02:00:00Z",
                "request_id": "x1",
                "review_minutes": "15",
            },
        ],
    )
    ledger.build(*READS, review_rate_per_hour_usd=Decimal("60"))
    task = ledger.one(
        "SELECT accepted, accepted_request_id, month, review_minutes, review_cost_usd "
        "FROM intermediate.int_tasks_resolved"
    )
    # review: 30 + 15 = 45 minutes x $60 / 60 = $45.00
    assert task["accepted"] is True and task["accepted_request_id"] == "x1"
    assert str(task["month"]) == "2026-07-01"
    assert task["review_minutes"] == Decimal("45") and task["review_cost_usd"] == Decimal("45.00")


@pytest.mark.slow
def test_request_log_accepted_column_without_outcomes(ledger):
    ledger.load("prices", [PRICE_MOONSHOT])
    ledger.load(
        "requests",
        [
            request("y1", "t1", "2026-07-01T10:00:00Z", accepted="false"),
            request("y2", "t1", "2026-07-01T10:10:00Z", attempt=2, accepted="true"),
            request("z1", "t2", "2026-07-01T10:00:00Z", accepted="false"),
            request("w1", "t3", "2026-07-01T10:00:00Z"),  # never judged
        ],
    )
    ledger.build(*READS)
    rows = {
        r["task_id"]: r
        for r in ledger.rows(
            "SELECT task_id, accepted, accepted_request_id, outcome_source FROM intermediate.int_tasks_resolved"
        )
    }
    assert rows["t1"] == {
        "task_id": "t1",
        "accepted": True,
        "accepted_request_id": "y2",
        "outcome_source": "request_log",
    }
    assert rows["t2"]["accepted"] is False and rows["t2"]["outcome_source"] == "request_log"
    assert rows["t3"]["accepted"] is False and rows["t3"]["outcome_source"] == "undecided"
