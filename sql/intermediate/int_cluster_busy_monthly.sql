-- grain: one row per cluster x month (with self-hosted request time)
-- materialized: table
-- unique_key: cluster_id, month
-- description: Busy time of each cluster in each month: the union of its self-hosted request intervals [started_at, started_at + latency), overlaps counted once; the sum of its days (int_cluster_busy_daily), whose unions never overlap because intervals are cut at midnight.
-- column cluster_id VARCHAR: The cluster.
-- column month DATE
-- column busy_ms HUGEINT: Milliseconds of the month during which at least one self-hosted request of the cluster was running (overlapping requests counted once): the sum of its days.
SELECT cluster_id, month, sum(busy_ms) AS busy_ms
FROM intermediate.int_cluster_busy_daily
GROUP BY cluster_id, month
