-- grain: one row per eval set
-- materialized: view
-- unique_key: eval_set
-- description: What each evaluation set of the deployment gate covers: its cases, their categories, the cases run on both routes (the hosted API and the cluster) and the days its API measurements span. A set named only by a drill run has no cases.
-- column eval_set VARCHAR: The evaluation set.
-- column cases BIGINT: Its cases.
-- column categories BIGINT: The categories its cases name ('uncategorised' counting as one).
-- column categories_on_both BIGINT: The categories with a case run on both routes.
-- column cases_missing_a_route BIGINT: The cases not run on both routes (on one of them, or on neither).
-- column missing_cases VARCHAR: Those cases in case order, each with the route it was not run on (or on neither route: none of its tasks is in the request log); NULL when none.
-- column api_days DECIMAL(18,2): The days between the set's first and last API attempt; NULL when it has no API attempt.
WITH cases AS (
    SELECT * FROM intermediate.int_gate_case_routes
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
        string_agg(
            c.case_id || CASE
                WHEN c.on_api THEN ' (not on the cluster)'
                WHEN c.on_cluster THEN ' (not on the API)'
                ELSE ' (on neither route)'
            END,
            ', ' ORDER BY c.case_id
        ) FILTER (WHERE NOT (c.on_api AND c.on_cluster)) AS missing_cases
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
)
SELECT
    c.eval_set,
    c.cases,
    c.categories,
    c.categories_on_both,
    c.cases_missing_a_route,
    c.missing_cases,
    a.days AS api_days
FROM case_counts AS c
LEFT JOIN api_span AS a ON c.eval_set = a.eval_set
