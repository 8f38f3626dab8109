-- grain: one row per retried task x month x route x team (tasks with more than one attempt, a few percent)
-- materialized: table
-- published: no
-- incremental: keys
-- input requests_of_task_retries: intermediate.int_requests_priced (task_id, request_id, started_at, month, route, team)
-- input tasks_of_task_retries: intermediate.int_tasks_resolved (task_id, attempts)
-- unique_key: task_id, month, route, team
-- description: Where each task with more than one attempt is counted: the first day (UTC) it has a request in each month, route and team (its earliest request there: started_at, then request_id), and whether that is its first request in the month and route over all teams (first_in_route). A task with one attempt is counted on its request's day and needs no row here, so int_team_usage_daily counts every task once per month, route and team, and once per month and route, and the counts add up by day. Incremental: only the tasks with new attempts are recomputed (from all their attempts).
-- column task_id VARCHAR
-- column month DATE
-- column route VARCHAR
-- column team VARCHAR
-- column first_day DATE: The day (UTC) of the task's earliest request in the month, route and team.
-- column first_in_route BOOLEAN: Whether that request is the task's earliest in the month and route over all teams (the team the task counts under when counted once per route).
WITH retried AS (
    SELECT task_id FROM scoped.tasks_of_task_retries WHERE attempts > 1
),
firsts AS (
    SELECT
        r.task_id,
        r.month,
        r.route,
        coalesce(r.team, '(none)') AS team,
        min(struct_pack(s := r.started_at, r := r.request_id)) AS first_request
    FROM scoped.requests_of_task_retries AS r
    SEMI JOIN retried AS c ON c.task_id = r.task_id
    GROUP BY r.task_id, r.month, r.route, coalesce(r.team, '(none)')
)
SELECT
    task_id,
    month,
    route,
    team,
    CAST(struct_extract(first_request, 's') AS DATE) AS first_day,
    row_number() OVER (PARTITION BY task_id, month, route ORDER BY first_request, team) = 1 AS first_in_route
FROM firsts
