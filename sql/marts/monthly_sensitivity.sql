-- grain: one row per month x scenario
-- materialized: table
-- unique_key: month, scenario
-- description: What-if figures for the report's sensitivity section, from the month's measured figures. Utilisation scenarios keep the self-hosted cost (the cluster is provisioned either way) and scale the accepted tasks it delivers with productive utilisation; 'provisioned for observed peak' uses 1 / peak-to-average, the highest average utilisation a cluster sized for its busiest hour can reach. Cache-hit scenarios re-price the month's API input tokens at another cache-hit share (the invoice-vs-metered difference and review cost kept as measured).
-- column month: First day of the month (UTC).
-- column scenario_group: 'utilisation' or 'cache_hit_rate'.
-- column scenario: The scenario's label; 'measured' rows repeat the month's actual figures.
-- column is_measured: True for the row that holds the measured figures.
-- column productive_utilisation: Productive utilisation assumed (utilisation group) or measured.
-- column api_cache_hit_rate: API cache-hit share of input tokens assumed (cache_hit_rate group) or measured.
-- column self_hosted_accepted_tasks: Accepted tasks the cluster would deliver at that productive utilisation.
-- column self_hosted_cost_per_accepted_task_usd: Self-hosted cost / those tasks.
-- column api_cost_per_accepted_task_usd: API cost per accepted task in the scenario.
-- column break_even_accepted_tasks: Self-hosted cost / API cost per accepted task in the scenario.
-- column self_hosting_cheaper: self_hosted_accepted_tasks >= break_even_accepted_tasks.
WITH be AS (
    SELECT * FROM marts.monthly_break_even
),
api AS (
    SELECT month, cost_usd AS api_cost_usd, accepted_tasks AS api_accepted_tasks, cache_hit_rate AS api_cache_hit_rate
    FROM marts.monthly_route_cost
    WHERE route = 'api'
),
peak AS (
    SELECT month, max(peak_to_average) AS peak_to_average FROM marts.monthly_utilisation GROUP BY month
),
utilisation_cases AS (
    SELECT be.month, s.scenario, CAST(s.u AS DOUBLE) AS u, false AS is_measured
    FROM be CROSS JOIN (VALUES ('utilisation 30%', 0.30), ('utilisation 50%', 0.50), ('utilisation 70%', 0.70),
                               ('utilisation 100%', 1.00)) AS s(scenario, u)
    UNION ALL
    SELECT month, 'provisioned for observed peak (1 / peak-to-average)', 1.0 / peak_to_average, false
    FROM peak WHERE peak_to_average > 0
    UNION ALL
    SELECT month, 'measured', productive_utilisation, true FROM be
),
utilisation_rows AS (
    SELECT
        c.month,
        'utilisation' AS scenario_group,
        c.scenario,
        c.is_measured,
        c.u AS productive_utilisation,
        a.api_cache_hit_rate,
        CASE WHEN be.productive_utilisation > 0 THEN
            money_div(
                CAST(be.self_hosted_accepted_tasks AS DECIMAL(38, 12)) * CAST(c.u AS DECIMAL(38, 12)),
                CAST(be.productive_utilisation AS DECIMAL(38, 12)))
        END AS tasks_at_u,
        be.self_hosted_cost_usd,
        be.api_cost_per_accepted_task_usd,
        be.break_even_accepted_tasks
    FROM utilisation_cases AS c
    JOIN be USING (month)
    LEFT JOIN api AS a USING (month)
),
token_prices AS (
    -- metered(h) = A - h x B + C for an API cache-hit share h of input tokens
    SELECT
        month,
        sum(a_all_miss_usd) AS a_all_miss_usd,
        sum(b_hit_saving_usd) AS b_hit_saving_usd,
        sum(c_output_usd) AS c_output_usd,
        sum(metered_usd) AS metered_usd
    FROM intermediate.int_requests_monthly
    WHERE route = 'api' AND requests > unpriced_requests
    GROUP BY month
),
cache_cases AS (
    SELECT t.month, s.scenario, CAST(s.h AS DECIMAL(5, 4)) AS h, false AS is_measured
    FROM token_prices AS t
    CROSS JOIN (VALUES ('cache hits 0%', 0.00), ('cache hits 25%', 0.25), ('cache hits 50%', 0.50),
                       ('cache hits 75%', 0.75), ('cache hits 90%', 0.90)) AS s(scenario, h)
),
cache_rows AS (
    SELECT
        c.month,
        'cache_hit_rate' AS scenario_group,
        c.scenario,
        c.is_measured,
        be.productive_utilisation,
        CAST(c.h AS DOUBLE) AS api_cache_hit_rate,
        CAST(be.self_hosted_accepted_tasks AS DECIMAL(38, 12)) AS tasks_at_u,
        be.self_hosted_cost_usd,
        money_div(a.api_cost_usd - t.metered_usd + (t.a_all_miss_usd - c.h * t.b_hit_saving_usd + t.c_output_usd),
                  a.api_accepted_tasks) AS api_cost_per_accepted_task_usd
    FROM cache_cases AS c
    JOIN token_prices AS t USING (month)
    JOIN api AS a USING (month)
    JOIN be USING (month)
),
cache_rows_be AS (
    SELECT
        *,
        CASE WHEN api_cost_per_accepted_task_usd > 0
            THEN money_div(self_hosted_cost_usd, api_cost_per_accepted_task_usd) END AS break_even_accepted_tasks
    FROM cache_rows
),
all_rows AS (
    SELECT month, scenario_group, scenario, is_measured, productive_utilisation, api_cache_hit_rate, tasks_at_u,
           self_hosted_cost_usd, api_cost_per_accepted_task_usd, break_even_accepted_tasks
    FROM utilisation_rows
    UNION ALL
    SELECT month, scenario_group, scenario, is_measured, productive_utilisation, api_cache_hit_rate, tasks_at_u,
           self_hosted_cost_usd, api_cost_per_accepted_task_usd, break_even_accepted_tasks
    FROM cache_rows_be
)
SELECT
    month,
    scenario_group,
    scenario,
    is_measured,
    productive_utilisation,
    api_cache_hit_rate,
    tasks_at_u AS self_hosted_accepted_tasks,
    money_div(self_hosted_cost_usd, tasks_at_u) AS self_hosted_cost_per_accepted_task_usd,
    api_cost_per_accepted_task_usd,
    break_even_accepted_tasks,
    tasks_at_u >= break_even_accepted_tasks AS self_hosting_cheaper
FROM all_rows
