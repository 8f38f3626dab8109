-- grain: one row per month x team x workload (with accepted tasks on the API)
-- materialized: table
-- unique_key: month, team, workload
-- description: Which API traffic to move to the cluster first. A workload is the request log's team and workload ('(none)' when not logged). For each workload on the API: its accepted tasks, tokens per accepted task (every attempt), cache-hit share, and what one accepted task costs there (its own attempts' metered cost, each provider's x that provider's invoice uplift U, its price beyond list, plus its review, per accepted task: its own retries and failures, its own waste); the saving per task if the cluster served it (that cost - V, the cluster's variable cost per accepted task) and per million tokens. The cluster's spare capacity at its busiest hour (nodes in service x capacity per node - the busiest hour's tokens per second) is filled by saving per token, highest first, each workload taking its own busiest hour's tokens per second; a workload fits while the running total fits, and the first that does not stops the filling (traffic moves in order). Cache-heavy work is cheap on the API and saves little per token: it moves last. Workloads that save nothing never move.
-- column month DATE: First day of the month (UTC).
-- column team VARCHAR: The team that sent the work ('(none)': not logged).
-- column workload VARCHAR: The kind of work (coding, long_context, ...; '(none)': not logged).
-- column accepted_tasks BIGINT: The workload's tasks accepted on the API this month.
-- column tokens_per_accepted_task DECIMAL(38,2): The workload's API tokens (input including cache hits and writes, output, reasoning; every attempt) per accepted task.
-- column cache_hit_share DECIMAL(9,6): Cache-hit input tokens / all input tokens of the workload's API attempts.
-- column api_cost_per_accepted_task_usd DECIMAL(38,12): (the metered cost of the workload's API attempts, each provider's x its invoice uplift U (its price beyond list, intermediate.int_api_uplift_monthly; 1 without an invoice), + its review cost) / its accepted tasks.
-- column self_hosted_variable_cost_per_accepted_task_usd DECIMAL(38,12): V, what an accepted task adds on the cluster (review), from marts.monthly_break_even.
-- column saving_per_task_usd DECIMAL(38,12): api_cost_per_accepted_task_usd - V: what each task saves once the cluster serves it (its fixed cost is paid either way).
-- column saving_per_million_tokens_usd DECIMAL(38,12): The saving per task / tokens per accepted task x 1,000,000: the order in which spare capacity is filled.
-- column saving_usd DECIMAL(38,12): saving_per_task_usd x accepted tasks: the month's saving had the workload run on the cluster.
-- column peak_tokens_per_second DOUBLE: The workload's busiest clock hour of the month on the API (its providers together): its tokens / 3,600.
-- column unpriced_requests HUGEINT: The workload's API requests without a price (their cost is missing from its cost per task).
-- column spare_capacity_tokens_per_second DOUBLE: The month's nodes in service x capacity per node - the cluster's busiest hour's tokens per second; NULL without a measured capacity.
-- column move_rank BIGINT: 1 = moves first: by saving per million tokens, highest first (then team, workload); NULL for a workload that saves nothing.
-- column cumulative_peak_tokens_per_second DOUBLE: The busiest-hour tokens per second of this workload and every one ranked before it.
-- column fits BOOLEAN: The workload and every one ranked before it fit in the spare capacity at the busiest hour, and it saves money.
-- column cumulative_saving_usd DECIMAL(38,12): The month's saving from moving this workload and the ones before it that fit (the saving of the moves so far).
-- column reason VARCHAR: Why the workload moves or not, in words.
-- column review_cost_usd DECIMAL(38,12): The workload's review on the API this month (inside api_cost_per_accepted_task_usd): what moving it stops paying there, as the cluster's review per task (V) takes its place.
WITH uplift AS (
    -- each provider's invoice uplift U: its price beyond list (intermediate.int_api_uplift_monthly), never unlogged
    -- volume
    SELECT month, provider, api_invoice_uplift AS uplift
    FROM intermediate.int_api_uplift_monthly
),
hours AS (
    -- a workload's hours over its providers
    SELECT month, hour, team, workload, sum(tokens) AS tokens
    FROM intermediate.int_workload_usage_hourly
    WHERE route = 'api'
    GROUP BY month, hour, team, workload
),
peaks AS (
    SELECT month, team, workload, max(tokens) AS peak_hour_tokens
    FROM hours
    GROUP BY month, team, workload
),
usage AS (
    SELECT
        h.month,
        h.team,
        h.workload,
        sum(h.tokens) AS tokens,
        sum(h.cache_hit_input_tokens) AS cache_hit_input_tokens,
        sum(h.input_tokens) AS input_tokens,
        CAST(sum(money_mul(h.metered_cost_usd, coalesce(u.uplift, 1))) AS DECIMAL(38, 12)) AS invoiced_cost_usd,
        sum(h.unpriced_requests) AS unpriced_requests
    FROM intermediate.int_workload_usage_hourly AS h
    LEFT JOIN uplift AS u ON h.month = u.month AND h.provider = u.provider
    WHERE h.route = 'api'
    GROUP BY h.month, h.team, h.workload
),
workloads AS (
    SELECT
        t.month,
        t.team,
        t.workload,
        t.accepted_tasks,
        t.review_cost_usd,
        u.tokens,
        u.cache_hit_input_tokens,
        u.input_tokens,
        u.invoiced_cost_usd,
        u.unpriced_requests,
        k.peak_hour_tokens
    FROM intermediate.int_workload_tasks_monthly AS t
    JOIN usage AS u ON t.month = u.month AND t.team = u.team AND t.workload = u.workload
    JOIN peaks AS k ON t.month = k.month AND t.team = k.team AND t.workload = k.workload
    WHERE t.route = 'api' AND t.accepted_tasks > 0
),
costed AS (
    SELECT
        w.month,
        w.team,
        w.workload,
        w.accepted_tasks,
        CAST(CAST(w.tokens AS DECIMAL(38, 0)) / w.accepted_tasks AS DECIMAL(38, 2)) AS tokens_per_accepted_task,
        CASE WHEN w.input_tokens > 0
            THEN CAST(CAST(w.cache_hit_input_tokens AS DECIMAL(38, 0)) / w.input_tokens AS DECIMAL(9, 6))
        END AS cache_hit_share,
        CAST(money_div(w.invoiced_cost_usd + w.review_cost_usd, w.accepted_tasks)
            AS DECIMAL(38, 12)) AS api_cost_per_accepted_task_usd,
        b.self_hosted_variable_cost_per_accepted_task_usd,
        w.tokens,
        CAST(w.peak_hour_tokens AS DOUBLE) / 3600 AS peak_tokens_per_second,
        w.unpriced_requests,
        w.review_cost_usd,
        CAST(b.nodes_in_service AS DOUBLE) * b.capacity_per_node_tokens_per_second
        - coalesce(b.peak_hour_tokens_per_second, 0) AS spare_capacity_tokens_per_second
    FROM workloads AS w
    LEFT JOIN marts.monthly_break_even AS b ON w.month = b.month
),
saved AS (
    SELECT
        *,
        CAST(api_cost_per_accepted_task_usd - self_hosted_variable_cost_per_accepted_task_usd AS DECIMAL(38, 12))
            AS saving_per_task_usd
    FROM costed
),
per_token AS (
    SELECT
        *,
        CAST(saving_per_task_usd * accepted_tasks AS DECIMAL(38, 12)) AS saving_usd,
        CASE WHEN tokens > 0
            THEN CAST(money_count_share(saving_per_task_usd, accepted_tasks * 1000000, tokens) AS DECIMAL(38, 12))
        END AS saving_per_million_tokens_usd
    FROM saved
),
candidates AS (
    -- a workload that saves money per task and per token is ranked; the others never move
    SELECT
        *,
        coalesce(saving_per_task_usd > 0 AND saving_per_million_tokens_usd IS NOT NULL, FALSE) AS saves
    FROM per_token
),
ranked AS (
    SELECT
        *,
        CASE WHEN saves
            THEN row_number() OVER (
                PARTITION BY month, saves ORDER BY saving_per_million_tokens_usd DESC, team ASC, workload ASC
            )
        END AS move_rank
    FROM candidates
),
filled AS (
    SELECT
        *,
        CASE WHEN saves
            THEN sum(peak_tokens_per_second) OVER (
                PARTITION BY month, saves ORDER BY move_rank
                ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
            )
        END AS cumulative_peak_tokens_per_second
    FROM ranked
),
judged AS (
    SELECT
        *,
        coalesce(saves AND cumulative_peak_tokens_per_second <= spare_capacity_tokens_per_second, FALSE) AS fits
    FROM filled
)
SELECT
    month,
    team,
    workload,
    accepted_tasks,
    tokens_per_accepted_task,
    cache_hit_share,
    api_cost_per_accepted_task_usd,
    self_hosted_variable_cost_per_accepted_task_usd,
    saving_per_task_usd,
    saving_per_million_tokens_usd,
    saving_usd,
    peak_tokens_per_second,
    unpriced_requests,
    spare_capacity_tokens_per_second,
    move_rank,
    cumulative_peak_tokens_per_second,
    fits,
    CAST(coalesce(sum(CASE WHEN fits THEN saving_usd END) OVER (
        PARTITION BY month ORDER BY move_rank ASC NULLS LAST, team ASC, workload ASC
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ), 0) AS DECIMAL(38, 12)) AS cumulative_saving_usd,
    CASE
        WHEN saving_per_task_usd IS NULL THEN 'no cost to compare: the cluster''s variable cost per task is not known'
        WHEN saving_per_task_usd <= 0 THEN 'saves nothing: the API costs no more per task than the cluster''s review'
        WHEN spare_capacity_tokens_per_second IS NULL THEN 'the cluster''s capacity is not measured (no load test)'
        WHEN fits THEN 'fits in the spare capacity at the busiest hour'
        WHEN spare_capacity_tokens_per_second <= 0 THEN 'no spare capacity at the busiest hour'
        WHEN peak_tokens_per_second > spare_capacity_tokens_per_second THEN format(
            'does not fit: its busiest hour needs {} tokens a second, the cluster has {} spare',
            CAST(round(peak_tokens_per_second) AS BIGINT), CAST(round(spare_capacity_tokens_per_second) AS BIGINT)
        )
        ELSE 'does not fit after the workloads before it: together they would pass the spare capacity'
    END AS reason,
    review_cost_usd
FROM judged
ORDER BY month ASC, move_rank ASC NULLS LAST, team ASC, workload ASC
