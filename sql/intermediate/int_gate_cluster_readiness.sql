-- grain: one row per eval set run on a cluster
-- materialized: view
-- unique_key: eval_set
-- description: Whether the clusters an evaluation set ran its self-hosted tasks on are ready to be judged: their load tests measured within the evaluation's period (its first to its last attempt) or the 30 days before it, and the months the set ran on them with operating costs recorded (for that cluster or for no cluster), without which the cluster's full monthly cost is not known.
-- column eval_set VARCHAR: The evaluation set.
-- column load_tests BIGINT: The load tests (sweeps) of those clusters measured in that window.
-- column months BIGINT: The months the set ran on a cluster.
-- column months_with_opex BIGINT: Those with operating costs recorded.
-- column months_without_opex VARCHAR: Those without, as YYYY-MM in month order; NULL when none.
WITH windows AS (
    SELECT
        eval_set,
        min(first_started_at) AS eval_start,
        max(last_started_at) AS eval_end
    FROM intermediate.int_gate_cases
    GROUP BY eval_set
),
set_clusters AS (
    SELECT DISTINCT eval_set, cluster_id, month
    FROM intermediate.int_gate_cases
    WHERE route = 'self_hosted' AND cluster_id IS NOT NULL
),
tested_clusters AS (
    SELECT DISTINCT eval_set, cluster_id FROM set_clusters
),
load_tested AS (
    SELECT w.eval_set, count(DISTINCT l.sweep_id) AS sweeps
    FROM windows AS w
    JOIN tested_clusters AS k ON w.eval_set = k.eval_set
    JOIN staging.stg_ledger__load_tests AS l
        ON
            k.cluster_id = l.cluster_id
            AND l.measured_at >= w.eval_start - INTERVAL 30 DAY
            AND l.measured_at <= w.eval_end
    GROUP BY w.eval_set
),
set_months AS (
    SELECT k.eval_set, k.month, bool_or(o.month IS NOT NULL) AS has_opex
    FROM set_clusters AS k
    LEFT JOIN staging.stg_ledger__opex AS o
        ON CAST(o.month AS DATE) = k.month AND (o.cluster_id IS NULL OR o.cluster_id = k.cluster_id)
    GROUP BY k.eval_set, k.month
),
costs_known AS (
    SELECT
        eval_set,
        count(*) AS months,
        count(*) FILTER (WHERE has_opex) AS months_with_opex,
        string_agg(strftime(month, '%Y-%m'), ', ' ORDER BY month) FILTER (WHERE NOT has_opex) AS months_without
    FROM set_months
    GROUP BY eval_set
)
SELECT
    k.eval_set,
    coalesce(t.sweeps, 0) AS load_tests,
    k.months,
    k.months_with_opex,
    k.months_without AS months_without_opex
FROM costs_known AS k
LEFT JOIN load_tested AS t ON k.eval_set = t.eval_set
