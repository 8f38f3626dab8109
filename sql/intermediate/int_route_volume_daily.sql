-- grain: one row per day x route (with requests)
-- materialized: table
-- incremental: days
-- input requests_of_days: intermediate.int_requests_priced, day started_at
-- unique_key: day, route
-- description: Each route's requests per day (UTC, by request start) by latency: the requests without a latency (latency_unknown) and the histogram of the known latencies (latencies: one (latency_ms, n) per distinct latency), which int_route_volume_monthly adds up to exact monthly percentiles. The tokens and counts come from int_requests_monthly. Incremental: only the days touched by new data are recomputed.
-- column day DATE: The day (UTC) the requests started.
-- column month DATE
-- column route VARCHAR
-- column latency_unknown BIGINT: The route's requests of the day without a latency.
-- column latencies STRUCT(latency_ms BIGINT, n BIGINT)[]: The known latencies as a histogram: one (latency_ms, n) per distinct latency, in order.
SELECT
    day,
    month,
    route,
    CAST(coalesce(sum(n) FILTER (WHERE latency_ms IS NULL), 0) AS BIGINT) AS latency_unknown,
    list(struct_pack(latency_ms := latency_ms, n := n) ORDER BY latency_ms) FILTER (WHERE latency_ms IS NOT NULL)
        AS latencies
FROM (
    SELECT CAST(started_at AS DATE) AS day, month, route, latency_ms, count(*) AS n
    FROM scoped.requests_of_days
    GROUP BY CAST(started_at AS DATE), month, route, latency_ms
) AS by_latency
GROUP BY day, month, route
