-- grain: one row per cluster x clock hour (with self-hosted requests started in it, or API requests in a month the cluster served requests)
-- materialized: table
-- unique_key: cluster_id, hour
-- description: Each cluster's hours of demand, and the hours of a month it served in which the API was asked for work (its tokens 0 there), and the nodes it had then: the tokens of every attempt started in the hour on the cluster (int_demand_hourly), and the node-hours provisioned within the hour, committed (owned hardware in service, committed charges: reserved, FOCUS committed) and on demand (every other charge that buys node-hours), each source at an even rate over its period as in int_cluster_nodes_monthly: a node there all hour is 1, for half of it 0.5. What the busiest hour had in service (int_cluster_peak_nodes_monthly) and what the on-demand hours enabled (marts.monthly_counterfactual) and the spare capacity API work moved onto the cluster would find in each hour (marts.monthly_workload_moves) are read from here.
-- column cluster_id VARCHAR: The cluster.
-- column hour TIMESTAMP: The clock hour's start (UTC).
-- column month DATE: First day of the hour's month (UTC).
-- column tokens HUGEINT: Tokens of every attempt started in the hour on the cluster (input including cache hits and writes, output, reasoning).
-- column committed_nodes DECIMAL(38,6): Node-hours within the hour from owned hardware in service and committed charges.
-- column on_demand_nodes DECIMAL(38,6): Node-hours within the hour from every other charge that buys node-hours.
WITH own_hours AS (
    SELECT cluster_id, hour, month, sum(tokens) AS tokens
    FROM intermediate.int_demand_hourly
    WHERE route = 'self_hosted' AND cluster_id IS NOT NULL
    GROUP BY cluster_id, hour, month
),
served_months AS (
    SELECT DISTINCT cluster_id, month FROM own_hours
),
-- the hours the API was asked for work in a month the cluster served: the hours API work moved onto it would run in
api_hours AS (
    SELECT DISTINCT c.cluster_id, a.hour, a.month, CAST(0 AS HUGEINT) AS tokens
    FROM intermediate.int_demand_hourly AS a
    JOIN served_months AS c USING (month)
    WHERE a.route = 'api'
),
all_hours AS (
    SELECT * FROM own_hours
    UNION ALL
    SELECT * FROM api_hours
),
hours AS (
    SELECT cluster_id, hour, month, sum(tokens) AS tokens
    FROM all_hours
    GROUP BY cluster_id, hour, month
),
charged AS (
    SELECT
        h.cluster_id,
        h.hour,
        coalesce(sum(money_div(c.node_hours * date_diff('second', greatest(h.hour, c.charge_start),
            least(h.hour + INTERVAL 1 HOUR, c.charge_end)), c.charge_seconds)) FILTER (WHERE c.cost_class = 'committed'), 0)
            AS committed_charged,
        coalesce(sum(money_div(c.node_hours * date_diff('second', greatest(h.hour, c.charge_start),
            least(h.hour + INTERVAL 1 HOUR, c.charge_end)), c.charge_seconds)) FILTER (WHERE c.cost_class <> 'committed'), 0)
            AS on_demand
    FROM hours AS h
    LEFT JOIN intermediate.int_cluster_charge_lines AS c
        ON c.cluster_id = h.cluster_id AND c.node_hours > 0 AND c.charge_seconds > 0
        AND c.charge_start < h.hour + INTERVAL 1 HOUR AND c.charge_end > h.hour
    GROUP BY h.cluster_id, h.hour
),
owned AS (
    SELECT
        h.cluster_id,
        h.hour,
        sum(money_div(a.nodes * date_diff('second', greatest(h.hour, CAST(a.in_service_date AS TIMESTAMP)),
            least(h.hour + INTERVAL 1 HOUR, coalesce(CAST(a.retired_date AS TIMESTAMP), h.hour + INTERVAL 1 HOUR))),
            3600)) AS owned_nodes
    FROM hours AS h
    JOIN staging.stg_ledger__hardware AS a
        ON a.cluster_id = h.cluster_id AND CAST(a.in_service_date AS TIMESTAMP) < h.hour + INTERVAL 1 HOUR
        AND coalesce(CAST(a.retired_date AS TIMESTAMP), h.hour + INTERVAL 1 HOUR) > h.hour
    GROUP BY h.cluster_id, h.hour
)
SELECT
    h.cluster_id,
    h.hour,
    h.month,
    CAST(h.tokens AS HUGEINT) AS tokens,
    CAST(c.committed_charged + coalesce(o.owned_nodes, 0) AS DECIMAL(38, 6)) AS committed_nodes,
    CAST(c.on_demand AS DECIMAL(38, 6)) AS on_demand_nodes
FROM hours AS h
JOIN charged AS c USING (cluster_id, hour)
LEFT JOIN owned AS o USING (cluster_id, hour)
