-- grain: one row per month x cluster
-- materialized: table
-- unique_key: month, cluster_id
-- description: Each cluster's month on its own: node-hours, capacity per node, tokens served, token and productive utilisation, the busiest hour, its fixed cost (its own charges, hardware and operating costs, and its share of the operating costs booked to no cluster, by node-hours), what a million of its tokens cost, and its idle cost. The month's verdict stays one, over all clusters (marts.monthly_break_even); a cluster whose token utilisation is under the clusters.idle_warning setting (0.05) is flagged here and named on the report's first screen with its idle dollars.
-- settings: clusters_idle_warning, planning_bursty_ratio
-- column month DATE: First day of the month (UTC).
-- column cluster_id VARCHAR: The self-hosted cluster.
-- column provisioned_node_hours DECIMAL(38,6): Node-hours provisioned in the month.
-- column nodes_in_service BIGINT: The nodes provisioned during the busiest clock hour, rounded up (marts.monthly_utilisation).
-- column capacity_per_node_tokens_per_second DECIMAL(38,3): Tokens per second one node serves within the SLO.
-- column capacity_source VARCHAR: Where the capacity comes from ('sweep', 'observed', 'mixed').
-- column tokens_served BIGINT: Tokens the cluster processed (input, output and reasoning, every attempt).
-- column token_utilisation DOUBLE: tokens_served / the month's token capacity.
-- column productive_utilisation DOUBLE: The accepted attempts' tokens / the month's token capacity.
-- column peak_hour_tokens_per_second DECIMAL(38,3): The busiest clock hour's tokens / 3,600.
-- column peak_to_average_tokens DOUBLE: The busiest hour's tokens / the mean per provisioned hour.
-- column fixed_cost_usd DECIMAL(38,12): The cluster's fixed cost (see marts.monthly_utilisation).
-- column self_hosted_cost_per_million_tokens_served DECIMAL(38,12): fixed_cost_usd / tokens_served x 1e6; NULL without tokens.
-- column accepted_work_usd DECIMAL(38,12): The fixed cost that bought accepted work.
-- column failed_work_usd DECIMAL(38,12): The fixed cost that went to failed, retried, rejected and too-slow attempts.
-- column idle_cost_usd DECIMAL(38,12): The fixed cost that bought capacity nothing used.
-- column is_idle BOOLEAN: token_utilisation is under the clusters.idle_warning setting: the cluster is mostly paid for doing nothing.
-- column is_bursty BOOLEAN: peak_to_average_tokens is above the planning.bursty_ratio setting (2.0): a cluster sized for its busiest hour (it cannot scale up within the hour) leaves most of its capacity to wait for peaks.
-- column accepted_p95_latency_ms BIGINT: The 95th percentile latency of the cluster's accepted attempts.
-- column sweep_optimistic BOOLEAN: Production ran near its latency limit (p95 above capacity.latency_headroom x the SLO) while its busiest hour used under half the sweep's capacity of its nodes: the load test overstates what it serves (see marts.monthly_utilisation).
WITH settings AS (SELECT * FROM staging.stg_ledger__settings)
SELECT
    u.month,
    u.cluster_id,
    u.provisioned_node_hours,
    u.nodes_in_service,
    u.capacity_per_node_tokens_per_second,
    u.capacity_source,
    u.tokens_served,
    u.token_utilisation,
    u.productive_utilisation,
    u.peak_hour_tokens_per_second,
    u.peak_to_average_tokens,
    u.fixed_cost_usd,
    u.self_hosted_cost_per_million_tokens_served,
    u.accepted_work_usd,
    u.failed_work_usd,
    u.idle_cost_usd,
    coalesce(u.token_utilisation < s.clusters_idle_warning, FALSE) AS is_idle,
    coalesce(u.peak_to_average_tokens > s.planning_bursty_ratio, FALSE) AS is_bursty,
    u.accepted_p95_latency_ms,
    u.sweep_optimistic
FROM marts.monthly_utilisation AS u
CROSS JOIN settings AS s
