-- grain: one row per cluster x day (with self-hosted request time)
-- materialized: table
-- incremental: days
-- input requests_near_days: intermediate.int_requests_priced (cluster_id, route, latency_ms, started_at, ended_at), day started_at, lookback ended_at
-- unique_key: cluster_id, day
-- description: Busy time of each cluster in each day (UTC): the union of its self-hosted request intervals [started_at, started_at + latency), overlaps counted once. Intervals are cut at midnight and their union is measured per cluster and day (each piece adds what lies after the latest end before it), so a day's union never depends on another day. Incremental: only the days touched by new data are recomputed (from their requests and the earlier ones whose intervals run into them); int_cluster_busy_monthly sums the days.
-- column cluster_id VARCHAR: The cluster.
-- column day DATE: The day (UTC).
-- column month DATE
-- column busy_ms HUGEINT: Milliseconds of the day during which at least one self-hosted request of the cluster was running (overlapping requests counted once).
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
    -- the latest end among the day's earlier pieces (in order of start); NULL for the first
    SELECT
        *,
        max(e) OVER (PARTITION BY cluster_id, day ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
    FROM pieces
)
-- the union's length without forming its islands: each piece adds the part of it after every earlier piece's end
-- (nothing when an earlier one covers it). These parts tile each island (a piece that starts after the latest end
-- so far opens a new one), and date_diff counts whole milliseconds between instants (the difference of their
-- epoch milliseconds), which adds up along adjacent parts: the same sum as over the merged islands
SELECT
    cluster_id,
    CAST(day AS DATE) AS day,
    CAST(date_trunc('month', day) AS DATE) AS month,
    sum(
        CASE
            WHEN prev_end IS NULL THEN date_diff('millisecond', s, e)
            WHEN e > greatest(s, prev_end) THEN date_diff('millisecond', greatest(s, prev_end), e)
            ELSE 0
        END
    ) AS busy_ms
FROM ordered
GROUP BY ALL
