-- grain: one row per cluster x month (with self-hosted requests)
-- materialized: table
-- unique_key: cluster_id, month
-- description: The nodes each cluster had in service at its busiest clock hour of the month (the hour the most tokens started in, every attempt counted): the node-hours provisioned within that hour (committed, owned hardware in service and every charge that buys node-hours, each at an even rate over its period, as in int_cluster_nodes_monthly), rounded up. Hours that tie for the most tokens: the one with the fewest nodes. A node provisioned for some hours of the month counts only when it was there at that hour.
-- column cluster_id: The cluster.
-- column month: First day of the month (UTC).
-- column peak_hour_start: The busiest clock hour's start (UTC).
-- column peak_hour_tokens: The tokens of every attempt started in it.
-- column committed_nodes_at_peak: Node-hours within that hour from owned hardware and committed charges (reserved, FOCUS committed): the committed nodes present then (a fraction when one was there part of the hour).
-- column on_demand_nodes_at_peak: Node-hours within that hour from every other charge that buys node-hours.
-- column nodes_at_peak: committed_nodes_at_peak + on_demand_nodes_at_peak, rounded up: the nodes in service at the busiest hour.
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
sources AS (
    -- node-hours bought over a period, each at an even rate over it (int_cluster_nodes_monthly's sources)
    SELECT
        cluster_id,
        charge_start AS rate_start,
        charge_end AS rate_end,
        cost_class = 'committed' AS committed,
        node_hours,
        charge_seconds AS seconds
    FROM intermediate.int_cluster_charge_lines
    WHERE node_hours > 0 AND charge_seconds > 0
),
at_hour AS (
    SELECT
        b.cluster_id,
        b.month,
        b.hour_start,
        b.peak_hour_tokens,
        coalesce(sum(money_div(s.node_hours * date_diff('second', greatest(b.hour_start, s.rate_start),
            least(b.hour_start + INTERVAL 1 HOUR, s.rate_end)), s.seconds)) FILTER (WHERE s.committed), 0)
            AS committed_charged,
        coalesce(sum(money_div(s.node_hours * date_diff('second', greatest(b.hour_start, s.rate_start),
            least(b.hour_start + INTERVAL 1 HOUR, s.rate_end)), s.seconds)) FILTER (WHERE NOT s.committed), 0)
            AS on_demand
    FROM busiest AS b
    LEFT JOIN sources AS s
        ON s.cluster_id = b.cluster_id AND s.rate_start < b.hour_start + INTERVAL 1 HOUR AND s.rate_end > b.hour_start
    GROUP BY b.cluster_id, b.month, b.hour_start, b.peak_hour_tokens
),
owned AS (
    -- owned hardware in service within the hour: its nodes x the part of the hour
    SELECT
        b.cluster_id,
        b.hour_start,
        sum(money_div(h.nodes * date_diff('second', greatest(b.hour_start, CAST(h.in_service_date AS TIMESTAMP)),
            least(b.hour_start + INTERVAL 1 HOUR, coalesce(CAST(h.retired_date AS TIMESTAMP), b.hour_start + INTERVAL 1 HOUR))),
            3600)) AS owned_nodes
    FROM busiest AS b
    JOIN staging.stg_ledger__hardware AS h
        ON h.cluster_id = b.cluster_id AND CAST(h.in_service_date AS TIMESTAMP) < b.hour_start + INTERVAL 1 HOUR
        AND coalesce(CAST(h.retired_date AS TIMESTAMP), b.hour_start + INTERVAL 1 HOUR) > b.hour_start
    GROUP BY b.cluster_id, b.hour_start
),
counted AS (
    SELECT
        a.cluster_id,
        a.month,
        a.hour_start,
        a.peak_hour_tokens,
        CAST(a.committed_charged + coalesce(o.owned_nodes, 0) AS DECIMAL(38, 6)) AS committed_nodes_at_peak,
        CAST(a.on_demand AS DECIMAL(38, 6)) AS on_demand_nodes_at_peak
    FROM at_hour AS a
    LEFT JOIN owned AS o USING (cluster_id, hour_start)
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
