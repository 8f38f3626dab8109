-- grain: one row per eval set x route x category
-- materialized: table
-- unique_key: eval_set, route, category
-- description: The deployment gate side by side (seed 001): the evaluation set's cases on each route and category (and 'all categories'), every attempt counted: cases, accepted share, p95 latency against the route's SLO, retries per task, the token mix per accepted task (input, of it cache hits, output, reasoning) and the cost per accepted task. The API's cost is its attempts' metered cost at the provider's prices; the cluster's is its attempts' tokens at the month's self-hosted cost per token served (the fixed cost F / the tokens the clusters served: the eval's share of the month's cost); both with human review.
-- settings: slo_ms_api, slo_ms_self_hosted
-- column eval_set VARCHAR: The evaluation set.
-- column route VARCHAR: 'api' or 'self_hosted'.
-- column category VARCHAR: The cases' category, or 'all categories'.
-- column cases BIGINT: Cases with a task on this route.
-- column accepted_tasks BIGINT: Those tasks accepted (a latency violation is not accepted).
-- column accepted_share DECIMAL(18,6): accepted_tasks / the route's tasks of the set (one a case, normally).
-- column p95_latency_ms BIGINT: 95th percentile latency of every attempt (DuckDB quantile_disc); NULL without latencies.
-- column slo_ms BIGINT: The route's latency SLO (a setting); NULL without one.
-- column p95_within_slo BOOLEAN: p95_latency_ms <= slo_ms; NULL without an SLO or latencies.
-- column retries_per_task DECIMAL(18,6): (attempts - tasks) / tasks.
-- column input_tokens_per_accepted_task DECIMAL(18,1): Input tokens of every attempt (cache hits, misses and writes) / accepted tasks.
-- column cache_hit_input_tokens_per_accepted_task DECIMAL(18,1): The cache-hit part of them / accepted tasks.
-- column output_tokens_per_accepted_task DECIMAL(18,1): Visible output tokens of every attempt / accepted tasks.
-- column reasoning_tokens_per_accepted_task DECIMAL(18,1): Reasoning tokens of every attempt / accepted tasks.
-- column cost_usd DECIMAL(38,12): What the route's attempts cost, review included; NULL when an attempt has no price.
-- column cost_basis VARCHAR: 'metered' (API) or 'share_of_fixed_cost' (self-hosted: tokens x the month's cost per token served).
-- column cost_per_accepted_task_usd DECIMAL(38,12): cost_usd / accepted_tasks; NULL when none was accepted.
-- column first_measured_at TIMESTAMP: The route's first attempt of the set.
-- column last_measured_at TIMESTAMP: The route's last attempt of the set.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
per_token AS (
    SELECT month, self_hosted_cost_per_million_tokens_served FROM marts.monthly_break_even
),
tasks AS (
    SELECT
        g.*,
        g.input_tokens + g.output_tokens + g.reasoning_tokens AS tokens,
        CASE g.route
            WHEN 'api' THEN g.metered_cost_usd
            WHEN 'self_hosted' THEN money_div(
                (g.input_tokens + g.output_tokens + g.reasoning_tokens) * p.self_hosted_cost_per_million_tokens_served,
                1000000
            )
        END AS attempts_cost_usd
    FROM intermediate.int_gate_cases AS g
    LEFT JOIN per_token AS p ON g.month = p.month
    WHERE g.route IS NOT NULL
),
grouped AS (
    SELECT
        eval_set,
        route,
        coalesce(category, 'all categories') AS category,
        count(DISTINCT case_id) AS cases,
        count(*) AS tasks,
        count(*) FILTER (WHERE accepted) AS accepted_tasks,
        sum(attempts) AS attempts,
        sum(input_tokens) AS input_tokens,
        sum(cache_hit_input_tokens) AS cache_hit_input_tokens,
        sum(output_tokens) AS output_tokens,
        sum(reasoning_tokens) AS reasoning_tokens,
        -- NULL when any task's attempts have no price (count(*) = count(cost) otherwise)
        CASE WHEN count(attempts_cost_usd) = count(*)
            THEN CAST(sum(attempts_cost_usd) + sum(review_cost_usd) AS DECIMAL(38, 12))
        END AS cost_usd,
        min(first_started_at) AS first_measured_at,
        max(last_started_at) AS last_measured_at,
        flatten(list(latencies_ms) FILTER (WHERE latencies_ms IS NOT NULL)) AS latencies_ms
    FROM tasks
    GROUP BY GROUPING SETS ((eval_set, route, category), (eval_set, route))
),
with_p95 AS (
    -- the 95th percentile as DuckDB's quantile_disc takes it: the ceil(0.95 n)-th smallest latency (quantile_position)
    SELECT
        *,
        CAST(list_sort(latencies_ms)[
            CAST(quantile_position(array_length(latencies_ms), 0.95) AS BIGINT)
        ] AS BIGINT) AS p95_latency_ms
    FROM grouped
)

SELECT
    g.eval_set,
    g.route,
    g.category,
    g.cases,
    g.accepted_tasks,
    CAST(CAST(g.accepted_tasks AS DOUBLE) / g.tasks AS DECIMAL(18, 6)) AS accepted_share,
    g.p95_latency_ms,
    CASE g.route WHEN 'api' THEN s.slo_ms_api ELSE s.slo_ms_self_hosted END AS slo_ms,
    g.p95_latency_ms
    <= CASE g.route WHEN 'api' THEN s.slo_ms_api ELSE s.slo_ms_self_hosted END AS p95_within_slo,
    CAST(CAST(g.attempts - g.tasks AS DOUBLE) / g.tasks AS DECIMAL(18, 6)) AS retries_per_task,
    CAST(CAST(g.input_tokens AS DOUBLE) / nullif(g.accepted_tasks, 0) AS DECIMAL(18, 1)) AS input_tokens_per_accepted_task,
    CAST(CAST(g.cache_hit_input_tokens AS DOUBLE) / nullif(g.accepted_tasks, 0) AS DECIMAL(18, 1))
        AS cache_hit_input_tokens_per_accepted_task,
    CAST(CAST(g.output_tokens AS DOUBLE) / nullif(g.accepted_tasks, 0) AS DECIMAL(18, 1))
        AS output_tokens_per_accepted_task,
    CAST(CAST(g.reasoning_tokens AS DOUBLE) / nullif(g.accepted_tasks, 0) AS DECIMAL(18, 1))
        AS reasoning_tokens_per_accepted_task,
    g.cost_usd,
    CASE g.route WHEN 'api' THEN 'metered' ELSE 'share_of_fixed_cost' END AS cost_basis,
    money_div(g.cost_usd, g.accepted_tasks) AS cost_per_accepted_task_usd,
    g.first_measured_at,
    g.last_measured_at
FROM with_p95 AS g
CROSS JOIN settings AS s
