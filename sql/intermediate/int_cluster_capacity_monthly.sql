-- grain: one row per cluster x month (of int_cluster_hours_monthly)
-- materialized: table
-- unique_key: cluster_id, month
-- description: What each cluster can serve at the latency SLO (seed 000, step 1). A cluster-month uses the latest sweep (load-tests) whose last point was measured before the month ends; its capacity is the highest tokens_per_second among the sweep's points whose p95 latency is within the self-hosted SLO (all points when there is no SLO), NULL when none is. Without a sweep, the observed lower bound from the request log (int_cluster_requests_monthly.observed_tokens_per_second). Monthly token capacity = capacity x 3,600 x provisioned hours.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
months AS (
    SELECT h.cluster_id, h.month, m.month_end, h.provisioned_ms, h.observed_tokens_per_second
    FROM intermediate.int_cluster_hours_monthly AS h
    JOIN intermediate.int_months_spined AS m USING (month)
),
sweeps AS (
    SELECT cluster_id, sweep_id, max(measured_at) AS sweep_measured_at
    FROM staging.stg_ledger__load_tests
    GROUP BY cluster_id, sweep_id
),
chosen AS (
    SELECT m.cluster_id, m.month, s.sweep_id, s.sweep_measured_at
    FROM months AS m
    JOIN sweeps AS s ON s.cluster_id = m.cluster_id AND s.sweep_measured_at < m.month_end
    QUALIFY row_number() OVER (PARTITION BY m.cluster_id, m.month ORDER BY s.sweep_measured_at DESC, s.sweep_id DESC) = 1
),
swept AS (
    SELECT
        c.cluster_id,
        c.month,
        c.sweep_id,
        c.sweep_measured_at,
        count(*) AS sweep_points,
        count(*) FILTER (WHERE st.slo_ms_self_hosted IS NULL OR p.p95_latency_ms <= st.slo_ms_self_hosted)
            AS sweep_points_within_slo,
        max(p.tokens_per_second) FILTER (WHERE st.slo_ms_self_hosted IS NULL OR p.p95_latency_ms <= st.slo_ms_self_hosted)
            AS sweep_tokens_per_second
    FROM chosen AS c
    JOIN staging.stg_ledger__load_tests AS p USING (cluster_id, sweep_id)
    CROSS JOIN settings AS st
    GROUP BY ALL
),
capacity AS (
    SELECT
        m.cluster_id,
        m.month,
        m.provisioned_ms,
        CASE WHEN s.sweep_id IS NOT NULL THEN s.sweep_tokens_per_second ELSE m.observed_tokens_per_second END
            AS capacity_tokens_per_second,
        CASE WHEN s.sweep_id IS NOT NULL THEN 'sweep' WHEN m.observed_tokens_per_second IS NOT NULL THEN 'observed' END
            AS capacity_source,
        s.sweep_id,
        s.sweep_measured_at,
        s.sweep_points,
        s.sweep_points_within_slo,
        m.observed_tokens_per_second
    FROM months AS m
    LEFT JOIN swept AS s USING (cluster_id, month)
)
SELECT
    * EXCLUDE (provisioned_ms),
    -- tokens/s x provisioned seconds (provisioned_ms / 1000): exact in DECIMAL
    CAST(capacity_tokens_per_second * provisioned_ms * CAST(0.001 AS DECIMAL(4, 3)) AS DECIMAL(38, 3)) AS monthly_token_capacity
FROM capacity
