"""The sample's deployment gate: an evaluation set drawn from one month's tasks on both routes, and the failure
drills run on the cluster."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path


from pipeline.sample.world import CLUSTER, Scenario, iso, write_csv


#: The evaluation set's categories (seed 001: "the actual coding, long-context, vision, and tool-calling mix").
EVAL_CATEGORIES = ("coding", "long_context", "vision", "tool_calling")
#: The sample's failure drills: (drill, day of the month, passed, recovery minutes, note). Queue growth fails: the
#: cluster cannot add a node within the burst (a 13-minute cold start).
GATE_DRILLS_RUN = (
    ("node_loss", 21, True, "4", "one of 8 GPUs taken out: requests drained and resumed in 4 min"),
    ("rollback", 22, True, "6", "rolled back to the previous engine build in 6 min"),
    (
        "queue_growth",
        23,
        False,
        "",
        "queue passed 400 requests; no node could be added before the 13-minute cold start",
    ),
    ("long_context_burst", 24, True, "2", "40 requests of 200k tokens at once: p95 within the target"),
    ("malformed_tool_call", 27, True, "0", "bad JSON arguments answered with a retryable error"),
)


def write_gate(out: Path, sc: Scenario, requests: list[dict], outcomes: list[dict], month: datetime) -> tuple[int, int]:
    """The deployment gate of the month: ``sc.eval_cases`` cases, each a task on the API and one on the cluster
    with the same acceptance (so the accepted shares match and the failed drill is what fails the gate), spread
    over the month's days 3 to 28; and the drills. Draws nothing from the random generator (the other files stay
    as they are)."""
    final = {o["task_id"]: o["accepted"] for o in outcomes}  # the latest decision of a task is its last row
    last = {r["task_id"]: r for r in requests}  # requests are in time order: a task's last attempt
    first = {}
    for r in requests:
        first.setdefault(r["task_id"], r)
    window = (month + timedelta(days=2), month + timedelta(days=28))
    candidates = {
        route: sorted(
            t
            for t, r in last.items()
            if r["route"] == route and window[0] <= first[t]["started_at"] < window[1] and r["latency_ms"] < 300_000
        )
        for route in ("api", "self_hosted")
    }
    accepted_cases = sc.eval_cases - sc.eval_cases // 8  # 35 of 40 accepted on each route
    picked = {}
    for route, tasks in candidates.items():
        yes = [t for t in tasks if final[t]]
        no = [t for t in tasks if not final[t]]
        n_no = sc.eval_cases - accepted_cases
        chosen = yes[:: max(1, len(yes) // accepted_cases)][:accepted_cases] + no[:: max(1, len(no) // n_no)][:n_no]
        picked[route] = sorted(chosen, key=lambda t: first[t]["started_at"])
    rows = [
        {"eval_set": f"k3-gate-{month:%Y-%m}", "case_id": f"case-{i + 1:02d}", "task_id": task,
         "category": EVAL_CATEGORIES[i % len(EVAL_CATEGORIES)]}
        for route in ("api", "self_hosted")
        for i, task in enumerate(picked[route])
    ]  # fmt: skip
    write_csv(out / "eval-tasks" / f"eval-{month:%Y-%m}.csv", rows, ["eval_set", "case_id", "task_id", "category"])
    drills = [
        {"eval_set": f"k3-gate-{month:%Y-%m}", "check": drill, "cluster_id": CLUSTER,
         "run_at": iso(month + timedelta(days=day - 1, hours=10)), "passed": str(passed).lower(),
         "recovery_minutes": minutes, "note": note}
        for drill, day, passed, minutes, note in GATE_DRILLS_RUN
    ]  # fmt: skip
    write_csv(out / "gate-checks" / f"drills-{month:%Y-%m}.csv", drills, list(drills[0]))
    return len(rows), len(drills)
