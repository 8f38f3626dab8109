-- grain: one row per cluster x month (with self-hosted requests)
-- materialized: table
-- incremental: months
-- unique_key: cluster_id, month
-- description: Each cluster's self-hosted requests in a month: count, request time (sum of latencies), the part of it that belongs to attempts of accepted tasks, and the requests started in the busiest clock hour. Incremental: only months touched by new data are recomputed.
WITH requests AS (
    SELECT cluster_id, month, task_id, latency_ms, date_trunc('hour', started_at) AS hour
    FROM scoped.requests_of_months
    WHERE route = 'self_hosted' AND cluster_id IS NOT NULL
),
request_time AS (
    SELECT
        r.cluster_id,
        r.month,
        count(*) AS requests,
        sum(r.latency_ms) AS request_ms,
        coalesce(sum(r.latency_ms) FILTER (WHERE t.accepted), 0) AS accepted_task_request_ms
    FROM requests AS r
    JOIN intermediate.int_tasks_resolved AS t USING (task_id)
    GROUP BY r.cluster_id, r.month
),
peak AS (
    SELECT cluster_id, month, max(n) AS peak_hour_requests
    FROM (SELECT cluster_id, month, hour, count(*) AS n FROM requests GROUP BY ALL)
    GROUP BY cluster_id, month
)
SELECT rt.*, p.peak_hour_requests
FROM request_time AS rt
JOIN peak AS p USING (cluster_id, month)
