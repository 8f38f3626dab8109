-- grain: one row per eval set with a case run on both routes
-- materialized: view
-- unique_key: eval_set
-- description: Acceptance on the cases an evaluation set ran on both routes (paired cases), for the gate's non-inferiority criterion: the difference between the cluster's accepted share and the API's, its one-sided 95 % lower bound (z = 1.645) and the paired cases the acceptance margin (gate.acceptance_margin) would need at that difference. A case's acceptance on each route is int_gate_case_routes'.
-- settings: gate_acceptance_margin
-- column eval_set VARCHAR: The evaluation set.
-- column paired_cases BIGINT: n, the cases run on both routes.
-- column cluster_only_accepted BIGINT: b, the paired cases the cluster accepted and the API did not.
-- column api_only_accepted BIGINT: c, the paired cases the API accepted and the cluster did not.
-- column difference DOUBLE: The cluster's accepted share minus the API's, (b - c) / n.
-- column lower_bound DOUBLE: The difference's one-sided 95 % lower bound: (b - c) / n - 1.645 x sqrt(b + c - (b - c)^2 / n) / n.
-- column cases_needed BIGINT: The paired cases that would show non-inferiority at this difference and discordance: 1.645^2 x (d - difference^2) / (difference + margin)^2, d = (b + c) / n, rounded up; NULL when the difference is at or below -margin (no number of cases would).
WITH pairs AS (
    SELECT
        eval_set,
        count(*) AS n,
        count(*) FILTER (WHERE cluster_accepted AND NOT api_accepted) AS b,
        count(*) FILTER (WHERE api_accepted AND NOT cluster_accepted) AS c
    FROM intermediate.int_gate_case_routes
    WHERE on_api AND on_cluster
    GROUP BY eval_set
),
paired_difference AS (
    SELECT
        p.eval_set,
        p.n,
        p.b,
        p.c,
        CAST(p.b - p.c AS DOUBLE) / p.n AS difference,
        CAST(p.b - p.c AS DOUBLE) / p.n
        - 1.6448536269514722 * sqrt(greatest(p.b + p.c - power(p.b - p.c, 2) / p.n, 0)) / p.n AS lower_bound,
        CAST(s.gate_acceptance_margin AS DOUBLE) AS margin,
        CAST(p.b + p.c AS DOUBLE) / p.n AS discordant_share
    FROM pairs AS p
    CROSS JOIN staging.stg_ledger__settings AS s
    WHERE p.n > 0
)
SELECT
    eval_set,
    n AS paired_cases,
    b AS cluster_only_accepted,
    c AS api_only_accepted,
    difference,
    lower_bound,
    CASE WHEN difference + margin > 0
        THEN CAST(ceil(power(1.6448536269514722, 2) * (discordant_share - difference * difference)
            / power(difference + margin, 2)) AS BIGINT)
    END AS cases_needed
FROM paired_difference
