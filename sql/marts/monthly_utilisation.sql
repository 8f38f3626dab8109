-- grain: one row per month x cluster
-- materialized: table
-- unique_key: month, cluster_id
-- description: How much of each cluster's capacity went to accepted work, to failed work and to nothing, in node-hours and in dollars of its fixed cost. A batching cluster sells capacity (tokens per second at the SLO), so its utilisation is measured in tokens: productive node-hours = the accepted attempts' tokens / (capacity per node x 3,600); used node-hours likewise from every attempt's tokens. Time with any request in flight (in_flight_share) is shown beside it and is not a utilisation: one request in flight makes the whole cluster busy. Capacity per node comes from the load-test sweeps in force over the month (points within the self-hosted SLO), weighted by provisioned node-hours, else from the request log (observed, a lower bound).
-- settings: capacity_latency_headroom, slo_ms_self_hosted
-- column month DATE: First day of the month (UTC).
-- column cluster_id VARCHAR: The self-hosted cluster.
-- column provisioned_hours DECIMAL(18,6): Hours in the month the cluster was billed (cluster charges) or in service (owned hardware), overlaps counted once.
-- column provisioned_node_hours DECIMAL(38,6): Node-hours provisioned in the month: on-demand and reserved charges' quantities in node_hour (or gpu_hour / the gpus_per_node setting; one node over the period without a quantity), owned hardware's nodes x its hours in service, FOCUS compute usage rows' consumed hours. Storage and network rows are cost, never node-hours. Overlapping nodes each count (an on-demand node beside an owned one adds its hours).
-- column busy_hours DECIMAL(18,6): Hours in the month with at least one request running on the cluster (the union of request intervals, overlaps counted once).
-- column in_flight_share DOUBLE: busy_hours / provisioned_hours: the share of time with any request in flight, however many requests the cluster could batch. Not a utilisation.
-- column in_flight_accepted_hours DECIMAL(18,6): busy_hours x (request time of accepted attempts / all request time): the in-flight time that belongs to accepted attempts.
-- column used_node_hours DECIMAL(38,6): Every attempt's tokens / (capacity per node x 3,600): the node-hours all work used; NULL without capacity.
-- column productive_node_hours DECIMAL(38,6): The accepted attempts' tokens (input + output + reasoning) / (capacity per node x 3,600): the node-hours accepted work used of the capacity; NULL without capacity.
-- column productive_utilisation DOUBLE: The accepted attempts' tokens / monthly_token_capacity (= productive_node_hours / provisioned_node_hours): the share of the capacity paid for that went to accepted work. Above 1 is published as computed (capacity_contradiction); NULL without capacity.
-- column token_utilisation DOUBLE: tokens_served / monthly_token_capacity: the duty cycle; NULL without capacity.
-- column peak_hour_tokens_per_second DECIMAL(38,3): The tokens of every attempt started in the month's busiest clock hour / 3,600.
-- column peak_to_average_tokens DOUBLE: That hour's tokens / the mean tokens per provisioned hour: how far the busiest hour is above the average one; NULL without tokens or provisioned hours.
-- column peak_to_average_requests DOUBLE: Requests in the busiest hour / mean requests per provisioned hour; NULL without requests or provisioned hours.
-- column max_token_utilisation_at_peak DOUBLE: 1 / peak_to_average_tokens: the highest duty cycle a cluster sized for its busiest hour can reach (without autoscaling).
-- column capacity_tokens_per_second DECIMAL(38,3): Aggregate tokens per second (input + output) the cluster serves within the self-hosted latency SLO over its provisioned time: capacity per node x the month's mean node count (provisioned node-hours / provisioned hours); NULL when unknown (or no sweep point met the SLO).
-- column capacity_per_node_tokens_per_second DECIMAL(38,3): Tokens per second one node serves within the SLO: each sweep's capacity / its nodes, the sweeps in force over the month weighted by the node-hours provisioned while each was (observed capacity per node for the part before the first sweep).
-- column capacity_source VARCHAR: 'sweep' (load-tests), 'observed' (the best 5-minute window of the request log within the SLO: a lower bound), 'mixed' (observed before the cluster's first sweep, then swept) or 'observed_above_sweep' (production served more per node within the SLO than the sweep says: that figure is the capacity); NULL without either.
-- column tokens_served BIGINT: Tokens the cluster processed in the month (cache-hit and cache-miss input, output and reasoning, all requests).
-- column fixed_cost_usd DECIMAL(38,12): The cluster's fixed cost: its own charges, hardware amortisation and operating costs, and its share of the operating costs booked to no cluster (split by provisioned node-hours; evenly when no cluster has any).
-- column accepted_work_usd DECIMAL(38,12): fixed_cost_usd x productive_utilisation: the fixed cost that bought accepted work (x the accepted share of tokens when utilisation is above 1); NULL without capacity.
-- column failed_work_usd DECIMAL(38,12): fixed_cost_usd x (token_utilisation - productive_utilisation): failed, retried, rejected and too-slow attempts; NULL without capacity.
-- column idle_cost_usd DECIMAL(38,12): fixed_cost_usd - accepted_work_usd - failed_work_usd: capacity paid for and not used (the rounding remainder included, so the three add up to the fixed cost exactly); 0 when utilisation is above 1.
-- column self_hosted_cost_per_million_tokens_served DECIMAL(38,12): fixed_cost_usd / tokens_served x 1e6: what a million of the cluster's tokens cost this month; NULL without tokens, or without any cost of the cluster loaded (an unknown cost, not a free token).
-- column requests BIGINT: Self-hosted requests started on the cluster in the month.
-- column peak_hour_requests BIGINT: Requests started in the busiest clock hour of the month.
-- column monthly_token_capacity DECIMAL(38,3): provisioned_node_hours x capacity_per_node_tokens_per_second x 3,600: tokens the cluster could serve in the month at the SLO.
-- column sweep_id VARCHAR: The sweep the capacity comes from (capacity_source 'sweep').
-- column sweep_points_within_slo BIGINT: Points of that sweep whose p95 latency is within the SLO (0: the cluster met the SLO at no measured concurrency).
-- column capacity_mix_warning BOOLEAN: A sweep in force had an input share of tokens (when it reports output_tokens_per_second) more than 10 points away from the month's production input share on the cluster: its capacity may not hold for this mix.
-- column sweep_nodes_assumed BOOLEAN: The cluster ran more than one node in the month and a sweep in force does not say how many nodes it ran on (taken as 1).
-- column accepted_tokens BIGINT: Tokens (input + output + reasoning) of the cluster's accepted attempts in the month.
-- column capacity_contradiction BOOLEAN: Production contradicts the capacity figure: the cluster served more tokens than its capacity at the SLO (token_utilisation above 1; not without provisioned node-hours, where there is no capacity to contradict), or in some 5-minute window within the SLO more tokens per second per node than its sweep says (capacity_source 'observed_above_sweep', the observed figure is then the capacity).
-- column sweep_mix_unknown BOOLEAN: A sweep in force does not report output_tokens_per_second, so its capacity cannot be checked against production's mix of input and output tokens.
-- column capacity_measured_after BOOLEAN: No sweep was in force in the month: its capacity is the cluster's first sweep, measured within 60 days after the month's end.
-- column accepted_p95_latency_ms BIGINT: The 95th percentile latency of the cluster's accepted attempts in the month (the ceil(0.95 x n)-th smallest); NULL without one.
-- column nodes_in_service BIGINT: The nodes provisioned during the busiest clock hour (committed and on demand present then, intermediate.int_cluster_peak_nodes_monthly), rounded up: a node there for a few hours of the month counts only when those hours hold the peak. Without requests, provisioned_node_hours / provisioned_hours rounded up; NULL without provisioned time.
-- column peak_hour_share_of_capacity DOUBLE: peak_hour_tokens_per_second / (capacity_per_node_tokens_per_second x nodes_in_service): how much of its nodes' capacity the busiest hour used; NULL without capacity.
-- column sweep_optimistic BOOLEAN: The accepted attempts' p95 latency is above the latency_headroom setting's share (0.90) of the self-hosted SLO while the busiest hour used under half the capacity of the nodes in service (capacity from a sweep): production is near its latency limit far below what the load test says the cluster serves; or queue_pressure. FALSE when neither can be told (no SLO and no engine metrics).
-- column queue_pressure BOOLEAN: The serving engines reported requests waiting in a clock hour in which the cluster's engines counted under half the tokens the capacity of its nodes in service serves in an hour: requests queue far below what the load test says the cluster serves.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
h AS (
    SELECT
        *,
        CASE WHEN request_ms > 0 THEN accepted_attempt_request_ms / request_ms ELSE 0 END AS productive_share
    FROM intermediate.int_cluster_hours_monthly
),
costs AS (
    SELECT month, cluster_id, sum(amount_usd) AS amount_usd FROM marts.monthly_self_hosted_cost GROUP BY month, cluster_id
),
clusters AS (
    SELECT
        h.*,
        c.capacity_tokens_per_second,
        c.capacity_source,
        c.monthly_token_capacity,
        c.sweep_id,
        c.sweep_points_within_slo,
        c.provisioned_node_hours,
        c.capacity_per_node_tokens_per_second,
        c.capacity_mix_warning,
        c.sweep_nodes_assumed,
        c.sweep_mix_unknown,
        c.observed_above_sweep,
        c.capacity_measured_after,
        q.least_waiting_hour_tokens,
        coalesce(own.amount_usd, 0) AS own_cost_usd,
        coalesce(shared.amount_usd, 0) AS shared_cost_usd,
        coalesce(sum(c.provisioned_node_hours) OVER (PARTITION BY h.month), 0) AS month_node_hours,
        count(*) OVER (PARTITION BY h.month) AS month_clusters,
        -- the nodes there at the busiest hour; without requests, the month's node-hours over its hours
        coalesce(pk.nodes_at_peak, CASE WHEN h.provisioned_ms > 0
            THEN CAST(ceil(c.provisioned_node_hours / CAST(h.provisioned_ms / 3600000.0 AS DECIMAL(18, 6))) AS BIGINT) END)
            AS nodes_in_service
    FROM h
    LEFT JOIN intermediate.int_cluster_capacity_monthly AS c USING (cluster_id, month)
    LEFT JOIN intermediate.int_cluster_peak_nodes_monthly AS pk USING (cluster_id, month)
    LEFT JOIN intermediate.int_engine_queue_monthly AS q USING (cluster_id, month)
    LEFT JOIN costs AS own ON own.month = h.month AND own.cluster_id = h.cluster_id
    LEFT JOIN costs AS shared ON shared.month = h.month AND shared.cluster_id IS NULL
),
fixed AS (
    SELECT
        *,
        CAST(own_cost_usd + CASE
            WHEN shared_cost_usd = 0 THEN 0
            WHEN month_node_hours > 0 THEN money_share(shared_cost_usd, coalesce(provisioned_node_hours, 0), month_node_hours)
            ELSE money_div(shared_cost_usd, month_clusters)
        END AS DECIMAL(38, 12)) AS fixed_cost_usd,
        -- the tokens the fixed cost is spread over: the capacity, or what was served when that is more
        CASE WHEN monthly_token_capacity > 0 THEN greatest(monthly_token_capacity, tokens_served) END AS cost_basis_tokens
    FROM clusters
),
split AS (
    SELECT
        *,
        money_count_share(fixed_cost_usd, accepted_tokens, cost_basis_tokens) AS accepted_work_usd,
        -- at or above the capacity nothing is idle: failed work takes the rest, so no rounding makes idle negative
        CASE WHEN tokens_served >= cost_basis_tokens THEN CAST(fixed_cost_usd - money_count_share(fixed_cost_usd, accepted_tokens,
            cost_basis_tokens) AS DECIMAL(38, 12))
        ELSE money_count_share(fixed_cost_usd, tokens_served - accepted_tokens, cost_basis_tokens) END AS failed_work_usd
    FROM fixed
)
SELECT
    month,
    cluster_id,
    CAST(provisioned_ms / 3600000.0 AS DECIMAL(18, 6)) AS provisioned_hours,
    provisioned_node_hours,
    CAST(busy_ms / 3600000.0 AS DECIMAL(18, 6)) AS busy_hours,
    CASE WHEN provisioned_ms > 0 THEN CAST(busy_ms / provisioned_ms AS DOUBLE) END AS in_flight_share,
    CAST(busy_ms * productive_share / 3600000.0 AS DECIMAL(18, 6)) AS in_flight_accepted_hours,
    CASE WHEN capacity_per_node_tokens_per_second > 0
        THEN CAST(tokens_served / (capacity_per_node_tokens_per_second * 3600) AS DECIMAL(38, 6)) END
        AS used_node_hours,
    CASE WHEN capacity_per_node_tokens_per_second > 0
        THEN CAST(accepted_tokens / (capacity_per_node_tokens_per_second * 3600) AS DECIMAL(38, 6)) END
        AS productive_node_hours,
    CASE WHEN monthly_token_capacity > 0 THEN CAST(accepted_tokens / monthly_token_capacity AS DOUBLE) END
        AS productive_utilisation,
    CASE WHEN monthly_token_capacity > 0 THEN CAST(tokens_served / monthly_token_capacity AS DOUBLE) END
        AS token_utilisation,
    CAST(peak_hour_tokens / 3600.0 AS DECIMAL(38, 3)) AS peak_hour_tokens_per_second,
    CASE WHEN tokens_served > 0 AND provisioned_ms > 0
        THEN peak_hour_tokens / (tokens_served / (provisioned_ms / 3600000.0))
    END AS peak_to_average_tokens,
    CASE WHEN requests > 0 AND provisioned_ms > 0
        THEN peak_hour_requests / (requests / (provisioned_ms / 3600000.0))
    END AS peak_to_average_requests,
    CASE WHEN peak_hour_tokens > 0 AND provisioned_ms > 0
        THEN (tokens_served / (provisioned_ms / 3600000.0)) / peak_hour_tokens
    END AS max_token_utilisation_at_peak,
    capacity_tokens_per_second,
    capacity_per_node_tokens_per_second,
    capacity_source,
    tokens_served,
    fixed_cost_usd,
    accepted_work_usd,
    failed_work_usd,
    CASE WHEN cost_basis_tokens IS NOT NULL
        THEN CAST(fixed_cost_usd - accepted_work_usd - failed_work_usd AS DECIMAL(38, 12)) END AS idle_cost_usd,
    CASE WHEN tokens_served > 0 AND fixed_cost_usd <> 0 THEN money_count_share(fixed_cost_usd, 1000000, tokens_served) END
        AS self_hosted_cost_per_million_tokens_served,
    requests,
    peak_hour_requests,
    monthly_token_capacity,
    sweep_id,
    sweep_points_within_slo,
    capacity_mix_warning,
    sweep_nodes_assumed,
    accepted_tokens,
    -- without provisioned node-hours there is no capacity to contradict (the cluster's bills are missing)
    coalesce(monthly_token_capacity > 0 AND tokens_served > monthly_token_capacity, FALSE)
    OR coalesce(observed_above_sweep, FALSE) AS capacity_contradiction,
    sweep_mix_unknown,
    coalesce(capacity_measured_after, FALSE) AS capacity_measured_after,
    accepted_p95_latency_ms,
    nodes_in_service,
    CASE WHEN capacity_per_node_tokens_per_second > 0 AND nodes_in_service > 0
        THEN CAST(peak_hour_tokens AS DOUBLE) / (3600 * capacity_per_node_tokens_per_second * nodes_in_service)
    END AS peak_hour_share_of_capacity,
    -- near the latency limit (p95 above headroom x SLO) with the busiest hour under half the sweep's capacity of the
    -- nodes in service: peak_hour_tokens / 3,600 < capacity per node x nodes / 2, compared without a division
    coalesce(
        capacity_source IN ('sweep', 'mixed')
        AND accepted_p95_latency_ms > (SELECT st.capacity_latency_headroom * st.slo_ms_self_hosted FROM settings AS st)
        AND peak_hour_tokens * 2 < capacity_per_node_tokens_per_second * nodes_in_service * 3600,
        FALSE
    ) OR coalesce(least_waiting_hour_tokens * 2 < capacity_per_node_tokens_per_second * nodes_in_service * 3600, FALSE)
        AS sweep_optimistic,
    -- the engines queued requests in an hour the cluster served under half the capacity of its nodes in service
    coalesce(least_waiting_hour_tokens * 2 < capacity_per_node_tokens_per_second * nodes_in_service * 3600, FALSE)
        AS queue_pressure
FROM split
