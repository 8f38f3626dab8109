-- grain: one row per month x route x team
-- materialized: table
-- unique_key: month, route, team
-- description: Who used each route: requests, tasks and accepted tasks per team, and the token cost of their requests at API prices (API rows at their provider's price; self-hosted rows at the reference API price). Not an allocation of cluster cost. The sums of its days (int_team_usage_daily), where each task is counted on the first day it has a request in the month, route and team.
-- column month DATE: First day of the month (UTC).
-- column route VARCHAR: 'api' or 'self_hosted'.
-- column team VARCHAR: The team tag of the requests ('(none)' when not logged).
-- column requests BIGINT: Requests (attempts).
-- column tasks BIGINT: Distinct tasks with a request from the team.
-- column accepted_tasks BIGINT: Of those tasks, the ones accepted on this route in this month.
-- column token_cost_usd DECIMAL(38,12): Metered cost (API) or API-equivalent cost (self-hosted) of the team's requests.
SELECT
    month,
    route,
    team,
    CAST(sum(requests) AS BIGINT) AS requests,
    CAST(sum(tasks) AS BIGINT) AS tasks,
    CAST(sum(accepted_tasks) AS BIGINT) AS accepted_tasks,
    CAST(coalesce(sum(token_cost_usd), 0) AS DECIMAL(38, 12)) AS token_cost_usd
FROM intermediate.int_team_usage_daily
GROUP BY month, route, team
