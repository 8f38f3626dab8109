-- How one month's cost figures tie together, each step a named difference in dollars. $month: the month (first day).
-- spent: the cash view (both routes as billed, review included) less the API's tax and credits is the month as it
-- ran (F + the API's run-rate + review on both routes), the hybrid plan's 'today' row. plan: from today to the
-- cheapest plan and to everything on the API (n = 0). break_even: the break-even's saving, which is everything on the
-- API less the month as it ran (both price the cluster's accepted tasks at C). A step's total is the one before plus
-- its change; a total without a change (today, the saving) is read from its own mart, so that a test can check that
-- the steps reach it.
WITH b AS (
    SELECT * FROM marts.monthly_break_even WHERE month = CAST($month AS DATE)
),
cash AS (
    SELECT sum(cost_usd) AS usd FROM marts.monthly_route_cost WHERE month = CAST($month AS DATE)
),
plan AS (
    SELECT
        max(total_usd) FILTER (WHERE scenario = 'today') AS today_usd,
        max(total_usd) FILTER (WHERE scenario = 'plan' AND nodes = 0) AS all_api_usd,
        max(total_usd) FILTER (WHERE scenario = 'plan' AND is_cheapest) AS cheapest_usd,
        max(nodes) FILTER (WHERE scenario = 'plan' AND is_cheapest) AS cheapest_nodes
    FROM marts.monthly_hybrid_plan
    WHERE month = CAST($month AS DATE)
),
steps AS (
    SELECT 1 AS position, 'spent' AS part, 'cash' AS step, CAST(NULL AS BIGINT) AS nodes,
        CAST(NULL AS DECIMAL(38, 12)) AS change_usd, c.usd AS total_usd
    FROM cash AS c
    UNION ALL
    SELECT 2, 'spent', 'tax_and_credits', NULL, -(b.api_tax_usd + b.api_credits_usd),
        c.usd - (b.api_tax_usd + b.api_credits_usd)
    FROM cash AS c, b
    UNION ALL
    SELECT 3, 'spent', 'today', NULL, NULL, p.today_usd FROM plan AS p WHERE p.today_usd IS NOT NULL
    UNION ALL
    SELECT 4, 'plan', 'cheapest', p.cheapest_nodes, p.cheapest_usd - p.today_usd, p.cheapest_usd
    FROM plan AS p WHERE p.today_usd IS NOT NULL AND p.cheapest_usd IS NOT NULL
    UNION ALL
    SELECT 5, 'plan', 'all_api', 0, p.all_api_usd - p.cheapest_usd, p.all_api_usd
    FROM plan AS p WHERE p.today_usd IS NOT NULL AND p.all_api_usd IS NOT NULL
    UNION ALL
    SELECT 6, 'break_even', 'saving', NULL, NULL, b.saving_usd FROM b WHERE b.saving_usd IS NOT NULL
)
SELECT position, part, step, nodes, change_usd, total_usd
FROM steps
ORDER BY position
