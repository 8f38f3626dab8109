-- grain: one row per month x route (with resolved tasks)
-- materialized: table
-- incremental: months
-- unique_key: month, route
-- description: Task outcomes by the month and route each task belongs to: accepted tasks, latency violations and review cost. Incremental: only months touched by new data are recomputed.
SELECT
    month,
    route,
    count(*) AS tasks_resolved,
    count(*) FILTER (WHERE accepted) AS accepted_tasks,
    count(*) FILTER (WHERE latency_violation) AS latency_violations,
    CAST(coalesce(sum(review_cost_usd), 0) AS DECIMAL(38, 12)) AS review_cost_usd
FROM scoped.tasks_of_months
GROUP BY month, route
