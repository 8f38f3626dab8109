-- grain: one row per month x route x team x workload (with resolved tasks)
-- materialized: table
-- incremental: months
-- input tasks_of_months: intermediate.int_tasks_resolved
-- unique_key: month, route, team, workload
-- description: Each workload's task outcomes by the month and route each task belongs to (a task's workload: the team and workload of its last attempt, '(none)' when not logged): tasks resolved, accepted tasks and their review cost. marts.monthly_workload_moves divides a workload's API cost by its accepted tasks; marts.gate_criteria compares production's mix of accepted tasks with the evaluation set's categories. Incremental: only months touched by new data are recomputed.
-- column month DATE
-- column route VARCHAR
-- column team VARCHAR
-- column workload VARCHAR
-- column tasks_resolved BIGINT: Tasks of the month, route, team and workload (each task once, by its accepted attempt's month and route, else its last attempt's).
-- column accepted_tasks BIGINT: Those of them accepted.
-- column review_cost_usd DECIMAL(38,12)
SELECT
    month,
    route,
    team,
    workload,
    count(*) AS tasks_resolved,
    count(*) FILTER (WHERE accepted) AS accepted_tasks,
    CAST(coalesce(sum(review_cost_usd), 0) AS DECIMAL(38, 12)) AS review_cost_usd
FROM scoped.tasks_of_months
GROUP BY month, route, team, workload
