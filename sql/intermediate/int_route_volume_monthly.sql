-- grain: one row per month x route (with requests)
-- materialized: table
-- incremental: months
-- input requests_of_months: intermediate.int_requests_priced
-- unique_key: month, route
-- description: Each route's monthly request volume: requests, distinct tasks, tokens, unpriced API requests and exact discrete latency percentiles over the requests with a latency (latency_unknown counts the others; DuckDB's quantile_disc: the ceil(q x n)-th smallest latency, found from a latency histogram so memory does not grow with the request count). Incremental: only months touched by new data are recomputed.
WITH volume AS (
    SELECT
        month,
        route,
        count(*) AS requests,
        sum(cache_hit_input_tokens) AS cache_hit_input_tokens,
        sum(cache_miss_input_tokens) AS cache_miss_input_tokens,
        sum(output_tokens) AS output_tokens,
        sum(reasoning_tokens) AS reasoning_tokens,
        sum(cache_write_5m_input_tokens) AS cache_write_5m_input_tokens,
        sum(cache_write_1h_input_tokens) AS cache_write_1h_input_tokens,
        sum(web_search_calls) AS web_search_calls,
        count(*) FILTER (WHERE route = 'api' AND NOT is_priced) AS unpriced_requests,
        count(*) FILTER (WHERE latency_ms IS NULL) AS latency_unknown
    FROM scoped.requests_of_months
    GROUP BY month, route
),
tasks AS (
    SELECT month, route, count(*) AS tasks
    FROM (SELECT DISTINCT month, route, task_id FROM scoped.requests_of_months) AS task_routes
    GROUP BY month, route
),
histogram AS (
    SELECT month, route, latency_ms, count(*) AS n
    FROM scoped.requests_of_months
    WHERE latency_ms IS NOT NULL
    GROUP BY month, route, latency_ms
),
cumulative AS (
    SELECT
        *,
        sum(n) OVER (PARTITION BY month, route ORDER BY latency_ms ROWS UNBOUNDED PRECEDING) AS upto,
        sum(n) OVER (PARTITION BY month, route) AS total
    FROM histogram
),
percentiles AS (
    -- position of quantile q among n values, as DuckDB's quantile_disc computes it: max(1, n - floor(n - q x n))
    SELECT
        month,
        route,
        min(latency_ms) FILTER (WHERE upto >= greatest(1, total - floor(total - 0.5 * total))) AS p50_latency_ms,
        min(latency_ms) FILTER (WHERE upto >= greatest(1, total - floor(total - 0.95 * total))) AS p95_latency_ms
    FROM cumulative
    GROUP BY month, route
)
SELECT v.*, t.tasks, p.p50_latency_ms, p.p95_latency_ms
FROM volume AS v
JOIN tasks AS t USING (month, route)
LEFT JOIN percentiles AS p USING (month, route)
