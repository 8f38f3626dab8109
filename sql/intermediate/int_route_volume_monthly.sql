-- grain: one row per month x route (with requests)
-- materialized: table
-- unique_key: month, route
-- description: Each route's monthly request volume: requests, distinct tasks, tokens, unpriced API requests and exact discrete latency percentiles over the requests with a latency (latency_unknown counts the others; DuckDB's quantile_disc: the ceil(q x n)-th smallest latency, found from a latency histogram so memory does not grow with the request count). Its counts and tokens are int_requests_monthly's by route; its latencies the sums of its days (int_route_volume_daily); its tasks from int_team_usage_daily, where each task is counted on one day per month and route.
-- column month DATE
-- column route VARCHAR
-- column requests BIGINT
-- column cache_hit_input_tokens HUGEINT
-- column cache_miss_input_tokens HUGEINT
-- column output_tokens HUGEINT
-- column reasoning_tokens HUGEINT
-- column cache_write_5m_input_tokens HUGEINT
-- column cache_write_1h_input_tokens HUGEINT
-- column web_search_calls HUGEINT
-- column unpriced_requests BIGINT
-- column latency_unknown BIGINT: The route's requests of the month without a latency.
-- column tasks BIGINT: Distinct tasks with a request on the route in the month.
-- column p50_latency_ms BIGINT: The median latency of the requests with one: the ceil(0.5 x n)-th smallest (NULL when none has one).
-- column p95_latency_ms BIGINT: Their 95th-percentile latency: the ceil(0.95 x n)-th smallest (NULL when none has one).
WITH volume AS (
    -- the request counts and token sums every monthly model reads (int_requests_monthly), by route
    SELECT
        month,
        route,
        CAST(sum(requests) AS BIGINT) AS requests,
        sum(cache_hit_input_tokens) AS cache_hit_input_tokens,
        sum(cache_miss_input_tokens) AS cache_miss_input_tokens,
        sum(output_tokens) AS output_tokens,
        sum(reasoning_tokens) AS reasoning_tokens,
        sum(cache_write_5m_input_tokens) AS cache_write_5m_input_tokens,
        sum(cache_write_1h_input_tokens) AS cache_write_1h_input_tokens,
        sum(web_search_calls) AS web_search_calls,
        CAST(coalesce(sum(unpriced_requests) FILTER (WHERE route = 'api'), 0) AS BIGINT) AS unpriced_requests
    FROM intermediate.int_requests_monthly
    GROUP BY month, route
),
unknown AS (
    SELECT month, route, CAST(sum(latency_unknown) AS BIGINT) AS latency_unknown
    FROM intermediate.int_route_volume_daily
    GROUP BY month, route
),
tasks AS (
    SELECT month, route, CAST(sum(route_tasks) AS BIGINT) AS tasks
    FROM intermediate.int_team_usage_daily
    GROUP BY month, route
),
histogram AS (
    SELECT month, route, struct_extract(h, 'latency_ms') AS latency_ms, sum(struct_extract(h, 'n')) AS n
    FROM (SELECT month, route, unnest(latencies) AS h FROM intermediate.int_route_volume_daily) AS days
    GROUP BY month, route, struct_extract(h, 'latency_ms')
),
cumulative AS (
    SELECT
        *,
        sum(n) OVER (PARTITION BY month, route ORDER BY latency_ms ROWS UNBOUNDED PRECEDING) AS upto,
        sum(n) OVER (PARTITION BY month, route) AS total
    FROM histogram
),
percentiles AS (
    -- the quantile_disc position of p50 and p95 among n values (quantile_position)
    SELECT
        month,
        route,
        min(latency_ms) FILTER (WHERE upto >= quantile_position(total, 0.5)) AS p50_latency_ms,
        min(latency_ms) FILTER (WHERE upto >= quantile_position(total, 0.95)) AS p95_latency_ms
    FROM cumulative
    GROUP BY month, route
)
SELECT v.*, u.latency_unknown, t.tasks, p.p50_latency_ms, p.p95_latency_ms
FROM volume AS v
JOIN unknown AS u USING (month, route)
JOIN tasks AS t USING (month, route)
LEFT JOIN percentiles AS p USING (month, route)
