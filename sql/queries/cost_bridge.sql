-- How one month's cost figures tie together, each step a named difference in dollars. $month: the month (first day).
-- spent: the cash view (both routes as billed, review included) less the API's tax and credits is the month as it
-- ran (F + the API's run-rate + review on both routes), the hybrid plan's 'today' row. plan: from today to the
-- cheapest plan and to everything on the API (n = 0). break_even: from the break-even's saving to the plan's
-- "everything on the API minus today": the review each counts, and how each prices the cluster's work (the plan: every
-- attempt at the API as it happened, no waste factor W, the API's own attempts at list price x U; the break-even:
-- the accepted attempts x W x U). A step's total is the one before plus its change; a total without a change
-- (today, the plan's difference) is read from its own mart, so that a test can check that the steps reach it.
WITH b AS (
    SELECT * FROM marts.monthly_break_even WHERE month = CAST($month AS DATE)
),
cash AS (
    SELECT sum(cost_usd) AS usd FROM marts.monthly_route_cost WHERE month = CAST($month AS DATE)
),
plan AS (
    SELECT
        max(total_usd) FILTER (WHERE scenario = 'today') AS today_usd,
        max(api_overflow_cost_usd) FILTER (WHERE scenario = 'today') AS today_api_usd,
        max(total_usd) FILTER (WHERE scenario = 'plan' AND nodes = 0) AS all_api_usd,
        max(api_overflow_cost_usd) FILTER (WHERE scenario = 'plan' AND nodes = 0) AS all_api_overflow_usd,
        max(total_usd) FILTER (WHERE scenario = 'plan' AND is_cheapest) AS cheapest_usd,
        max(nodes) FILTER (WHERE scenario = 'plan' AND is_cheapest) AS cheapest_nodes
    FROM marts.monthly_hybrid_plan
    WHERE month = CAST($month AS DATE)
),
review AS (
    -- (V - the API's review per accepted task) x the cluster's accepted tasks, and (C - the API's review) x them
    SELECT
        CAST((self_hosted_variable_cost_per_accepted_task_usd - api_review_per_accepted_task_usd)
            * self_hosted_accepted_tasks AS DECIMAL(38, 12)) AS review_difference_usd,
        CAST((api_cost_per_accepted_task_usd - api_review_per_accepted_task_usd) * self_hosted_accepted_tasks
            AS DECIMAL(38, 12)) AS comparator_tokens_usd,
        saving_usd
    FROM b
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
    SELECT 6, 'break_even', 'saving', NULL, NULL, r.saving_usd FROM review AS r WHERE r.saving_usd IS NOT NULL
    UNION ALL
    SELECT 7, 'break_even', 'review', NULL, r.review_difference_usd, r.saving_usd + r.review_difference_usd
    FROM review AS r WHERE r.saving_usd IS NOT NULL
    UNION ALL
    SELECT 8, 'break_even', 'pricing', NULL,
        (p.all_api_overflow_usd - p.today_api_usd) - r.comparator_tokens_usd,
        r.saving_usd + r.review_difference_usd + (p.all_api_overflow_usd - p.today_api_usd) - r.comparator_tokens_usd
    FROM review AS r, plan AS p
    WHERE r.saving_usd IS NOT NULL AND p.all_api_usd IS NOT NULL AND p.today_usd IS NOT NULL
    UNION ALL
    SELECT 9, 'break_even', 'all_api_minus_today', NULL, NULL, p.all_api_usd - p.today_usd
    FROM review AS r, plan AS p
    WHERE r.saving_usd IS NOT NULL AND p.all_api_usd IS NOT NULL AND p.today_usd IS NOT NULL
)
SELECT position, part, step, nodes, change_usd, total_usd
FROM steps
ORDER BY position
