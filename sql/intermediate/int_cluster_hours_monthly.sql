-- grain: one row per cluster x month
-- materialized: table
-- unique_key: cluster_id, month
-- description: Provisioned and busy hours of each cluster in each month of the spine (merged intervals clipped to the month), the share of self-hosted request time that belongs to accepted attempts, the tokens served (all attempts, and the accepted attempts'), the busiest hour's tokens, the observed capacity and the accepted attempts' p95 latency.
-- column cluster_id VARCHAR: The cluster.
-- column month DATE
-- column provisioned_ms HUGEINT: Milliseconds of the month the cluster was provisioned: charges that buy compute and owned hardware in service, overlaps counted once (0 when none).
-- column busy_ms HUGEINT
-- column requests BIGINT
-- column request_ms HUGEINT
-- column accepted_attempt_request_ms HUGEINT
-- column peak_hour_requests BIGINT
-- column tokens_served BIGINT
-- column accepted_tokens BIGINT
-- column peak_hour_tokens BIGINT
-- column observed_tokens_per_second DECIMAL(38,3)
-- column accepted_p95_latency_ms BIGINT
WITH clipped AS (
    SELECT
        i.cluster_id,
        m.month,
        date_diff('millisecond', greatest(i.interval_start, m.month_start), least(i.interval_end, m.month_end)) AS ms
    FROM intermediate.int_cluster_intervals_merged AS i
    JOIN intermediate.int_months_spined AS m
        ON i.interval_start < m.month_end AND i.interval_end > m.month_start
    WHERE i.interval_kind = 'provisioned'
),
provisioned AS (
    SELECT cluster_id, month, sum(ms) AS provisioned_ms FROM clipped GROUP BY cluster_id, month
),
clusters AS (
    SELECT cluster_id, month FROM provisioned
    UNION
    SELECT cluster_id, month FROM intermediate.int_cluster_busy_monthly
)
SELECT
    c.cluster_id,
    c.month,
    coalesce(p.provisioned_ms, 0) AS provisioned_ms,
    coalesce(b.busy_ms, 0) AS busy_ms,
    coalesce(rt.requests, 0) AS requests,
    coalesce(rt.request_ms, 0) AS request_ms,
    coalesce(rt.accepted_attempt_request_ms, 0) AS accepted_attempt_request_ms,
    coalesce(rt.peak_hour_requests, 0) AS peak_hour_requests,
    coalesce(rt.tokens_served, 0) AS tokens_served,
    coalesce(rt.accepted_tokens, 0) AS accepted_tokens,
    coalesce(rt.peak_hour_tokens, 0) AS peak_hour_tokens,
    rt.observed_tokens_per_second,
    rt.accepted_p95_latency_ms
FROM clusters AS c
JOIN intermediate.int_months_spined USING (month)
LEFT JOIN provisioned AS p USING (cluster_id, month)
LEFT JOIN intermediate.int_cluster_busy_monthly AS b USING (cluster_id, month)
LEFT JOIN intermediate.int_cluster_requests_monthly AS rt USING (cluster_id, month)
