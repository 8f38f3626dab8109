-- grain: one row per eval set x criterion
-- materialized: table
-- unique_key: eval_set, criterion
-- description: The deployment gate's criteria (seed 001; thresholds are settings under [gate]): enough cases covering every category, a week of hosted (API) measurements, every case on both routes, acceptance non-inferior on the paired cases (the one-sided 95 % lower bound of the cluster's accepted share minus the API's, from the cases run on both routes, above -acceptance_margin), the cluster's p95 latency within its SLO, a load test of the cluster within the evaluation's period or the 30 days before it, the operating costs recorded for every month the cluster ran the set (its full monthly cost known), and each failure drill recorded and passed (its latest run). status 'failed' is a measurement that fell short; 'missing' is one not yet taken (too few cases or days, a case not run on a route, a drill never run, no SLO to judge by).
-- column eval_set: The evaluation set.
-- column criterion: cases, categories_covered, every_case_on_both_routes, hosted_days, acceptance_non_inferior, self_hosted_p95_ms, load_test, operating_costs_known, or drill_<name> for each required drill.
-- column value: What was measured (cases; categories on both routes; cases missing a route; days between the first and last API attempt; the lower bound of the accepted share's difference in percentage points (paired cases: discordant pairs b, cluster accepted and API not, and c, the reverse; difference (b - c) / n, standard error sqrt(b + c - (b - c)^2 / n) / n, bound difference - 1.645 standard errors); the cluster's p95 ms; load tests of the cluster in the window; months of the set with operating costs; 1 = the drill's latest run passed, 0 = failed). NULL when there is nothing to measure.
-- column threshold: What it must reach (at least, except every_case_on_both_routes and self_hosted_p95_ms: at most).
-- column passed: The criterion is met.
-- column status: 'passed', 'failed' or 'missing'.
-- column detail: What failed or is missing, in words (the cases without a route, the drill's cluster, time and note).
-- column cases_needed: acceptance_non_inferior only: the paired cases that would show non-inferiority at the observed difference and discordance (1.645^2 x (d - diff^2) / (diff + margin)^2, d the discordant share, rounded up); NULL when the observed difference is at or below -margin (no number of cases would).
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
per_case AS (
    SELECT
        eval_set,
        case_id,
        bool_or(route = 'api' AND accepted) AS api_accepted,
        bool_or(route = 'self_hosted' AND accepted) AS cluster_accepted,
        bool_or(route = 'api') AND bool_or(route = 'self_hosted') AS paired
    FROM intermediate.int_gate_cases
    GROUP BY eval_set, case_id
),
pairs AS (
    -- the cases run on both routes: n, and the discordant ones (b: only the cluster accepted; c: only the API)
    SELECT
        eval_set,
        count(*) AS n,
        count(*) FILTER (WHERE cluster_accepted AND NOT api_accepted) AS b,
        count(*) FILTER (WHERE api_accepted AND NOT cluster_accepted) AS c
    FROM per_case
    WHERE paired
    GROUP BY eval_set
),
paired_difference AS (
    -- the paired difference of accepted shares and its one-sided 95 % lower bound (z = 1.645)
    SELECT
        p.eval_set,
        p.n,
        CAST(p.b - p.c AS DOUBLE) / p.n AS diff,
        CAST(p.b - p.c AS DOUBLE) / p.n
        - 1.6448536269514722 * sqrt(greatest(p.b + p.c - power(p.b - p.c, 2) / p.n, 0)) / p.n AS lower_bound,
        CAST(s.gate_acceptance_margin AS DOUBLE) AS margin,
        CAST(p.b + p.c AS DOUBLE) / p.n AS discordant_share
    FROM pairs AS p
    CROSS JOIN settings AS s
    WHERE p.n > 0
),
non_inferiority AS (
    -- and the cases the margin needs at the observed difference and discordance (none would at or below -margin)
    SELECT
        *,
        CASE WHEN diff + margin > 0
            THEN CAST(ceil(power(1.6448536269514722, 2) * (discordant_share - diff * diff) / power(diff + margin, 2))
                AS BIGINT)
        END AS cases_needed
    FROM paired_difference
),
windows AS (
    -- the evaluation's period, and the clusters its self-hosted tasks ran on
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
    -- load tests of those clusters measured within the evaluation's period or the 30 days before it
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
    -- the months the set ran on a cluster, and whether operating costs are booked to it or to no cluster
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
            THEN format('{} cases; the gate needs at least {}', c.cases, s.gate_min_cases) END AS detail,
        CAST(NULL AS BIGINT) AS cases_needed
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
            THEN format('{} of {} categories have a case run on both routes', categories_on_both, categories) END,
        NULL
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
        missing_cases,
        NULL
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
        END,
        NULL
    FROM case_counts AS c
    CROSS JOIN settings AS s
    LEFT JOIN api_span AS a ON c.eval_set = a.eval_set
    UNION ALL
    SELECT
        c.eval_set,
        'acceptance_non_inferior',
        5,
        CAST(round(n.lower_bound * 100, 2) AS DECIMAL(18, 2)),
        -s.gate_acceptance_margin * 100,
        n.lower_bound > -n.margin,
        n.n IS NOT NULL,
        CASE
            WHEN n.n IS NULL THEN 'no case has run on both routes'
            -- the percent sign stays outside format(): Spark's format_string would read it as a conversion
            WHEN n.lower_bound <= -n.margin THEN format(
                'the cluster''s accepted share could be as much as {} points below the API''s (', round(-n.lower_bound * 100, 1)
            ) || '95 % lower bound, ' || format(
                '{} paired cases), beyond the margin of {} points; {}',
                n.n, round(n.margin * 100, 1),
                CASE WHEN n.cases_needed IS NOT NULL
                    THEN 'at this difference ' || CAST(n.cases_needed AS VARCHAR)
                        || ' paired cases would show it within the margin'
                    ELSE 'no number of cases would show it within the margin at this difference'
                END
            )
        END,
        n.cases_needed
    FROM case_counts AS c
    CROSS JOIN settings AS s
    LEFT JOIN non_inferiority AS n ON c.eval_set = n.eval_set
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
        END,
        NULL
    FROM case_counts AS c
    LEFT JOIN routes AS r ON c.eval_set = r.eval_set
    UNION ALL
    SELECT
        c.eval_set,
        'load_test',
        7,
        coalesce(t.sweeps, 0),
        1,
        coalesce(t.sweeps, 0) >= 1,
        FALSE,
        CASE WHEN coalesce(t.sweeps, 0) = 0
            THEN 'no load test of the cluster within the evaluation''s period or the 30 days before it' END,
        NULL
    FROM case_counts AS c
    LEFT JOIN load_tested AS t ON c.eval_set = t.eval_set
    UNION ALL
    SELECT
        c.eval_set,
        'operating_costs_known',
        8,
        coalesce(k.months_with_opex, 0),
        coalesce(k.months, 0),
        k.months > 0 AND k.months_with_opex = k.months,
        FALSE,
        CASE
            WHEN k.months IS NULL THEN 'the set has not run on a cluster'
            WHEN k.months_with_opex < k.months
                THEN format('no operating costs recorded for {}: the cluster''s full monthly cost is not known',
                            k.months_without)
        END,
        NULL
    FROM case_counts AS c
    LEFT JOIN costs_known AS k ON c.eval_set = k.eval_set
    UNION ALL
    SELECT
        eval_set,
        'drill_' || drill,
        9,
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
        END,
        NULL
    FROM drills
)
SELECT
    eval_set,
    criterion,
    value,
    CAST(threshold AS DECIMAL(18, 2)) AS threshold,
    coalesce(met, FALSE) AS passed,
    CASE WHEN coalesce(met, FALSE) THEN 'passed' WHEN can_fail THEN 'failed' ELSE 'missing' END AS status,
    detail,
    cases_needed
FROM measured
ORDER BY eval_set, position, criterion
