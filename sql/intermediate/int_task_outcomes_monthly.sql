-- grain: one row per month x route (with resolved tasks)
-- materialized: table
-- incremental: months
-- input tasks_of_months: intermediate.int_tasks_resolved
-- unique_key: month, route
-- description: Task outcomes by the month and route each task belongs to: accepted tasks, latency violations, accepted tasks whose accepted attempt has no latency (judged by their outcome alone: an API response body carries none), review cost, and what the accepted attempts alone cost at the API (their own provider's price on the api route, the reference price on self_hosted; accepted_attempts_priced of them had a price). Incremental: only months touched by new data are recomputed.
-- column month DATE
-- column route VARCHAR
-- column tasks_resolved BIGINT: Tasks of the month and route (each task once, by its accepted attempt's month and route, else its last attempt's).
-- column accepted_tasks BIGINT: Those of them accepted.
-- column latency_violations BIGINT: Tasks whose otherwise accepted attempt was slower than the route's latency SLO (so not accepted).
-- column accepted_latency_unknown BIGINT: Accepted tasks whose accepted attempt has no latency (judged by their outcome alone).
-- column review_cost_usd DECIMAL(38,12)
-- column accepted_attempt_api_cost_usd DECIMAL(38,12)
-- column accepted_attempts_priced BIGINT: Accepted attempts that had a price (those accepted_attempt_api_cost_usd adds up).
SELECT
    month,
    route,
    count(*) AS tasks_resolved,
    count(*) FILTER (WHERE accepted) AS accepted_tasks,
    count(*) FILTER (WHERE latency_violation) AS latency_violations,
    count(*) FILTER (WHERE accepted AND accepted_latency_ms IS NULL) AS accepted_latency_unknown,
    CAST(coalesce(sum(review_cost_usd), 0) AS DECIMAL(38, 12)) AS review_cost_usd,
    CAST(coalesce(sum(accepted_attempt_api_cost_usd), 0) AS DECIMAL(38, 12)) AS accepted_attempt_api_cost_usd,
    count(accepted_attempt_api_cost_usd) AS accepted_attempts_priced
FROM scoped.tasks_of_months
GROUP BY month, route
