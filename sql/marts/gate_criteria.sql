-- grain: one row per eval set x criterion
-- materialized: table
-- unique_key: eval_set, criterion
-- description: The deployment gate's criteria (seed 001; thresholds are settings under [gate]): enough cases covering every category, a week of hosted (API) measurements, every case on both routes, the cluster's accepted share no more than a few points below the API's, the cluster's p95 latency within its SLO, and each failure drill recorded and passed (its latest run). status 'failed' is a measurement that fell short; 'missing' is one not yet taken (too few cases or days, a case not run on a route, a drill never run, no SLO to judge by).
-- column eval_set: The evaluation set.
-- column criterion: cases, categories_covered, every_case_on_both_routes, hosted_days, accepted_share_gap_points, self_hosted_p95_ms, or drill_<name> for each required drill.
-- column value: What was measured (cases; categories on both routes; cases missing a route; days between the first and last API attempt; self-hosted minus API accepted share in percentage points; the cluster's p95 ms; 1 = the drill's latest run passed, 0 = failed). NULL when there is nothing to measure.
-- column threshold: What it must reach (at least, except every_case_on_both_routes and self_hosted_p95_ms: at most).
-- column passed: The criterion is met.
-- column status: 'passed', 'failed' or 'missing'.
-- column detail: What failed or is missing, in words (the cases without a route, the drill's cluster, time and note).
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
cases AS (
    SELECT
        eval_set,
        case_id,
        min(category) AS category,
        bool_or(route = 'api') AS on_api,
        bool_or(route = 'self_hosted') AS on_cluster
    FROM intermediate.int_gate_cases
    GROUP BY eval_set, case_id
),
sets AS (
    SELECT eval_set FROM cases
    UNION
    SELECT eval_set FROM staging.stg_ledger__gate_checks
),
case_counts AS (
    SELECT
        s.eval_set,
        count(c.case_id) AS cases,
        count(DISTINCT c.category) AS categories,
        count(DISTINCT c.category) FILTER (WHERE c.on_api AND c.on_cluster) AS categories_on_both,
        count(*) FILTER (WHERE NOT (c.on_api AND c.on_cluster)) AS cases_missing_a_route,
        string_agg(c.case_id || CASE WHEN c.on_api THEN ' (not on the cluster)' ELSE ' (not on the API)' END, ', '
            ORDER BY c.case_id) FILTER (WHERE NOT (c.on_api AND c.on_cluster)) AS missing_cases
    FROM sets AS s
    LEFT JOIN cases AS c ON s.eval_set = c.eval_set
    GROUP BY s.eval_set
),
api_span AS (
    SELECT
        eval_set,
        CAST((epoch(max(last_started_at)) - epoch(min(first_started_at))) / 86400 AS DECIMAL(18, 2)) AS days
    FROM intermediate.int_gate_cases
    WHERE route = 'api'
    GROUP BY eval_set
),
routes AS (
    SELECT
        eval_set,
        max(accepted_share) FILTER (WHERE route = 'api') AS api_share,
        max(accepted_share) FILTER (WHERE route = 'self_hosted') AS cluster_share,
        max(p95_latency_ms) FILTER (WHERE route = 'self_hosted') AS cluster_p95_ms,
        max(slo_ms) FILTER (WHERE route = 'self_hosted') AS cluster_slo_ms
    FROM marts.gate_comparison
    WHERE category = 'all categories'
    GROUP BY eval_set
),
required AS (
    SELECT unnest(string_split(gate_required_drills, ',')) AS drill FROM settings
),
latest_runs AS (
    -- each drill's latest run for the set (on any cluster)
    SELECT * FROM staging.stg_ledger__gate_checks
    QUALIFY row_number() OVER (PARTITION BY eval_set, drill ORDER BY run_at DESC, cluster_id ASC) = 1
),
drills AS (
    SELECT
        s.eval_set,
        d.drill,
        g.passed,
        g.cluster_id,
        g.run_at,
        g.note
    FROM sets AS s
    CROSS JOIN required AS d
    LEFT JOIN latest_runs AS g ON s.eval_set = g.eval_set AND d.drill = g.drill
),
measured AS (
    SELECT
        c.eval_set,
        'cases' AS criterion,
        1 AS position,
        CAST(c.cases AS DECIMAL(18, 2)) AS value,
        CAST(s.gate_min_cases AS DECIMAL(18, 2)) AS threshold,
        c.cases >= s.gate_min_cases AS met,
        FALSE AS can_fail,
        CASE WHEN c.cases < s.gate_min_cases
            THEN format('{} cases; the gate needs at least {}', c.cases, s.gate_min_cases) END AS detail
    FROM case_counts AS c CROSS JOIN settings AS s
    UNION ALL
    SELECT
        eval_set,
        'categories_covered',
        2,
        categories_on_both,
        categories,
        categories > 0 AND categories_on_both = categories,
        FALSE,
        CASE WHEN categories_on_both < categories
            THEN format('{} of {} categories have a case run on both routes', categories_on_both, categories) END
    FROM case_counts
    UNION ALL
    SELECT
        eval_set,
        'every_case_on_both_routes',
        3,
        cases_missing_a_route,
        0,
        cases > 0 AND cases_missing_a_route = 0,
        FALSE,
        missing_cases
    FROM case_counts
    UNION ALL
    SELECT
        c.eval_set,
        'hosted_days',
        4,
        a.days,
        s.gate_min_hosted_days,
        coalesce(a.days >= s.gate_min_hosted_days, FALSE),
        FALSE,
        CASE
            WHEN a.days IS NULL THEN 'no API measurements of the set'
            WHEN a.days < s.gate_min_hosted_days
                THEN format('the API measurements span {} days; the gate needs {}', a.days, s.gate_min_hosted_days)
        END
    FROM case_counts AS c
    CROSS JOIN settings AS s
    LEFT JOIN api_span AS a ON c.eval_set = a.eval_set
    UNION ALL
    SELECT
        c.eval_set,
        'accepted_share_gap_points',
        5,
        CAST((r.cluster_share - r.api_share) * 100 AS DECIMAL(18, 2)),
        -s.gate_max_accepted_share_drop_points,
        (r.cluster_share - r.api_share) * 100 >= -s.gate_max_accepted_share_drop_points,
        r.cluster_share IS NOT NULL AND r.api_share IS NOT NULL,
        CASE
            WHEN r.cluster_share IS NULL OR r.api_share IS NULL THEN 'the set has not run on both routes'
            WHEN (r.cluster_share - r.api_share) * 100 < -s.gate_max_accepted_share_drop_points
                THEN format(
                    'the cluster accepted {} % of its cases, the API {} %',
                    round(r.cluster_share * 100, 1), round(r.api_share * 100, 1)
                )
        END
    FROM case_counts AS c
    CROSS JOIN settings AS s
    LEFT JOIN routes AS r ON c.eval_set = r.eval_set
    UNION ALL
    SELECT
        c.eval_set,
        'self_hosted_p95_ms',
        6,
        CAST(r.cluster_p95_ms AS DECIMAL(18, 2)),
        CAST(r.cluster_slo_ms AS DECIMAL(18, 2)),
        r.cluster_p95_ms <= r.cluster_slo_ms,
        r.cluster_p95_ms IS NOT NULL AND r.cluster_slo_ms IS NOT NULL,
        CASE
            WHEN r.cluster_slo_ms IS NULL THEN 'no self-hosted latency target is set (slo.self_hosted_ms)'
            WHEN r.cluster_p95_ms IS NULL THEN 'no self-hosted latencies measured for the set'
            WHEN r.cluster_p95_ms > r.cluster_slo_ms
                THEN format('p95 {} ms is above the target of {} ms', r.cluster_p95_ms, r.cluster_slo_ms)
        END
    FROM case_counts AS c
    LEFT JOIN routes AS r ON c.eval_set = r.eval_set
    UNION ALL
    SELECT
        eval_set,
        'drill_' || drill,
        7,
        CASE WHEN passed THEN 1 WHEN NOT passed THEN 0 END,
        1,
        coalesce(passed, FALSE),
        passed IS NOT NULL,
        CASE
            WHEN passed IS NULL THEN format('the {} drill was never run', replace(drill, '_', ' '))
            WHEN NOT passed THEN format(
                'the {} drill failed on {} at {}{}',
                replace(drill, '_', ' '), cluster_id, strftime(run_at, '%Y-%m-%d %H:%M') || ' UTC',
                CASE WHEN note IS NOT NULL AND note <> '' THEN ': ' || note ELSE '' END
            )
        END
    FROM drills
)
SELECT
    eval_set,
    criterion,
    value,
    CAST(threshold AS DECIMAL(18, 2)) AS threshold,
    coalesce(met, FALSE) AS passed,
    CASE WHEN coalesce(met, FALSE) THEN 'passed' WHEN can_fail THEN 'failed' ELSE 'missing' END AS status,
    detail
FROM measured
ORDER BY eval_set, position, criterion
