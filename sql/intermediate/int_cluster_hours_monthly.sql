-- grain: one row per cluster x month
-- materialized: table
-- unique_key: cluster_id, month
-- description: Provisioned and busy hours of each cluster in each month of the spine (merged intervals clipped to the month), and the share of self-hosted request time that belongs to attempts of accepted tasks.
WITH clipped AS (
    SELECT
        i.cluster_id,
        m.month,
        i.interval_kind,
        date_diff('millisecond', greatest(i.interval_start, m.month_start), least(i.interval_end, m.month_end)) AS ms
    FROM intermediate.int_cluster_intervals_merged AS i
    JOIN intermediate.int_months_spined AS m
        ON i.interval_start < m.month_end AND i.interval_end > m.month_start
),
hours AS (
    SELECT
        cluster_id,
        month,
        coalesce(sum(ms) FILTER (WHERE interval_kind = 'provisioned'), 0) AS provisioned_ms,
        coalesce(sum(ms) FILTER (WHERE interval_kind = 'busy'), 0) AS busy_ms
    FROM clipped
    GROUP BY cluster_id, month
),
request_time AS (
    SELECT
        r.cluster_id,
        r.month,
        count(*) AS requests,
        sum(r.latency_ms) AS request_ms,
        coalesce(sum(r.latency_ms) FILTER (WHERE t.accepted), 0) AS accepted_task_request_ms
    FROM intermediate.int_requests_priced AS r
    JOIN intermediate.int_tasks_resolved AS t USING (task_id)
    WHERE r.route = 'self_hosted' AND r.cluster_id IS NOT NULL
    GROUP BY r.cluster_id, r.month
),
peak AS (
    SELECT cluster_id, month, max(n) AS peak_hour_requests
    FROM (
        SELECT cluster_id, month, date_trunc('hour', started_at) AS hour, count(*) AS n
        FROM intermediate.int_requests_priced
        WHERE route = 'self_hosted' AND cluster_id IS NOT NULL
        GROUP BY ALL
    )
    GROUP BY cluster_id, month
)
SELECT
    h.cluster_id,
    h.month,
    h.provisioned_ms,
    h.busy_ms,
    coalesce(rt.requests, 0) AS requests,
    coalesce(rt.request_ms, 0) AS request_ms,
    coalesce(rt.accepted_task_request_ms, 0) AS accepted_task_request_ms,
    coalesce(p.peak_hour_requests, 0) AS peak_hour_requests
FROM hours AS h
LEFT JOIN request_time AS rt USING (cluster_id, month)
LEFT JOIN peak AS p USING (cluster_id, month)
