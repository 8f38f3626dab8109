-- grain: one row per day x month x route x team (with requests)
-- materialized: table
-- incremental: days
-- input requests_of_days: intermediate.int_requests_priced, day started_at
-- input retries_of_days: intermediate.int_task_retries, day first_day
-- input tasks_of_days: intermediate.int_tasks_resolved (task_id, attempts, accepted, route, month), within task_id of requests_of_days.task_id
-- unique_key: day, route, team
-- description: Who used each route, per day (UTC, by request start): requests and their token cost at API prices (API rows at their provider's price, self-hosted rows at the reference API price), and tasks counted on one day each: a task with one attempt on its request's day, a retried task on its first day in the month, route and team (int_task_retries). tasks: once per month, route and team; route_tasks: once per month and route over all teams (int_route_volume_monthly's count); accepted_tasks: of the tasks, the ones accepted on this route in this month. monthly_team_usage adds up the days. Incremental: only the days touched by new data are recomputed, and the days of every attempt of a task whose attempts or decision changed.
WITH requests AS (
    SELECT
        CAST(r.started_at AS DATE) AS day,
        r.month,
        r.route,
        coalesce(r.team, '(none)') AS team,
        count(*) AS requests,
        count(*) FILTER (WHERE t.attempts = 1) AS single_tasks,
        count(*) FILTER (WHERE t.attempts = 1 AND t.accepted AND t.route = r.route AND t.month = r.month)
            AS single_accepted,
        sum(coalesce(r.metered_cost_usd, r.api_equivalent_cost_usd)) AS token_cost_usd
    FROM scoped.requests_of_days AS r
    JOIN scoped.tasks_of_days AS t USING (task_id)
    GROUP BY CAST(r.started_at AS DATE), r.month, r.route, coalesce(r.team, '(none)')
),
retried AS (
    -- a retried task has a request on its first day, so it lies within tasks_of_days' range of the days' tasks
    SELECT
        u.first_day AS day,
        u.month,
        u.route,
        u.team,
        count(*) AS tasks,
        count(*) FILTER (WHERE u.first_in_route) AS route_tasks,
        count(*) FILTER (WHERE t.accepted AND t.route = u.route AND t.month = u.month) AS accepted_tasks
    FROM scoped.retries_of_days AS u
    JOIN scoped.tasks_of_days AS t USING (task_id)
    GROUP BY u.first_day, u.month, u.route, u.team
)
-- a retried task's first day has its request there, so each retried row has its requests row
SELECT
    q.day,
    q.month,
    q.route,
    q.team,
    q.requests,
    q.single_tasks + coalesce(c.tasks, 0) AS tasks,
    q.single_tasks + coalesce(c.route_tasks, 0) AS route_tasks,
    q.single_accepted + coalesce(c.accepted_tasks, 0) AS accepted_tasks,
    q.token_cost_usd
FROM requests AS q
LEFT JOIN retried AS c USING (day, month, route, team)
