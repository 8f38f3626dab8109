-- grain: one row per eval set x task
-- materialized: view
-- unique_key: eval_set, task_id
-- description: The deployment gate's evaluation cases as loaded: each case (the same prompt and acceptance criteria) has a task on each route; category '' or absent is 'uncategorised'.
-- column eval_set VARCHAR
-- column case_id VARCHAR
-- column task_id VARCHAR
-- column category VARCHAR
SELECT
    eval_set,
    case_id,
    task_id,
    coalesce(nullif(trim(category), ''), 'uncategorised') AS category
FROM raw.eval_tasks
