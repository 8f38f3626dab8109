-- grain: one row per eval set x required drill
-- materialized: view
-- unique_key: eval_set, drill
-- description: Each failure drill the deployment gate requires (gate.required_drills) for each evaluation set, with the drill's latest run for the set on any cluster (of two at the same time, the first cluster's); the run's columns are NULL when the drill never ran for the set.
-- settings: gate_required_drills
-- column eval_set VARCHAR: The evaluation set.
-- column drill VARCHAR: The drill (node_loss, rollback, queue_growth, ...).
-- column passed BOOLEAN: Its latest run passed; NULL when it never ran.
-- column cluster_id VARCHAR: The cluster it ran on.
-- column run_at TIMESTAMP: When it ran (UTC).
-- column recovery_minutes DECIMAL(18,4): The minutes the cluster took to recover, when recorded.
-- column note VARCHAR: The run's note.
WITH required AS (
    SELECT unnest(string_split(gate_required_drills, ',')) AS drill FROM staging.stg_ledger__settings
),
latest_runs AS (
    SELECT * FROM staging.stg_ledger__gate_checks
    QUALIFY row_number() OVER (PARTITION BY eval_set, drill ORDER BY run_at DESC, cluster_id ASC) = 1
)
SELECT
    s.eval_set,
    d.drill,
    g.passed,
    g.cluster_id,
    g.run_at,
    g.recovery_minutes,
    g.note
FROM intermediate.int_gate_coverage AS s
CROSS JOIN required AS d
LEFT JOIN latest_runs AS g ON s.eval_set = g.eval_set AND d.drill = g.drill
