-- The report's measured planning row: the month's own break-even in the published planning table's terms, from the same F, C and
-- V as marts.monthly_break_even, so the two never disagree. The monthly cost is the fixed cost F (review, paid per
-- task on both routes, is in C - V instead); the cost per task is what each accepted task saves, C - V; the tasks
-- that cost the same are the break-even itself. The rate per provisioned hour (all clusters) is shown beside it.
-- Parameter: $month (DATE).
WITH hours AS (
    SELECT sum(provisioned_hours) AS hours FROM marts.monthly_utilisation WHERE month = $month
)
SELECT
    money_div(b.fixed_cost_usd, h.hours) AS rate_per_hour_usd,
    h.hours,
    b.fixed_cost_usd AS monthly_cost_usd,
    CAST(b.api_cost_per_accepted_task_usd - b.self_hosted_variable_cost_per_accepted_task_usd AS DECIMAL(38, 12))
        AS api_cost_per_task_usd,
    b.break_even_accepted_tasks AS equivalent_api_tasks,
    CAST(round(b.break_even_accepted_tasks, -2) AS BIGINT) AS equivalent_api_tasks_rounded,
    b.api_cost_source
FROM marts.monthly_break_even AS b
CROSS JOIN hours AS h
WHERE b.month = $month AND b.break_even_accepted_tasks IS NOT NULL  -- noqa: RF02
