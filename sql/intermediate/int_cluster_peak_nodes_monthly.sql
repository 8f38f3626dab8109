-- grain: one row per cluster x month (with self-hosted requests)
-- materialized: table
-- unique_key: cluster_id, month
-- description: The nodes each cluster had in service at its busiest clock hour of the month (the hour the most tokens started in, every attempt counted): the node-hours provisioned within that hour (int_cluster_nodes_hourly: committed, owned hardware in service and every charge that buys node-hours), rounded up. Hours that tie for the most tokens: the one with the fewest nodes. A node provisioned for some hours of the month counts only when it was there at that hour.
-- column cluster_id VARCHAR: The cluster.
-- column month DATE: First day of the month (UTC).
-- column peak_hour_start TIMESTAMP: The busiest clock hour's start (UTC).
-- column peak_hour_tokens BIGINT: The tokens of every attempt started in it.
-- column committed_nodes_at_peak DECIMAL(38,6): Node-hours within that hour from owned hardware and committed charges (reserved, FOCUS committed): the committed nodes present then (a fraction when one was there part of the hour).
-- column on_demand_nodes_at_peak DECIMAL(38,6): Node-hours within that hour from every other charge that buys node-hours.
-- column nodes_at_peak BIGINT: committed_nodes_at_peak + on_demand_nodes_at_peak, rounded up: the nodes in service at the busiest hour.
WITH hours AS (
    -- the busiest hours of each day, and the month's most tokens in an hour
    SELECT
        cluster_id,
        month,
        peak_hour_tokens,
        peak_hours,
        max(peak_hour_tokens) OVER (PARTITION BY cluster_id, month) AS month_most
    FROM intermediate.int_cluster_requests_daily
),
busiest AS (
    SELECT cluster_id, month, peak_hour_tokens, unnest(peak_hours) AS hour_start
    FROM hours
    WHERE peak_hour_tokens = month_most
),
counted AS (
    SELECT
        b.cluster_id,
        b.month,
        b.hour_start,
        b.peak_hour_tokens,
        coalesce(n.committed_nodes, 0) AS committed_nodes_at_peak,
        coalesce(n.on_demand_nodes, 0) AS on_demand_nodes_at_peak
    FROM busiest AS b
    LEFT JOIN intermediate.int_cluster_nodes_hourly AS n ON n.cluster_id = b.cluster_id AND n.hour = b.hour_start
),
ranked AS (
    SELECT
        *,
        row_number() OVER (
            PARTITION BY cluster_id, month ORDER BY committed_nodes_at_peak + on_demand_nodes_at_peak, hour_start
        ) AS rank_in_month
    FROM counted
)
SELECT
    cluster_id,
    month,
    hour_start AS peak_hour_start,
    peak_hour_tokens,
    committed_nodes_at_peak,
    on_demand_nodes_at_peak,
    CAST(ceil(committed_nodes_at_peak + on_demand_nodes_at_peak) AS BIGINT) AS nodes_at_peak
FROM ranked
WHERE rank_in_month = 1
