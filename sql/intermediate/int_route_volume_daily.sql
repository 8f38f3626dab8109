-- grain: one row per day x route (with requests)
-- materialized: table
-- incremental: days
-- input requests_of_days: intermediate.int_requests_priced, day started_at
-- unique_key: day, route
-- description: Each route's request volume per day (UTC, by request start): requests, tokens, unpriced API requests, requests without a latency, and the histogram of the known latencies (latencies: one (latency_ms, n) per distinct latency), which int_route_volume_monthly adds up to exact monthly percentiles. Incremental: only the days touched by new data are recomputed.
SELECT
    day,
    month,
    route,
    CAST(sum(n) AS BIGINT) AS requests,
    sum(cache_hit_input_tokens) AS cache_hit_input_tokens,
    sum(cache_miss_input_tokens) AS cache_miss_input_tokens,
    sum(output_tokens) AS output_tokens,
    sum(reasoning_tokens) AS reasoning_tokens,
    sum(cache_write_5m_input_tokens) AS cache_write_5m_input_tokens,
    sum(cache_write_1h_input_tokens) AS cache_write_1h_input_tokens,
    sum(web_search_calls) AS web_search_calls,
    CAST(sum(unpriced_requests) AS BIGINT) AS unpriced_requests,
    CAST(coalesce(sum(n) FILTER (WHERE latency_ms IS NULL), 0) AS BIGINT) AS latency_unknown,
    list(struct_pack(latency_ms := latency_ms, n := n) ORDER BY latency_ms) FILTER (WHERE latency_ms IS NOT NULL)
        AS latencies
FROM (
    -- one row per day, route and latency first: the histogram, and the sums that go with it
    SELECT
        CAST(started_at AS DATE) AS day,
        month,
        route,
        latency_ms,
        count(*) AS n,
        sum(cache_hit_input_tokens) AS cache_hit_input_tokens,
        sum(cache_miss_input_tokens) AS cache_miss_input_tokens,
        sum(output_tokens) AS output_tokens,
        sum(reasoning_tokens) AS reasoning_tokens,
        sum(cache_write_5m_input_tokens) AS cache_write_5m_input_tokens,
        sum(cache_write_1h_input_tokens) AS cache_write_1h_input_tokens,
        sum(web_search_calls) AS web_search_calls,
        count(*) FILTER (WHERE route = 'api' AND NOT is_priced) AS unpriced_requests
    FROM scoped.requests_of_days
    GROUP BY CAST(started_at AS DATE), month, route, latency_ms
) AS by_latency
GROUP BY day, month, route
