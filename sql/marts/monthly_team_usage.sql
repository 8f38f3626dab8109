-- grain: one row per month x route x team
-- materialized: table
-- incremental: months
-- unique_key: month, route, team
-- description: Who used each route: requests, tasks and accepted tasks per team, and the token cost of their requests at API prices (API rows at their provider's price; self-hosted rows at the reference API price). Not an allocation of cluster cost. Incremental: only months touched by new data are recomputed.
-- column month: First day of the month (UTC).
-- column route: 'api' or 'self_hosted'.
-- column team: The team tag of the requests ('(none)' when not logged).
-- column requests: Requests (attempts).
-- column tasks: Distinct tasks with a request from the team.
-- column accepted_tasks: Of those tasks, the ones accepted on this route in this month.
-- column token_cost_usd: Metered cost (API) or API-equivalent cost (self-hosted) of the team's requests.
SELECT
    r.month,
    r.route,
    coalesce(r.team, '(none)') AS team,
    count(*) AS requests,
    count(DISTINCT r.task_id) AS tasks,
    count(DISTINCT r.task_id) FILTER (WHERE t.accepted AND t.route = r.route AND t.month = r.month) AS accepted_tasks,
    CAST(coalesce(sum(coalesce(r.metered_cost_usd, r.api_equivalent_cost_usd)), 0) AS DECIMAL(38, 12)) AS token_cost_usd
FROM scoped.requests_of_months AS r
JOIN intermediate.int_tasks_resolved AS t USING (task_id)
GROUP BY ALL
