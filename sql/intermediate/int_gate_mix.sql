-- grain: one row per eval set whose cases name categories, in months with production's workload logged
-- materialized: view
-- unique_key: eval_set
-- description: Whether an evaluation set's cases are representative of production: each category's share of the set's cases against its share of production's accepted tasks (both routes) in the set's months, by the workload the request log names. A set none of whose cases names a category, or whose months have no workload logged, has no row (the check is skipped).
-- settings: gate_mix_tolerance
-- column eval_set VARCHAR: The evaluation set.
-- column largest_gap DOUBLE: The largest gap between a category's share of the cases and its share of production's accepted tasks, as a share (0.1 = 10 points); a category on one side only counts its whole share.
-- column beyond VARCHAR: The categories whose gap is beyond the tolerance (gate.mix_tolerance), each with both shares in percent, the largest gap first (equal gaps in category order); NULL when none.
WITH cases AS (
    SELECT eval_set, case_id, category FROM intermediate.int_gate_case_routes
),
set_months AS (
    SELECT DISTINCT eval_set, month FROM intermediate.int_gate_cases WHERE month IS NOT NULL
),
production_mix AS (
    SELECT m.eval_set, w.workload AS category, sum(w.accepted_tasks) AS tasks
    FROM set_months AS m
    JOIN intermediate.int_workload_tasks_monthly AS w ON m.month = w.month
    WHERE w.workload <> '(none)'
    GROUP BY m.eval_set, w.workload
    HAVING sum(w.accepted_tasks) > 0
),
case_mix AS (
    SELECT eval_set, category, count(*) AS tasks
    FROM cases
    WHERE eval_set IN (SELECT c.eval_set FROM cases AS c WHERE c.category <> 'uncategorised')
    GROUP BY eval_set, category
),
mix_shares AS (
    SELECT
        coalesce(c.eval_set, p.eval_set) AS eval_set,
        coalesce(c.category, p.category) AS category,
        CAST(coalesce(c.tasks, 0) AS DOUBLE)
        / nullif(sum(coalesce(c.tasks, 0)) OVER (PARTITION BY coalesce(c.eval_set, p.eval_set)), 0) AS case_share,
        CAST(coalesce(p.tasks, 0) AS DOUBLE)
        / nullif(sum(coalesce(p.tasks, 0)) OVER (PARTITION BY coalesce(c.eval_set, p.eval_set)), 0)
            AS production_share
    FROM case_mix AS c
    FULL OUTER JOIN production_mix AS p ON c.eval_set = p.eval_set AND c.category = p.category
)
SELECT
    m.eval_set,
    max(abs(m.case_share - m.production_share)) AS largest_gap,
    string_agg(
        m.category || ': ' || CAST(round(m.case_share * 100, 1) AS VARCHAR) || ' % of the cases, '
        || CAST(round(m.production_share * 100, 1) AS VARCHAR) || ' % of production''s accepted tasks',
        -- the largest gap first (ascending on its negative: the form both engines order a list by); gaps equal
        -- but for the last binary digits of their quotients tie, in the categories' order
        '; ' ORDER BY -round(abs(m.case_share - m.production_share), 9) ASC, m.category ASC
    ) FILTER (WHERE abs(m.case_share - m.production_share) > s.gate_mix_tolerance) AS beyond
FROM mix_shares AS m
CROSS JOIN staging.stg_ledger__settings AS s
WHERE m.case_share IS NOT NULL AND m.production_share IS NOT NULL
GROUP BY m.eval_set
