-- grain: one row per cluster x day (with self-hosted request time)
-- materialized: table
-- incremental: days
-- input requests_near_days: intermediate.int_requests_priced (cluster_id, route, latency_ms, started_at, ended_at), day started_at, lookback ended_at
-- unique_key: cluster_id, day
-- description: Busy time of each cluster in each day (UTC): the union of its self-hosted request intervals [started_at, started_at + latency), overlaps counted once. Intervals are cut at midnight and merged per cluster and day (gaps and islands), so a day's union never depends on another day. Incremental: only the days touched by new data are recomputed (from their requests and the earlier ones whose intervals run into them); int_cluster_busy_monthly sums the days.
WITH intervals AS (
    SELECT cluster_id, started_at AS s, ended_at AS e
    FROM scoped.requests_near_days
    WHERE route = 'self_hosted' AND cluster_id IS NOT NULL AND latency_ms > 0
),
pieces AS (
    -- an interval within one day stays whole; one that crosses midnight is cut into its days
    SELECT cluster_id, date_trunc('day', s) AS day, s, e
    FROM intervals
    WHERE date_trunc('day', s) = date_trunc('day', e - INTERVAL 1 MICROSECOND)
    UNION ALL
    SELECT cluster_id, day, greatest(s, day) AS s, least(e, day + INTERVAL 1 DAY) AS e
    FROM (
        SELECT cluster_id, s, e, unnest(generate_series(date_trunc('day', s), e - INTERVAL 1 MICROSECOND, INTERVAL 1 DAY)) AS day
        FROM intervals
        WHERE date_trunc('day', s) < date_trunc('day', e - INTERVAL 1 MICROSECOND)
    ) AS days_of_interval
),
ordered AS (
    SELECT
        *,
        max(e) OVER (PARTITION BY cluster_id, day ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
    FROM pieces
),
islands AS (
    SELECT
        *,
        sum(CASE WHEN prev_end IS NULL OR s > prev_end THEN 1 ELSE 0 END)
            OVER (PARTITION BY cluster_id, day ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
    FROM ordered
),
merged AS (
    SELECT cluster_id, day, min(s) AS s, max(e) AS e
    FROM islands
    GROUP BY cluster_id, day, island
)
SELECT
    cluster_id,
    CAST(day AS DATE) AS day,
    CAST(date_trunc('month', day) AS DATE) AS month,
    sum(date_diff('millisecond', s, e)) AS busy_ms
FROM merged
GROUP BY ALL
