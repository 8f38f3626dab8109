-- grain: one row per eval set x criterion
-- materialized: table
-- unique_key: eval_set, criterion
-- description: The deployment gate's criteria (thresholds are settings under [gate]): enough cases covering every category, a week of hosted (API) measurements, every case on both routes, acceptance non-inferior on the paired cases (the one-sided 95 % lower bound of the cluster's accepted share minus the API's, from the cases run on both routes, above -acceptance_margin), the cluster's p95 latency within its SLO, a load test of the cluster within the evaluation's period or the 30 days before it, the operating costs recorded for every month the cluster ran the set (its full monthly cost known), the cases representative of production (each category's share of the cases within mix_tolerance of its share of production's accepted tasks in the set's months, by the request log's workload; skipped when either side has no categories), and each failure drill recorded and passed (its latest run; within max_recovery_minutes when that is set). status 'failed' is a measurement that fell short; 'missing' is one not yet taken (too few cases or days, a case not run on a route, a drill never run or its recovery time not recorded, no SLO to judge by); 'skipped' is a criterion that does not apply (it neither passes nor fails the gate).
-- settings: gate_acceptance_margin, gate_max_recovery_minutes, gate_min_cases, gate_min_hosted_days, gate_mix_tolerance, slo_ms_self_hosted
-- column eval_set VARCHAR: The evaluation set.
-- column criterion VARCHAR: cases, categories_covered, every_case_on_both_routes, hosted_days, acceptance_non_inferior, self_hosted_p95_ms, load_test, operating_costs_known, representative, or drill_<name> for each required drill.
-- column value DECIMAL(21,2): What was measured (cases; categories on both routes; cases missing a route; days between the first and last API attempt; the lower bound of the accepted share's difference in percentage points (paired cases: discordant pairs b, cluster accepted and API not, and c, the reverse; difference (b - c) / n, standard error sqrt(b + c - (b - c)^2 / n) / n, bound difference - 1.645 standard errors); the cluster's p95 ms; load tests of the cluster in the window; months of the set with operating costs; the largest gap in points between a category's share of the cases and of production's accepted tasks; 1 = the drill's latest run passed, 0 = failed, or with max_recovery_minutes set its recovery minutes when it passed). NULL when there is nothing to measure.
-- column threshold DECIMAL(18,2): What it must reach (at least, except every_case_on_both_routes, self_hosted_p95_ms, representative and a drill's recovery minutes: at most).
-- column passed BOOLEAN: The criterion is met; NULL when it is skipped.
-- column status VARCHAR: 'passed', 'failed', 'missing' or 'skipped'.
-- column detail VARCHAR: What failed, is missing or was skipped, in words (the cases without a route, the categories off production's mix, the drill's cluster, time, note and recovery time).
-- column cases_needed BIGINT: acceptance_non_inferior only: the paired cases that would show non-inferiority at the observed difference and discordance (1.645^2 x (d - diff^2) / (diff + margin)^2, d the discordant share, rounded up); NULL when the observed difference is at or below -margin (no number of cases would).
WITH settings AS (
    SELECT
        *,
        -- the margin as a DOUBLE, the lower bound's type, to compare it with and to show it in words
        CAST(gate_acceptance_margin AS DOUBLE) AS margin
    FROM staging.stg_ledger__settings
),
routes AS (
    SELECT
        eval_set,
        max(p95_latency_ms) FILTER (WHERE route = 'self_hosted') AS cluster_p95_ms
    FROM marts.gate_comparison
    WHERE category = 'all categories'
    GROUP BY eval_set
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
        CAST(NULL AS BIGINT) AS cases_needed,
        FALSE AS skipped
    FROM intermediate.int_gate_coverage AS c CROSS JOIN settings AS s
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
        NULL,
        FALSE
    FROM intermediate.int_gate_coverage
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
        NULL,
        FALSE
    FROM intermediate.int_gate_coverage
    UNION ALL
    SELECT
        c.eval_set,
        'hosted_days',
        4,
        c.api_days,
        s.gate_min_hosted_days,
        coalesce(c.api_days >= s.gate_min_hosted_days, FALSE),
        FALSE,
        CASE
            WHEN c.api_days IS NULL THEN 'no API measurements of the set'
            WHEN c.api_days < s.gate_min_hosted_days
                THEN format('the API measurements span {} days; the gate needs {}', c.api_days, s.gate_min_hosted_days)
        END,
        NULL,
        FALSE
    FROM intermediate.int_gate_coverage AS c
    CROSS JOIN settings AS s
    UNION ALL
    SELECT
        c.eval_set,
        'acceptance_non_inferior',
        5,
        CAST(round(n.lower_bound * 100, 2) AS DECIMAL(18, 2)),
        -s.gate_acceptance_margin * 100,
        n.lower_bound > -s.margin,
        n.paired_cases IS NOT NULL,
        CASE
            WHEN n.paired_cases IS NULL THEN 'no case has run on both routes'
            -- the percent sign stays outside format(): Spark's format_string would read it as a conversion
            WHEN n.lower_bound <= -s.margin THEN format(
                'the cluster''s accepted share could be as much as {} points below the API''s (', round(-n.lower_bound * 100, 1)
            ) || '95 % lower bound, ' || format(
                '{} paired cases), beyond the margin of {} points; {}',
                n.paired_cases, round(s.margin * 100, 1),
                CASE WHEN n.cases_needed IS NOT NULL
                    THEN 'at this difference ' || CAST(n.cases_needed AS VARCHAR)
                        || ' paired cases would show it within the margin'
                    ELSE 'no number of cases would show it within the margin at this difference'
                END
            )
        END,
        n.cases_needed,
        FALSE
    FROM intermediate.int_gate_coverage AS c
    CROSS JOIN settings AS s
    LEFT JOIN intermediate.int_gate_paired_acceptance AS n ON c.eval_set = n.eval_set
    UNION ALL
    SELECT
        c.eval_set,
        'self_hosted_p95_ms',
        6,
        CAST(r.cluster_p95_ms AS DECIMAL(18, 2)),
        -- the target is the setting's, whether or not the set ran on the cluster
        CAST(s.slo_ms_self_hosted AS DECIMAL(18, 2)),
        r.cluster_p95_ms <= s.slo_ms_self_hosted,
        r.cluster_p95_ms IS NOT NULL AND s.slo_ms_self_hosted IS NOT NULL,
        CASE
            WHEN s.slo_ms_self_hosted IS NULL THEN 'no self-hosted latency target is set (slo.self_hosted_ms)'
            WHEN r.cluster_p95_ms IS NULL THEN 'no self-hosted latencies measured for the set'
            WHEN r.cluster_p95_ms > s.slo_ms_self_hosted
                THEN format('p95 {} ms is above the target of {} ms', r.cluster_p95_ms, s.slo_ms_self_hosted)
        END,
        NULL,
        FALSE
    FROM intermediate.int_gate_coverage AS c
    CROSS JOIN settings AS s
    LEFT JOIN routes AS r ON c.eval_set = r.eval_set
    UNION ALL
    SELECT
        c.eval_set,
        'load_test',
        7,
        coalesce(k.load_tests, 0),
        1,
        coalesce(k.load_tests, 0) >= 1,
        FALSE,
        CASE WHEN coalesce(k.load_tests, 0) = 0
            THEN 'no load test of the cluster within the evaluation''s period or the 30 days before it' END,
        NULL,
        FALSE
    FROM intermediate.int_gate_coverage AS c
    LEFT JOIN intermediate.int_gate_cluster_readiness AS k ON c.eval_set = k.eval_set
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
                            k.months_without_opex)
        END,
        NULL,
        FALSE
    FROM intermediate.int_gate_coverage AS c
    LEFT JOIN intermediate.int_gate_cluster_readiness AS k ON c.eval_set = k.eval_set
    UNION ALL
    SELECT
        c.eval_set,
        'representative',
        9,
        CAST(round(m.largest_gap * 100, 2) AS DECIMAL(18, 2)),
        s.gate_mix_tolerance * 100,
        m.largest_gap <= s.gate_mix_tolerance,
        m.eval_set IS NOT NULL,
        CASE
            WHEN m.eval_set IS NULL
                THEN 'the check needs the cases'' categories and the workload column in the request log'
            WHEN m.largest_gap > s.gate_mix_tolerance
                THEN 'the cases are not production''s mix (tolerance ' || CAST(round(s.gate_mix_tolerance * 100, 1)
                    AS VARCHAR) || ' points): ' || m.beyond
        END,
        NULL,
        m.eval_set IS NULL
    FROM intermediate.int_gate_coverage AS c
    CROSS JOIN settings AS s
    LEFT JOIN intermediate.int_gate_mix AS m ON c.eval_set = m.eval_set
    UNION ALL
    SELECT
        d.eval_set,
        'drill_' || d.drill,
        10,
        CASE
            WHEN d.passed AND s.gate_max_recovery_minutes IS NOT NULL THEN CAST(d.recovery_minutes AS DECIMAL(18, 2))
            WHEN d.passed THEN 1
            WHEN NOT d.passed THEN 0
        END,
        coalesce(s.gate_max_recovery_minutes, 1),
        coalesce(d.passed AND (s.gate_max_recovery_minutes IS NULL OR d.recovery_minutes <= s.gate_max_recovery_minutes),
            FALSE),
        -- a passed drill without its recovery time, when a limit is set, is a measurement still missing
        d.passed IS NOT NULL AND NOT (d.passed AND s.gate_max_recovery_minutes IS NOT NULL AND d.recovery_minutes IS NULL),
        CASE
            WHEN d.passed IS NULL THEN format('the {} drill was never run', replace(d.drill, '_', ' '))
            WHEN NOT d.passed THEN format(
                'the {} drill failed on {} at {}{}',
                replace(d.drill, '_', ' '), d.cluster_id, strftime(d.run_at, '%Y-%m-%d %H:%M') || ' UTC',
                CASE WHEN d.note IS NOT NULL AND d.note <> '' THEN ': ' || d.note ELSE '' END
            )
            WHEN s.gate_max_recovery_minutes IS NULL THEN NULL
            WHEN d.recovery_minutes IS NULL THEN format(
                'the {} drill passed but its recovery time is not recorded; the gate allows {} minutes',
                replace(d.drill, '_', ' '), CAST(s.gate_max_recovery_minutes AS DOUBLE)
            )
            WHEN d.recovery_minutes > s.gate_max_recovery_minutes THEN format(
                'the {} drill recovered in {} minutes; the gate allows {}',
                replace(d.drill, '_', ' '), CAST(d.recovery_minutes AS DOUBLE), CAST(s.gate_max_recovery_minutes AS DOUBLE)
            )
        END,
        NULL,
        FALSE
    FROM intermediate.int_gate_drills AS d
    CROSS JOIN settings AS s
)
SELECT
    eval_set,
    criterion,
    value,
    CAST(threshold AS DECIMAL(18, 2)) AS threshold,
    CASE WHEN NOT skipped THEN coalesce(met, FALSE) END AS passed,
    CASE
        WHEN skipped THEN 'skipped'
        WHEN coalesce(met, FALSE) THEN 'passed'
        WHEN can_fail THEN 'failed'
        ELSE 'missing'
    END AS status,
    detail,
    cases_needed
FROM measured
ORDER BY eval_set, position, criterion
