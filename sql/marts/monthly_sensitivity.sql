-- grain: one row per month x scenario
-- materialized: table
-- unique_key: month, scenario
-- description: What-if figures for the report's sensitivity section, from the month's measured figures and the break-even definitions of marts.monthly_break_even (review is variable: it is paid per task on both routes). Capacity scenarios: the cluster delivers 30 / 50 / 70 / 100 % of its capacity at the SLO in accepted tasks (monthly token capacity x share / tokens per accepted task); its fixed cost stays, review grows with the tasks. 'provisioned for the observed peak' assumes no autoscaling (a 13-minute cold start): the cluster is sized for its busiest hour, so its average load is 1 / peak-to-average of capacity; computed only for months with at least 1,000 self-hosted requests (a peak of a few requests says nothing). Cache-hit scenarios re-price the comparator's tokens at another cache-hit share (C's token cost scaled by cost(h) / cost measured; review and, on the measured basis, the invoice-vs-metered difference kept as measured).
-- column month DATE: First day of the month (UTC).
-- column scenario_group VARCHAR: 'capacity' or 'cache_hit_rate'.
-- column scenario VARCHAR: The scenario's label; 'measured' rows repeat the month's actual figures.
-- column is_measured BOOLEAN: True for the row that holds the measured figures.
-- column share_of_capacity DOUBLE: Share of the clusters' monthly token capacity at the SLO the accepted tasks use (assumed, or measured: tokens served / capacity).
-- column api_cache_hit_rate DOUBLE: Cache-hit share of the comparator's input tokens (assumed in the cache_hit_rate group).
-- column self_hosted_accepted_tasks BIGINT: Accepted tasks the cluster delivers in the scenario.
-- column self_hosted_cost_per_accepted_task_usd DECIMAL(38,12): (fixed cost + review of those tasks) / those tasks.
-- column api_cost_per_accepted_task_usd DECIMAL(38,12): The comparator C in the scenario.
-- column break_even_accepted_tasks DECIMAL(38,12): fixed cost / (C - V) in the scenario; NULL when C <= V.
-- column self_hosting_cheaper BOOLEAN: self_hosted_accepted_tasks >= break_even_accepted_tasks (never true without tasks); NULL without a break-even.
WITH be AS (
    SELECT * FROM marts.monthly_break_even WHERE verdict NOT IN ('no_self_hosted_route', 'no_api_price')
),
routes AS (
    SELECT
        month,
        max(cache_hit_input_tokens + cache_miss_input_tokens + output_tokens + reasoning_tokens)
            FILTER (WHERE route = 'self_hosted') AS sh_tokens,
        max(cache_hit_rate) FILTER (WHERE route = 'self_hosted') AS sh_cache_hit_rate,
        max(accepted_tasks) FILTER (WHERE route = 'api') AS api_accepted,
        max(cache_hit_rate) FILTER (WHERE route = 'api') AS api_cache_hit_rate,
        max(requests) FILTER (WHERE route = 'self_hosted') AS sh_requests
    FROM marts.monthly_route_cost
    GROUP BY month
),
peak AS (
    SELECT month, max(peak_to_average_tokens) AS peak_to_average FROM marts.monthly_utilisation GROUP BY month
),
base AS (
    SELECT
        be.*,
        r.sh_requests,
        be.tokens_per_accepted_task AS tokens_per_task,
        CASE WHEN be.api_cost_source = 'equivalent' THEN r.sh_cache_hit_rate ELSE r.api_cache_hit_rate END
            AS comparator_cache_hit_rate,
        CASE WHEN be.monthly_token_capacity > 0 THEN CAST(r.sh_tokens AS DOUBLE) / CAST(be.monthly_token_capacity AS DOUBLE) END
            AS measured_share,
        p.peak_to_average,
        be.api_review_per_accepted_task_usd AS c_review_usd
    FROM be
    JOIN routes AS r USING (month)
    LEFT JOIN peak AS p USING (month)
),
capacity_cases AS (
    SELECT b.month, s.scenario, CAST(s.u AS DOUBLE) AS u, FALSE AS is_measured
    FROM base AS b
    CROSS JOIN (VALUES ('30% of capacity', 0.30), ('50% of capacity', 0.50), ('70% of capacity', 0.70),
                       ('100% of capacity', 1.00)) AS s (scenario, u)
    WHERE b.monthly_token_capacity > 0 AND b.tokens_per_task > 0
    UNION ALL
    SELECT month, 'provisioned for the observed peak (no autoscaling: average load = 1 / peak-to-average)',
           1.0 / peak_to_average, FALSE
    FROM base
    WHERE peak_to_average > 0 AND sh_requests >= 1000 AND monthly_token_capacity > 0 AND tokens_per_task > 0
),
capacity_rows AS (
    SELECT
        c.month,
        'capacity' AS scenario_group,
        c.scenario,
        c.is_measured,
        c.u AS share_of_capacity,
        b.comparator_cache_hit_rate AS api_cache_hit_rate,
        CAST(floor(c.u * CAST(b.monthly_token_capacity AS DOUBLE) / b.tokens_per_task) AS BIGINT) AS tasks,
        b.fixed_cost_usd,
        b.self_hosted_variable_cost_per_accepted_task_usd AS v_usd,
        b.api_cost_per_accepted_task_usd,
        b.break_even_accepted_tasks
    FROM capacity_cases AS c
    JOIN base AS b USING (month)
    UNION ALL
    SELECT
        month, 'capacity', 'measured', TRUE, measured_share, comparator_cache_hit_rate, self_hosted_accepted_tasks,
        fixed_cost_usd, self_hosted_variable_cost_per_accepted_task_usd, api_cost_per_accepted_task_usd,
        break_even_accepted_tasks
    FROM base
),
token_cost AS (
    -- cost(h) = A - h x B + C of the comparator's route's priced requests, and its measured value
    SELECT
        month,
        route,
        sum(a_all_miss_usd) AS a_usd,
        sum(b_hit_saving_usd) AS b_usd,
        sum(c_not_read_input_usd) AS c_usd,
        sum(CASE WHEN route = 'api' THEN metered_usd ELSE api_equivalent_usd END) AS measured_usd
    FROM intermediate.int_requests_monthly
    WHERE requests > unpriced_requests
    GROUP BY month, route
),
cache_cases AS (
    SELECT b.month, s.scenario, CAST(s.h AS DECIMAL(5, 4)) AS h
    FROM base AS b
    CROSS JOIN (VALUES ('cache hits 0%', 0.00), ('cache hits 25%', 0.25), ('cache hits 50%', 0.50),
                       ('cache hits 75%', 0.75), ('cache hits 90%', 0.90)) AS s (scenario, h)
),
cache_priced AS (
    SELECT
        c.month,
        c.scenario,
        c.h,
        b.* EXCLUDE (month),
        CASE
            WHEN t.measured_usd > 0 AND b.api_cost_source = 'equivalent' THEN
                CAST(b.api_equivalent_cost_per_accepted_task_usd
                     * money_div(t.a_usd - c.h * t.b_usd + t.c_usd, t.measured_usd) AS DECIMAL(38, 12)) + b.c_review_usd
            WHEN t.measured_usd IS NOT NULL AND b.api_cost_source = 'measured' THEN
                money_div(b.api_run_rate_usd - t.measured_usd + (t.a_usd - c.h * t.b_usd + t.c_usd), r.api_accepted)
                + b.c_review_usd
        END AS c_h_usd
    FROM cache_cases AS c
    JOIN base AS b USING (month)
    JOIN routes AS r USING (month)
    LEFT JOIN token_cost AS t
        ON t.month = c.month AND t.route = CASE b.api_cost_source WHEN 'equivalent' THEN 'self_hosted' ELSE 'api' END
),
cache_rows AS (
    SELECT
        month,
        'cache_hit_rate' AS scenario_group,
        scenario,
        FALSE AS is_measured,
        measured_share AS share_of_capacity,
        CAST(h AS DOUBLE) AS api_cache_hit_rate,
        self_hosted_accepted_tasks AS tasks,
        fixed_cost_usd,
        self_hosted_variable_cost_per_accepted_task_usd AS v_usd,
        CAST(c_h_usd AS DECIMAL(38, 12)) AS api_cost_per_accepted_task_usd,
        break_even_tasks(fixed_cost_usd, c_h_usd, self_hosted_variable_cost_per_accepted_task_usd)
            AS break_even_accepted_tasks
    FROM cache_priced
    WHERE c_h_usd IS NOT NULL
),
all_rows AS (
    SELECT * FROM capacity_rows
    UNION ALL
    SELECT * FROM cache_rows
)
SELECT
    month,
    scenario_group,
    scenario,
    is_measured,
    share_of_capacity,
    api_cache_hit_rate,
    tasks AS self_hosted_accepted_tasks,
    CAST(money_div(fixed_cost_usd, tasks) + v_usd AS DECIMAL(38, 12)) AS self_hosted_cost_per_accepted_task_usd,
    api_cost_per_accepted_task_usd,
    break_even_accepted_tasks,
    CASE WHEN break_even_accepted_tasks IS NOT NULL THEN tasks > 0 AND tasks >= break_even_accepted_tasks END
        AS self_hosting_cheaper
FROM all_rows
