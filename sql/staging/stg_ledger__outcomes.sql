-- grain: one row per task decision
-- materialized: view
-- unique_key: task_id, decided_at
-- key_enforced_by: ingest (meta.key_index: a row whose key is loaded already is quarantined)
-- description: Task decisions as loaded.
-- column task_id VARCHAR
-- column decided_at TIMESTAMP
-- column accepted BOOLEAN
-- column request_id VARCHAR
-- column review_minutes DECIMAL(18,4)
-- column reason VARCHAR
SELECT
    task_id,
    decided_at,
    accepted,
    request_id,
    coalesce(review_minutes, 0) AS review_minutes,
    reason
FROM raw.outcomes
