-- grain: one row per month x task group (API route)
-- materialized: table
-- incremental: months
-- input requests_of_months: intermediate.int_requests_priced (task_id, route, month, metered_cost_usd)
-- input tasks_of_months: intermediate.int_tasks_resolved (task_id, route, month, accepted, accepted_attempt_api_cost_usd)
-- unique_key: month, task_group
-- description: The API route's month split into up to 1,000 groups of tasks (a task's group is a hash of its task_id, so all its attempts fall in one group): the metered cost of the attempts started that month and of the accepted attempts of the tasks that belong to it. Their sums over the groups are the month's totals; the API waste factor's interval resamples these groups. Incremental: only months touched by new data are recomputed.
WITH attempts AS (
    SELECT
        month,
        CAST(hash_key(task_id) % 1000 AS INTEGER) AS task_group,
        sum(metered_cost_usd) AS attempts_metered_usd
    FROM scoped.requests_of_months
    WHERE route = 'api'
    GROUP BY ALL
),
accepted AS (
    SELECT
        month,
        CAST(hash_key(task_id) % 1000 AS INTEGER) AS task_group,
        count(*) FILTER (WHERE accepted) AS accepted_tasks,
        sum(accepted_attempt_api_cost_usd) AS accepted_metered_usd
    FROM scoped.tasks_of_months
    WHERE route = 'api'
    GROUP BY ALL
)
SELECT
    month,
    task_group,
    CAST(coalesce(t.attempts_metered_usd, 0) AS DECIMAL(38, 12)) AS attempts_metered_usd,
    CAST(coalesce(a.accepted_tasks, 0) AS BIGINT) AS accepted_tasks,
    CAST(coalesce(a.accepted_metered_usd, 0) AS DECIMAL(38, 12)) AS accepted_metered_usd
FROM attempts AS t
FULL JOIN accepted AS a USING (month, task_group)
