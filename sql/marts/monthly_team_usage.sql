-- grain: one row per month x route x team
-- materialized: table
-- incremental: months
-- input requests_of_months: intermediate.int_requests_priced
-- unique_key: month, route, team
-- description: Who used each route: requests, tasks and accepted tasks per team, and the token cost of their requests at API prices (API rows at their provider's price; self-hosted rows at the reference API price). Not an allocation of cluster cost. Incremental: only months touched by new data are recomputed.
-- column month: First day of the month (UTC).
-- column route: 'api' or 'self_hosted'.
-- column team: The team tag of the requests ('(none)' when not logged).
-- column requests: Requests (attempts).
-- column tasks: Distinct tasks with a request from the team.
-- column accepted_tasks: Of those tasks, the ones accepted on this route in this month.
-- column token_cost_usd: Metered cost (API) or API-equivalent cost (self-hosted) of the team's requests.
WITH per_task AS (
    -- one row per task and month x route x team first: distinct counts become plain counts (and can spill to disk)
    SELECT
        month,
        route,
        coalesce(team, '(none)') AS team,
        task_id,
        count(*) AS requests,
        sum(coalesce(metered_cost_usd, api_equivalent_cost_usd)) AS token_cost_usd
    FROM scoped.requests_of_months
    GROUP BY ALL
)
SELECT
    p.month,
    p.route,
    p.team,
    CAST(sum(p.requests) AS BIGINT) AS requests,
    count(*) AS tasks,
    count(*) FILTER (WHERE t.accepted AND t.route = p.route AND t.month = p.month) AS accepted_tasks,
    CAST(coalesce(sum(p.token_cost_usd), 0) AS DECIMAL(38, 12)) AS token_cost_usd
FROM per_task AS p
JOIN intermediate.int_tasks_resolved AS t USING (task_id)
GROUP BY p.month, p.route, p.team
