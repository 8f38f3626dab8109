"""The deployment gate's representativeness and drill recovery times (docs/decisions.md). The base set is
tests/models/test_gate.py's; expected figures are worked by hand in the comments."""

import pytest
from decimal import Decimal

from tests.conftest import request
from tests.models.test_break_even import BIG, accepted
from tests.models.test_gate import SMALL_SET, criteria, load_set, verdict


def _production(ledger, workload: str, tasks: int) -> None:
    """``tasks`` more production tasks on the cluster in July, accepted, each logged with ``workload``."""
    reqs = [
        request(f"p{i}", f"prod-{i}", "2026-07-10T10:00:00Z", route="self_hosted", latency_ms=60_000, workload=workload,
                **BIG)
        for i in range(tasks)
    ]  # fmt: skip
    ledger.load("requests", reqs)
    ledger.load("outcomes", accepted(*[r["task_id"] for r in reqs]))


@pytest.mark.slow
def test_cases_far_from_production_s_mix_fail_and_close_ones_pass(ledger):
    # 4 cases, categories a, b, a, b: each 50 % of the cases. Production (the workload logged on every accepted task
    # of July): the 8 evaluation tasks (4 of a, 4 of b) plus 4 more of a: a = 8 / 12 = 66.67 %, b = 4 / 12 = 33.33 %.
    # Both gaps are 16.67 points, beyond the 15 allowed.
    load_set(ledger, cases=4, log_workload=True)
    _production(ledger, "a", 4)
    ledger.build(**SMALL_SET)
    rep = criteria(ledger)["representative"]
    assert (rep["value"], rep["threshold"], rep["status"], rep["passed"]) == (Decimal("16.67"), 15, "failed", False)
    assert "a: 50.0 % of the cases, 66.7 % of production's accepted tasks" in rep["detail"]
    assert "b: 50.0 % of the cases, 33.3 % of production's accepted tasks" in rep["detail"]
    assert verdict(ledger)["failed_criteria"] == ["representative"]


@pytest.mark.slow
def test_a_gap_within_the_tolerance_passes(ledger):
    # as above with 2 more tasks of a: a = 6 / 10 = 60 %, b = 4 / 10 = 40 %: gaps of 10 points, within 15
    load_set(ledger, cases=4, log_workload=True)
    _production(ledger, "a", 2)
    ledger.build(**SMALL_SET)
    rep = criteria(ledger)["representative"]
    assert (rep["value"], rep["status"], rep["detail"]) == (10, "passed", None)
    assert verdict(ledger)["verdict"] == "passed"


@pytest.mark.slow
def test_a_category_production_never_sees_counts_its_whole_share(ledger):
    # 2 cases (a, b), production: the 4 evaluation tasks (2 of a, 2 of b) and 4 tasks of c, which no case covers:
    # a = b = 2 / 8 = 25 %, c = 50 % of production; of the cases a = b = 50 %, c = 0 %. Gaps 25, 25, 50: the largest
    # is 50 points. A tighter tolerance of 0.60 lets it pass.
    load_set(ledger, log_workload=True)
    _production(ledger, "c", 4)
    ledger.build(**SMALL_SET)
    rep = criteria(ledger)["representative"]
    assert rep["value"] == 50 and rep["status"] == "failed"
    assert rep["detail"].split(": ", 1)[1].startswith("c: 0.0 % of the cases, 50.0 % of production's accepted tasks")
    ledger.build(**SMALL_SET, gate_mix_tolerance=Decimal("0.60"))
    assert criteria(ledger)["representative"]["status"] == "passed"


@pytest.mark.slow
def test_cases_without_categories_skip_the_check(ledger):
    # production logs its workloads, but the cases name no category: there is no mix to compare
    load_set(ledger, log_workload=True, categories=False)
    ledger.build(**SMALL_SET)
    rep = criteria(ledger)["representative"]
    assert (rep["status"], rep["passed"], rep["value"]) == ("skipped", None, None)
    assert "representative" in verdict(ledger)["skipped_criteria"]


@pytest.mark.slow
def test_recovery_minutes_against_the_limit(ledger):
    # limit 10 minutes: node_loss recovered in 12 (failed, naming both), rollback in 10 (at the limit: passed),
    # the other drills in 3
    minutes = {"node_loss": "12", "rollback": "10"}
    load_set(
        ledger,
        recovery={
            d: minutes.get(d, "3")
            for d in ("node_loss", "rollback", "queue_growth", "long_context_burst", "malformed_tool_call")
        },
    )
    ledger.build(**SMALL_SET, gate_max_recovery_minutes=Decimal("10"))
    c = criteria(ledger)
    assert (c["drill_node_loss"]["value"], c["drill_node_loss"]["threshold"], c["drill_node_loss"]["status"]) == (
        12,
        10,
        "failed",
    )
    assert c["drill_node_loss"]["detail"] == "the node loss drill recovered in 12.0 minutes; the gate allows 10.0"
    assert (c["drill_rollback"]["value"], c["drill_rollback"]["status"]) == (10, "passed")
    assert verdict(ledger)["failed_criteria"] == ["drill_node_loss"]
    # without the limit the recovery times are not judged: every drill passed
    ledger.build(**SMALL_SET, gate_max_recovery_minutes=None)
    assert verdict(ledger)["verdict"] == "passed"


@pytest.mark.slow
def test_a_passed_drill_without_its_recovery_time_is_missing_when_a_limit_is_set(ledger):
    load_set(ledger, recovery={"node_loss": "4"})  # the other drills' recovery_minutes are empty
    ledger.build(**SMALL_SET, gate_max_recovery_minutes=Decimal("10"))
    c = criteria(ledger)
    assert c["drill_node_loss"]["status"] == "passed"
    assert c["drill_rollback"]["status"] == "missing"
    assert "recovery time is not recorded" in c["drill_rollback"]["detail"]
    assert verdict(ledger)["verdict"] == "incomplete"
