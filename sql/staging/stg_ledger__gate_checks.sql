-- grain: one row per eval set x drill x cluster x run
-- materialized: view
-- unique_key: eval_set, drill, cluster_id, run_at
-- description: The deployment gate's failure drills as loaded (the file's column check is drill here): node loss, rollback, queue growth, long-context burst and malformed tool call, each run on a cluster at a time, passed or not.
-- column eval_set VARCHAR
-- column drill VARCHAR
-- column cluster_id VARCHAR
-- column run_at TIMESTAMP
-- column passed BOOLEAN
-- column recovery_minutes DECIMAL(18,4)
-- column note VARCHAR
SELECT
    eval_set,
    drill,
    cluster_id,
    run_at,
    passed,
    recovery_minutes,
    note
FROM raw.gate_checks
