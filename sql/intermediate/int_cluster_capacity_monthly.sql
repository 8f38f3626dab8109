-- grain: one row per cluster x month (of int_cluster_hours_monthly)
-- materialized: table
-- unique_key: cluster_id, month
-- description: What each cluster can serve at the latency SLO, per node and in the month. Provisioned node-hours: cluster charges that buy compute (int_cluster_charge_lines.node_hours, spread evenly over each charge's period) and owned hardware in service (its nodes). A sweep's capacity is the highest tokens_per_second among its points whose p95 latency is within the self-hosted SLO (all points when there is no SLO; NULL when none is), / its nodes = capacity per node. A sweep holds from its measured_at (its last point) until the next sweep of the cluster; the month's capacity per node is the mean of the capacities in force, weighted by the node-hours provisioned while each was (by time when nothing was provisioned). A month wholly before the cluster's first sweep takes that sweep when it was measured within 60 days after the month's end (capacity_measured_after); otherwise the part of a month before the first sweep is weighed at the observed capacity (the best 5-minute window of the request log within the SLO, a lower bound) per node in service in that window's hour (at the month's mean node count when that hour had none), and is left out when that is unknown.
-- column cluster_id VARCHAR: The cluster.
-- column month DATE
-- column capacity_tokens_per_second DECIMAL(38,3): The cluster's capacity within the self-hosted latency SLO, in tokens per second at the month's mean node count: capacity per node x provisioned node-hours / provisioned hours (NULL when unknown).
-- column capacity_source VARCHAR: Where the capacity per node comes from: 'sweep' (load tests in force), 'observed' (the request log's best 5-minute window within the SLO, a lower bound), 'mixed' (part of the month each) or 'observed_above_sweep' (production beat the sweep: the observed figure is taken).
-- column sweep_id VARCHAR: The sweep (load test) in force at the month's end; NULL when none was.
-- column sweep_measured_at TIMESTAMP: When the sweep in force at the month's end was measured (its last point).
-- column sweep_points BIGINT: That sweep's points (concurrency levels).
-- column sweep_points_within_slo BIGINT: Those of its points whose p95 latency is within the setting slo.self_hosted_ms (all of them when it is not set).
-- column observed_tokens_per_second DECIMAL(38,3): The request log's observed capacity of the month (int_cluster_hours_monthly): a lower bound, for the whole cluster.
-- column provisioned_node_hours DECIMAL(38,6): Node-hours provisioned in the month: charges that buy compute (spread evenly over their periods) and owned hardware in service.
-- column capacity_per_node_tokens_per_second DECIMAL(38,3): Tokens per second one node serves within the SLO: the mean of the capacities in force in the month, weighted by the node-hours provisioned while each was.
-- column monthly_token_capacity DECIMAL(38,3): Tokens the cluster could serve in the month within the SLO: provisioned node-hours x capacity per node x 3,600.
-- column capacity_mix_warning BOOLEAN: A sweep in force ran at a token mix more than 10 points of input share away from production's in the month.
-- column sweep_nodes_assumed BOOLEAN: A sweep in force did not say how many nodes it ran on (taken as 1) while the cluster had more than one node provisioned.
-- column sweep_mix_unknown BOOLEAN: A sweep in force did not report its output tokens, so its token mix could not be compared with production's.
-- column observed_above_sweep BOOLEAN: Production beat the sweep: in a 5-minute window within the SLO the cluster served more tokens per second per node in service than the sweep says it can; the observed figure is the capacity.
-- column capacity_measured_after BOOLEAN: No sweep was in force in the month: its capacity is the cluster's first sweep, measured within 60 days after the month's end. Monthly token capacity = provisioned node-hours x capacity per node x 3,600.
-- settings: slo_ms_self_hosted
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
months AS (
    SELECT h.cluster_id, h.month, m.month_start, m.month_end, h.provisioned_ms, h.observed_tokens_per_second
    FROM intermediate.int_cluster_hours_monthly AS h
    JOIN intermediate.int_months_spined AS m USING (month)
),
-- nodes running at a constant rate over a period: node-hours per hour
rates AS (
    SELECT cluster_id, charge_start AS rate_start, charge_end AS rate_end, money_div(node_hours * 3600, charge_seconds) AS nodes
    FROM intermediate.int_cluster_charge_lines
    WHERE node_hours IS NOT NULL AND charge_seconds > 0
    UNION ALL
    SELECT cluster_id, CAST(in_service_date AS TIMESTAMP), coalesce(CAST(retired_date AS TIMESTAMP), TIMESTAMP '9999-12-31'), nodes
    FROM staging.stg_ledger__hardware
),
sweeps AS (
    SELECT
        p.cluster_id,
        p.sweep_id,
        max(p.measured_at) AS sweep_measured_at,
        max(p.nodes) AS sweep_nodes,
        bool_or(p.nodes_given) AS sweep_nodes_given,
        count(*) AS sweep_points,
        count(*) FILTER (WHERE st.slo_ms_self_hosted IS NULL OR p.p95_latency_ms <= st.slo_ms_self_hosted)
            AS sweep_points_within_slo,
        max(p.tokens_per_second) FILTER (WHERE st.slo_ms_self_hosted IS NULL OR p.p95_latency_ms <= st.slo_ms_self_hosted)
            AS sweep_tokens_per_second,
        -- the input share of the tokens at the best point within the SLO, when it reports its output tokens
        arg_max(1 - CAST(p.output_tokens_per_second AS DOUBLE) / CAST(p.tokens_per_second AS DOUBLE), p.tokens_per_second)
            FILTER (WHERE st.slo_ms_self_hosted IS NULL OR p.p95_latency_ms <= st.slo_ms_self_hosted) AS sweep_input_share
    FROM staging.stg_ledger__load_tests AS p
    CROSS JOIN settings AS st
    GROUP BY p.cluster_id, p.sweep_id
),
periods AS (
    SELECT
        *,
        sweep_measured_at AS valid_from,
        coalesce(lead(sweep_measured_at) OVER (PARTITION BY cluster_id ORDER BY sweep_measured_at, sweep_id),
                 TIMESTAMP '9999-12-31') AS valid_to
    FROM sweeps
),
first_sweeps AS (
    SELECT cluster_id, min(valid_from) AS first_at, arg_min(sweep_id, valid_from) AS first_sweep_id
    FROM periods
    GROUP BY cluster_id
),
-- each month cut where the sweep in force changes; the part before the cluster's first sweep has none, except in a
-- month wholly before it when it was measured within 60 days after the month's end (measured_after)
segments AS (
    SELECT
        m.cluster_id,
        m.month,
        p.sweep_id,
        FALSE AS measured_after,
        greatest(m.month_start, p.valid_from) AS seg_start,
        least(m.month_end, p.valid_to) AS seg_end
    FROM months AS m
    JOIN periods AS p ON p.cluster_id = m.cluster_id AND p.valid_from < m.month_end AND p.valid_to > m.month_start
    UNION ALL
    SELECT
        m.cluster_id,
        m.month,
        CASE WHEN f.first_at >= m.month_end AND f.first_at <= m.month_end + INTERVAL 60 DAY THEN f.first_sweep_id END,
        coalesce(f.first_at >= m.month_end AND f.first_at <= m.month_end + INTERVAL 60 DAY, FALSE),
        m.month_start,
        least(m.month_end, coalesce(f.first_at, m.month_end))
    FROM months AS m
    LEFT JOIN first_sweeps AS f USING (cluster_id)
    WHERE f.first_at IS NULL OR f.first_at > m.month_start
),
segment_hours AS (
    SELECT
        s.cluster_id,
        s.month,
        s.sweep_id,
        s.measured_after,
        date_diff('second', s.seg_start, s.seg_end) AS seg_seconds,
        coalesce(money_div(sum(r.nodes * date_diff('second', greatest(s.seg_start, r.rate_start), least(s.seg_end, r.rate_end))), 3600),
                 0) AS node_hours
    FROM segments AS s
    LEFT JOIN rates AS r ON r.cluster_id = s.cluster_id AND r.rate_start < s.seg_end AND r.rate_end > s.seg_start
    WHERE s.seg_end > s.seg_start
    GROUP BY s.cluster_id, s.month, s.sweep_id, s.measured_after, s.seg_start, s.seg_end
),
month_hours AS (
    SELECT cluster_id, month, sum(node_hours) AS provisioned_node_hours
    FROM segment_hours
    GROUP BY cluster_id, month
),
-- the request log's observed capacity per node: its best window's tokens per second over the nodes in service in
-- that window's hour; at the month's mean node count (node-hours / provisioned hours) only when that hour had none
observed AS (
    SELECT
        m.cluster_id,
        m.month,
        CASE
            WHEN n.committed_nodes + n.on_demand_nodes > 0
                THEN CAST(m.observed_tokens_per_second AS DOUBLE)
                    / CAST(n.committed_nodes + n.on_demand_nodes AS DOUBLE)
            WHEN h.provisioned_node_hours > 0
                THEN CAST(m.observed_tokens_per_second AS DOUBLE) * (m.provisioned_ms / 3600000.0)
                    / CAST(h.provisioned_node_hours AS DOUBLE)
            ELSE CAST(m.observed_tokens_per_second AS DOUBLE)
        END AS observed_per_node
    FROM months AS m
    JOIN month_hours AS h USING (cluster_id, month)
    LEFT JOIN intermediate.int_cluster_requests_monthly AS r USING (cluster_id, month)
    LEFT JOIN intermediate.int_cluster_nodes_hourly AS n
        ON n.cluster_id = m.cluster_id AND n.hour = date_trunc('hour', r.observed_window_start)
),
weighed AS (
    SELECT
        g.cluster_id,
        g.month,
        g.sweep_id,
        -- by node-hours; by time when nothing was provisioned that month
        CASE WHEN h.provisioned_node_hours > 0 THEN CAST(g.node_hours AS DOUBLE) ELSE CAST(g.seg_seconds AS DOUBLE) END AS weight,
        CASE
            WHEN g.sweep_id IS NOT NULL THEN CAST(p.sweep_tokens_per_second AS DOUBLE) / p.sweep_nodes
            ELSE o.observed_per_node
        END AS per_node,
        g.sweep_id IS NOT NULL AS from_sweep,
        g.measured_after,
        p.sweep_nodes_given,
        p.sweep_input_share
    FROM segment_hours AS g
    JOIN month_hours AS h USING (cluster_id, month)
    JOIN months AS m USING (cluster_id, month)
    JOIN observed AS o USING (cluster_id, month)
    LEFT JOIN periods AS p ON p.cluster_id = g.cluster_id AND p.sweep_id = g.sweep_id
    -- a part before the first sweep without an observed capacity is left out
    WHERE g.sweep_id IS NOT NULL OR m.observed_tokens_per_second IS NOT NULL
),
mix AS (
    SELECT
        cluster_id,
        month,
        sum(cache_hit_input_tokens + cache_miss_input_tokens) / nullif(
            sum(cache_hit_input_tokens + cache_miss_input_tokens + output_tokens + reasoning_tokens), 0
        ) AS production_input_share
    FROM intermediate.int_requests_monthly
    WHERE route = 'self_hosted' AND cluster_id IS NOT NULL
    GROUP BY cluster_id, month
),
per_month AS (
    SELECT
        w.cluster_id,
        w.month,
        -- NULL when a weighed part's capacity is unknown (a sweep with no point within the SLO)
        CASE WHEN bool_and(w.per_node IS NOT NULL) AND sum(w.weight) > 0
            THEN sum(w.weight * w.per_node) / sum(w.weight) END AS capacity_per_node,
        CASE WHEN bool_and(w.from_sweep) THEN 'sweep' WHEN NOT bool_or(w.from_sweep) THEN 'observed' ELSE 'mixed' END
            AS capacity_source,
        bool_or(w.from_sweep AND NOT w.sweep_nodes_given) AS sweep_nodes_missing,
        bool_or(w.measured_after) AS capacity_measured_after,
        bool_or(w.from_sweep AND abs(w.sweep_input_share - x.production_input_share) > 0.10) AS capacity_mix_warning,
        -- a sweep in force that does not say its output tokens cannot be checked against production's mix
        bool_or(w.from_sweep AND w.sweep_input_share IS NULL) AS sweep_mix_unknown
    FROM weighed AS w
    LEFT JOIN mix AS x USING (cluster_id, month)
    GROUP BY w.cluster_id, w.month
),
against_production AS (
    -- production beat the sweep: in some 5-minute window within the SLO the cluster served more tokens per second per
    -- node in service then than the sweep says it can; that observed figure is then the capacity
    SELECT
        c.*,
        CASE WHEN h.provisioned_node_hours > 0 THEN o.observed_per_node END AS observed_per_node
    FROM per_month AS c
    JOIN month_hours AS h USING (cluster_id, month)
    JOIN observed AS o USING (cluster_id, month)
),
judged_capacity AS (
    SELECT
        cluster_id,
        month,
        capacity_mix_warning,
        sweep_mix_unknown,
        sweep_nodes_missing,
        capacity_measured_after,
        capacity_source IN ('sweep', 'mixed') AND observed_per_node > capacity_per_node AS observed_above_sweep,
        CASE WHEN capacity_source IN ('sweep', 'mixed') AND observed_per_node > capacity_per_node
            THEN observed_per_node ELSE capacity_per_node END AS capacity_per_node,
        CASE WHEN capacity_source IN ('sweep', 'mixed') AND observed_per_node > capacity_per_node
            THEN 'observed_above_sweep' ELSE capacity_source END AS capacity_source
    FROM against_production
),
latest AS (
    -- the sweep in force at the month's end
    SELECT g.cluster_id, g.month, arg_max(g.sweep_id, p.valid_from) AS sweep_id
    FROM segment_hours AS g
    JOIN periods AS p ON p.cluster_id = g.cluster_id AND p.sweep_id = g.sweep_id
    GROUP BY g.cluster_id, g.month
)
SELECT
    m.cluster_id,
    m.month,
    CAST(c.capacity_per_node * h.provisioned_node_hours / nullif(m.provisioned_ms / 3600000.0, 0) AS DECIMAL(38, 3))
        AS capacity_tokens_per_second,
    c.capacity_source,
    l.sweep_id,
    p.sweep_measured_at,
    p.sweep_points,
    p.sweep_points_within_slo,
    m.observed_tokens_per_second,
    CAST(h.provisioned_node_hours AS DECIMAL(38, 6)) AS provisioned_node_hours,
    CAST(c.capacity_per_node AS DECIMAL(38, 3)) AS capacity_per_node_tokens_per_second,
    CAST(round(c.capacity_per_node * h.provisioned_node_hours * 3600) AS DECIMAL(38, 3)) AS monthly_token_capacity,
    coalesce(c.capacity_mix_warning, FALSE) AS capacity_mix_warning,
    coalesce(c.sweep_nodes_missing AND h.provisioned_node_hours > m.provisioned_ms / 3600000.0 + 1e-9, FALSE)
        AS sweep_nodes_assumed,
    coalesce(c.sweep_mix_unknown, FALSE) AS sweep_mix_unknown,
    coalesce(c.observed_above_sweep, FALSE) AS observed_above_sweep,
    coalesce(c.capacity_measured_after, FALSE) AS capacity_measured_after
FROM months AS m
LEFT JOIN month_hours AS h USING (cluster_id, month)
LEFT JOIN judged_capacity AS c USING (cluster_id, month)
LEFT JOIN latest AS l USING (cluster_id, month)
LEFT JOIN periods AS p ON p.cluster_id = m.cluster_id AND p.sweep_id = l.sweep_id
