-- The usual published planning arithmetic, used by `costledger scenario` (with the rates given) and by the report (with
-- the month's measured self-hosted cost per provisioned hour and measured API cost per accepted task).
-- Parameters (bound, never formatted in): $rates (DECIMAL[] USD per cluster-hour), $hours (hours per month),
-- $api_costs (DECIMAL[] USD per API task).
-- One row per rate x API cost: monthly cost = rate x hours; API tasks that cost the same = monthly / API cost,
-- exact and rounded to the nearest 100 as the published example rounds them.
WITH rates AS (SELECT unnest(CAST($rates AS DECIMAL(18, 6)[])) AS rate_per_hour_usd),
api AS (SELECT unnest(CAST($api_costs AS DECIMAL(18, 6)[])) AS api_cost_per_task_usd),
monthly AS (
    SELECT rate_per_hour_usd, CAST(rate_per_hour_usd * CAST($hours AS DECIMAL(18, 6)) AS DECIMAL(38, 12)) AS monthly_cost_usd
    FROM rates
)
SELECT
    m.rate_per_hour_usd,
    CAST($hours AS DECIMAL(18, 6)) AS hours,  -- noqa: RF02
    m.monthly_cost_usd,
    a.api_cost_per_task_usd,
    money_div(m.monthly_cost_usd, a.api_cost_per_task_usd) AS equivalent_api_tasks,
    CAST(round(money_div(m.monthly_cost_usd, a.api_cost_per_task_usd), -2) AS BIGINT) AS equivalent_api_tasks_rounded
FROM monthly AS m
CROSS JOIN api AS a
ORDER BY m.rate_per_hour_usd ASC, a.api_cost_per_task_usd DESC
