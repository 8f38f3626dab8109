-- grain: one row per day x month x route x team (with requests)
-- materialized: table
-- incremental: days
-- input requests_of_days: intermediate.int_requests_priced, day started_at
-- input retries_of_days: intermediate.int_task_retries, day first_day
-- input singles_of_days: intermediate.int_tasks_resolved (single_day, single_team, attempts, accepted, route, month), day single_day
-- input tasks_of_days: intermediate.int_tasks_resolved (task_id, attempts, accepted, route, month), within task_id of retries_of_days.task_id
-- unique_key: day, route, team
-- description: Who used each route, per day (UTC, by request start): requests and their token cost at API prices (API rows at their provider's price, self-hosted rows at the reference API price), and tasks counted on one day each: a task with one attempt on its request's day, a retried task on its first day in the month, route and team (int_task_retries). tasks: once per month, route and team; route_tasks: once per month and route over all teams (int_route_volume_monthly's count); accepted_tasks: of the tasks, the ones accepted on this route in this month. monthly_team_usage adds up the days. Incremental: only the days touched by new data are recomputed, and the days of every attempt of a task whose attempts or decision changed.
-- column day DATE: The day (UTC) the requests started.
-- column month DATE
-- column route VARCHAR
-- column team VARCHAR: The team that sent the requests ('(none)' when not logged).
-- column requests BIGINT: The team's requests on the route started in the day.
-- column tasks BIGINT: Tasks counted on this day: once per month, route and team (a task with one attempt on its day, a retried one on its first day there).
-- column route_tasks BIGINT: Tasks counted once per month and route over all teams (the team of the task's earliest request there).
-- column accepted_tasks BIGINT: Of the tasks, those accepted on this route in this month.
-- column token_cost_usd DECIMAL(38,12): What the requests' tokens cost at API prices: API requests at their provider's price, self-hosted ones at the reference API price.
WITH requests AS (
    SELECT
        CAST(started_at AS DATE) AS day,
        month,
        route,
        coalesce(team, '(none)') AS team,
        count(*) AS requests,
        sum(coalesce(metered_cost_usd, api_equivalent_cost_usd)) AS token_cost_usd
    FROM scoped.requests_of_days
    GROUP BY CAST(started_at AS DATE), month, route, coalesce(team, '(none)')
),
singles AS (
    -- a task with one attempt on that attempt's day, month, route and team (its route and month are the attempt's)
    SELECT
        single_day AS day,
        month,
        route,
        single_team AS team,
        count(*) AS single_tasks,
        count(*) FILTER (WHERE accepted) AS single_accepted
    FROM scoped.singles_of_days
    WHERE attempts = 1
    GROUP BY single_day, month, route, single_team
),
retried_tasks AS (
    -- the resolution of the retried tasks (tasks_of_days: the tasks in the range of the days' retried task ids)
    SELECT * FROM scoped.tasks_of_days WHERE attempts > 1
),
retried AS (
    SELECT
        u.first_day AS day,
        u.month,
        u.route,
        u.team,
        count(*) AS tasks,
        count(*) FILTER (WHERE u.first_in_route) AS route_tasks,
        count(*) FILTER (WHERE t.accepted AND t.route = u.route AND t.month = u.month) AS accepted_tasks
    FROM scoped.retries_of_days AS u
    JOIN retried_tasks AS t USING (task_id)
    GROUP BY u.first_day, u.month, u.route, u.team
)
-- a task's day (its one attempt's, or a retried task's first) has its request there, so each singles and each
-- retried row has its requests row
SELECT
    q.day,
    q.month,
    q.route,
    q.team,
    q.requests,
    coalesce(s.single_tasks, 0) + coalesce(c.tasks, 0) AS tasks,
    coalesce(s.single_tasks, 0) + coalesce(c.route_tasks, 0) AS route_tasks,
    coalesce(s.single_accepted, 0) + coalesce(c.accepted_tasks, 0) AS accepted_tasks,
    q.token_cost_usd
FROM requests AS q
LEFT JOIN singles AS s USING (day, month, route, team)
LEFT JOIN retried AS c USING (day, month, route, team)
