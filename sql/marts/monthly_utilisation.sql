-- grain: one row per month x cluster
-- materialized: table
-- unique_key: month, cluster_id
-- description: How much of each cluster's provisioned time went to accepted work, and how much of its capacity at the SLO it used. Busy hours are the union of request intervals (overlaps count once); productive hours are busy hours x the share of request time that belongs to accepted attempts. Capacity per node comes from the load-test sweeps in force over the month (points within the self-hosted SLO), weighted by provisioned node-hours, else from the request log (observed, a lower bound).
-- column month: First day of the month (UTC).
-- column cluster_id: The self-hosted cluster.
-- column provisioned_hours: Hours in the month the cluster was billed (cluster charges) or in service (owned hardware), overlaps counted once.
-- column busy_hours: Hours in the month with at least one request running on the cluster.
-- column productive_hours: busy_hours x (request time of accepted attempts / all request time): a failed retry of a task that was later accepted is busy, not productive.
-- column productive_utilisation: productive_hours / provisioned_hours; NULL when nothing was provisioned.
-- column peak_to_average: Requests in the busiest hour / mean requests per provisioned hour; NULL without requests or provisioned hours.
-- column capacity_tokens_per_second: Aggregate tokens per second (input + output) the cluster serves within the self-hosted latency SLO over its provisioned time: capacity per node x the month's mean node count (provisioned node-hours / provisioned hours); NULL when unknown (or no sweep point met the SLO).
-- column capacity_source: 'sweep' (load-tests), 'observed' (the best 5-minute window of the request log within the SLO: a lower bound) or 'mixed' (observed before the cluster's first sweep, then swept); NULL without either.
-- column tokens_served: Tokens the cluster processed in the month (cache-hit and cache-miss input, output and reasoning, all requests).
-- column token_utilisation: tokens_served / monthly_token_capacity: the duty cycle; NULL without capacity.
-- column requests: Self-hosted requests started on the cluster in the month.
-- column peak_hour_requests: Requests started in the busiest clock hour of the month.
-- column monthly_token_capacity: provisioned_node_hours x capacity_per_node_tokens_per_second x 3,600: tokens the cluster could serve in the month at the SLO.
-- column sweep_id: The sweep the capacity comes from (capacity_source 'sweep').
-- column provisioned_node_hours: Node-hours provisioned in the month: on-demand and reserved charges' quantities in node_hour (or gpu_hour / the gpus_per_node setting; one node over the period without a quantity), owned hardware's nodes x its hours in service, FOCUS compute usage rows' consumed hours. Storage and network rows are cost, never node-hours. Overlapping nodes each count (an on-demand node beside an owned one adds its hours).
-- column capacity_per_node_tokens_per_second: Tokens per second one node serves within the SLO: each sweep's capacity / its nodes, the sweeps in force over the month weighted by the node-hours provisioned while each was (observed capacity per node for the part before the first sweep).
-- column capacity_mix_warning: A sweep in force had an input share of tokens (when it reports output_tokens_per_second) more than 10 points away from the month's production input share on the cluster: its capacity may not hold for this mix.
-- column sweep_nodes_assumed: The cluster ran more than one node in the month and a sweep in force does not say how many nodes it ran on (taken as 1).
-- column sweep_points_within_slo: Points of that sweep whose p95 latency is within the SLO (0: the cluster met the SLO at no measured concurrency).
WITH h AS (
    SELECT
        *,
        CASE WHEN request_ms > 0 THEN accepted_attempt_request_ms / request_ms ELSE 0 END AS productive_share
    FROM intermediate.int_cluster_hours_monthly
)
SELECT
    h.month,
    h.cluster_id,
    CAST(h.provisioned_ms / 3600000.0 AS DECIMAL(18, 6)) AS provisioned_hours,
    CAST(h.busy_ms / 3600000.0 AS DECIMAL(18, 6)) AS busy_hours,
    CAST(h.busy_ms * h.productive_share / 3600000.0 AS DECIMAL(18, 6)) AS productive_hours,
    CASE WHEN h.provisioned_ms > 0 THEN CAST(h.busy_ms * h.productive_share / h.provisioned_ms AS DOUBLE) END
        AS productive_utilisation,
    CASE WHEN h.requests > 0 AND h.provisioned_ms > 0
        THEN h.peak_hour_requests / (h.requests / (h.provisioned_ms / 3600000.0))
    END AS peak_to_average,
    c.capacity_tokens_per_second,
    c.capacity_source,
    h.tokens_served,
    CASE WHEN c.monthly_token_capacity > 0 THEN CAST(h.tokens_served / c.monthly_token_capacity AS DOUBLE) END
        AS token_utilisation,
    h.requests,
    h.peak_hour_requests,
    c.monthly_token_capacity,
    c.sweep_id,
    c.sweep_points_within_slo,
    c.provisioned_node_hours,
    c.capacity_per_node_tokens_per_second,
    c.capacity_mix_warning,
    c.sweep_nodes_assumed
FROM h
LEFT JOIN intermediate.int_cluster_capacity_monthly AS c USING (cluster_id, month)
