-- grain: one row per month x team x workload (with accepted tasks on the API)
-- materialized: table
-- unique_key: month, team, workload
-- description: Which API traffic to move to the cluster first. A workload is the request log's team and workload ('(none)' when not logged). For each workload on the API: its accepted tasks, tokens per accepted task (every attempt), cache-hit share, and what one accepted task costs there (its own attempts' metered cost, each provider's x that provider's invoice uplift U, its price beyond list, plus its review, per accepted task: its own retries and failures, its own waste); the saving per task if the cluster served it (that cost - V, the cluster's variable cost per accepted task: its review per accepted task of the same workload, or of all its work when it accepted fewer than min_tasks_for_factor of the workload's). On the cluster a moved task occupies its accepted attempt's tokens x the cluster's own attempts per accepted task (the cluster's tokens of every attempt / those of its accepted attempts, for the workload when the cluster accepted at least min_tasks_for_factor of its tasks, else over all the cluster's work), in the hour its accepted attempt started: the API's failed and retried attempts never occupy the cluster, and a workload moves only onto a cluster that accepted work that month (with none accepted, its attempts per accepted task are unbounded). The saving per million of those cluster tokens orders the moves, highest first. Spare capacity is checked in every hour: each hour the committed nodes (owned hardware in service, reserved and other committed charges) serve their capacity per node x 3,600 tokens, less the cluster's own tokens of the hour (int_cluster_nodes_hourly, int_cluster_capacity_monthly, summed over clusters); a workload fits when, in every hour it has work, its tokens and those of the workloads ranked before it fit what is spare; the first that does not fit stops the filling (traffic moves in order). Cache-heavy work is cheap on the API and saves little per token: it moves last. Workloads that save nothing never move.
-- settings: min_tasks_for_factor
-- column month DATE: First day of the month (UTC).
-- column team VARCHAR: The team that sent the work ('(none)': not logged).
-- column workload VARCHAR: The kind of work (coding, long_context, ...; '(none)': not logged).
-- column accepted_tasks BIGINT: The workload's tasks accepted on the API this month.
-- column tokens_per_accepted_task DECIMAL(38,2): The workload's API tokens (input including cache hits and writes, output, reasoning; every attempt) per accepted task.
-- column cache_hit_share DECIMAL(9,6): Cache-hit input tokens / all input tokens of the workload's API attempts.
-- column api_cost_per_accepted_task_usd DECIMAL(38,12): (the metered cost of the workload's API attempts, each provider's x its invoice uplift U (its price beyond list, intermediate.int_api_uplift_monthly; 1 without an invoice), + its review cost) / its accepted tasks.
-- column self_hosted_variable_cost_per_accepted_task_usd DECIMAL(38,12): V for the workload, what one of its accepted tasks adds on the cluster (review): the cluster's review per accepted task of the workload when it accepted at least min_tasks_for_factor of them, else the route's V (marts.monthly_break_even).
-- column saving_per_task_usd DECIMAL(38,12): api_cost_per_accepted_task_usd - V: what each task saves once the cluster serves it (its fixed cost is paid either way).
-- column saving_per_million_tokens_usd DECIMAL(38,12): The saving per task / the cluster tokens a task would occupy (cluster_tokens_per_accepted_task) x 1,000,000: the order in which spare capacity is filled; NULL when the cluster's attempts per accepted task are unbounded.
-- column saving_usd DECIMAL(38,12): saving_per_task_usd x accepted tasks: the month's saving had the workload run on the cluster.
-- column peak_tokens_per_second DOUBLE: The workload's busiest clock hour on the cluster had it moved: its accepted attempts' tokens started in the hour x the cluster's attempts per accepted task / 3,600.
-- column unpriced_requests HUGEINT: The workload's API requests without a price (their cost is missing from its cost per task).
-- column spare_capacity_tokens_per_second DOUBLE: In the workload's tightest hour (tightest_hour): the committed nodes' capacity less the cluster's own tokens, per second; NULL for a workload not ranked, without a known capacity or without a cluster that served the month.
-- column move_rank BIGINT: 1 = moves first: by saving per million tokens, highest first (then team, workload); NULL for a workload that saves nothing.
-- column cumulative_peak_tokens_per_second DOUBLE: In the workload's tightest hour: its tokens per second on the cluster and those of every workload ranked before it.
-- column fits BOOLEAN: It saves money, and in every hour it has work, it and every workload ranked before it fit the spare capacity (and so did every workload before it).
-- column cumulative_saving_usd DECIMAL(38,12): The month's saving from moving this workload and the ones before it that fit (the saving of the moves so far).
-- column reason VARCHAR: Why the workload moves or not, in words.
-- column review_cost_usd DECIMAL(38,12): The workload's review on the API this month (inside api_cost_per_accepted_task_usd): what moving it stops paying there, as the cluster's review per task (V) takes its place.
-- column cluster_attempts_per_accepted_task DECIMAL(38,12): The cluster's tokens of every attempt / those of its accepted attempts this month, for the workload (cluster_attempts_basis 'workload') or all its work ('route'); NULL when the cluster accepted nothing (unbounded).
-- column cluster_attempts_basis VARCHAR: 'workload' (the cluster accepted at least min_tasks_for_factor of the workload's tasks), 'route' (fewer: all the cluster's work) or NULL (the cluster accepted nothing this month).
-- column cluster_tokens_per_accepted_task DECIMAL(38,2): The workload's accepted attempts' tokens per accepted task x cluster_attempts_per_accepted_task: what one task would occupy on the cluster.
-- column tightest_hour TIMESTAMP: The hour the workload and those ranked before it come closest to (or furthest past) the spare capacity, the earliest of ties; NULL for a workload not ranked or when the spare capacity is not known.
-- column self_hosted_variable_cost_basis VARCHAR: 'workload' (the cluster's review of the workload's own tasks) or 'route' (the route's V); NULL when neither is known.
WITH settings AS (SELECT min_tasks_for_factor FROM staging.stg_ledger__settings),
uplift AS (
    -- each provider's invoice uplift U: its price beyond list (intermediate.int_api_uplift_monthly), never unlogged
    -- volume
    SELECT month, provider, api_invoice_uplift AS uplift
    FROM intermediate.int_api_uplift_monthly
),
usage AS (
    -- the workload's API attempts, every one: what it paid there
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
accepted_api AS (
    SELECT month, team, workload, sum(accepted_tokens) AS accepted_tokens
    FROM intermediate.int_workload_accepted_hourly
    WHERE route = 'api'
    GROUP BY month, team, workload
),
-- the cluster's attempts per accepted task: its tokens of every attempt / those of its accepted attempts, for each
-- workload and for all its work
cluster_all AS (
    SELECT month, team, workload, sum(tokens) AS tokens
    FROM intermediate.int_workload_usage_hourly
    WHERE route = 'self_hosted'
    GROUP BY month, team, workload
),
cluster_accepted AS (
    SELECT month, team, workload, sum(accepted_tasks) AS accepted_tasks, sum(accepted_tokens) AS accepted_tokens
    FROM intermediate.int_workload_accepted_hourly
    WHERE route = 'self_hosted'
    GROUP BY month, team, workload
),
cluster_route_all AS (
    SELECT month, sum(tokens) AS tokens FROM cluster_all GROUP BY month
),
cluster_route_accepted AS (
    SELECT month, sum(accepted_tokens) AS accepted_tokens FROM cluster_accepted GROUP BY month
),
cluster_route AS (
    SELECT a.month, a.tokens, coalesce(c.accepted_tokens, 0) AS accepted_tokens
    FROM cluster_route_all AS a
    LEFT JOIN cluster_route_accepted AS c USING (month)
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
        coalesce(a.accepted_tokens, 0) AS accepted_tokens,
        CASE
            WHEN ca.accepted_tasks >= s.min_tasks_for_factor AND ca.accepted_tokens > 0 AND cw.tokens > 0
                THEN money_div(cw.tokens, ca.accepted_tokens)
            WHEN r.accepted_tokens > 0 THEN money_div(r.tokens, r.accepted_tokens)
        END AS cluster_factor,
        CASE
            WHEN ca.accepted_tasks >= s.min_tasks_for_factor AND ca.accepted_tokens > 0 AND cw.tokens > 0 THEN 'workload'
            WHEN r.accepted_tokens > 0 THEN 'route'
        END AS cluster_factor_basis
    FROM intermediate.int_workload_tasks_monthly AS t
    JOIN usage AS u ON t.month = u.month AND t.team = u.team AND t.workload = u.workload
    LEFT JOIN accepted_api AS a ON t.month = a.month AND t.team = a.team AND t.workload = a.workload
    LEFT JOIN cluster_all AS cw ON t.month = cw.month AND t.team = cw.team AND t.workload = cw.workload
    LEFT JOIN cluster_accepted AS ca ON t.month = ca.month AND t.team = ca.team AND t.workload = ca.workload
    LEFT JOIN cluster_route AS r ON t.month = r.month
    CROSS JOIN settings AS s
    WHERE t.route = 'api' AND t.accepted_tasks > 0
),
-- the cluster's review per accepted task of each workload, where it accepted at least min_tasks_for_factor of them
cluster_reviews AS (
    SELECT
        t.month,
        t.team,
        t.workload,
        money_div(t.review_cost_usd, t.accepted_tasks) AS review_per_task
    FROM intermediate.int_workload_tasks_monthly AS t
    CROSS JOIN settings AS s
    WHERE t.route = 'self_hosted' AND t.accepted_tasks > 0 AND t.accepted_tasks >= s.min_tasks_for_factor
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
        coalesce(v.review_per_task, b.self_hosted_variable_cost_per_accepted_task_usd)
            AS self_hosted_variable_cost_per_accepted_task_usd,
        CASE
            WHEN v.review_per_task IS NOT NULL THEN 'workload'
            WHEN b.self_hosted_variable_cost_per_accepted_task_usd IS NOT NULL THEN 'route'
        END AS self_hosted_variable_cost_basis,
        w.unpriced_requests,
        w.review_cost_usd,
        w.cluster_factor,
        w.cluster_factor_basis,
        -- the cluster tokens the workload's accepted tasks would occupy
        money_mul(w.accepted_tokens, w.cluster_factor) AS cluster_tokens
    FROM workloads AS w
    LEFT JOIN marts.monthly_break_even AS b ON w.month = b.month
    LEFT JOIN cluster_reviews AS v ON w.month = v.month AND w.team = v.team AND w.workload = v.workload
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
        CASE WHEN cluster_tokens > 0
            THEN CAST(money_count_share(saving_per_task_usd, accepted_tasks * 1000000, cluster_tokens)
                AS DECIMAL(38, 12))
        END AS saving_per_million_tokens_usd
    FROM saved
),
candidates AS (
    -- a workload that saves money per task and per cluster token is ranked; the others never move
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
-- each hour's spare capacity: the committed nodes' tokens less the cluster's own, each cluster's at least 0 (at
-- the capacity a what-if of `costledger plan` gives, when it gives one)
spare_hours AS (
    SELECT
        n.month,
        n.hour,
        sum(greatest(CAST(n.committed_nodes AS DOUBLE)
            * CAST(plan_capacity(k.capacity_per_node_tokens_per_second) AS DOUBLE) * 3600
            - CAST(n.tokens AS DOUBLE), 0)) AS spare_tokens,
        bool_and(plan_capacity(k.capacity_per_node_tokens_per_second) IS NOT NULL) AS capacity_known
    FROM intermediate.int_cluster_nodes_hourly AS n
    LEFT JOIN intermediate.int_cluster_capacity_monthly AS k USING (cluster_id, month)
    GROUP BY n.month, n.hour
),
spare_months AS (
    SELECT month, bool_and(capacity_known) AS capacity_known FROM spare_hours GROUP BY month
),
-- each ranked workload's tokens on the cluster in each hour its accepted attempts started in, with those of the
-- workloads ranked before it
occupied AS (
    SELECT
        r.month,
        r.team,
        r.workload,
        r.move_rank,
        a.hour,
        CAST(a.accepted_tokens AS DOUBLE) * CAST(r.cluster_factor AS DOUBLE) AS tokens
    FROM ranked AS r
    JOIN intermediate.int_workload_accepted_hourly AS a
        ON a.route = 'api' AND a.month = r.month AND a.team = r.team AND a.workload = r.workload
    WHERE r.cluster_factor IS NOT NULL
),
checked AS (
    -- the running total over the ranked workloads (an unranked one's is never judged)
    SELECT
        o.*,
        sum(o.tokens) OVER (
            PARTITION BY o.month, o.hour ORDER BY o.move_rank ASC NULLS LAST
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS cumulative_tokens,
        coalesce(sp.spare_tokens, 0) AS spare_tokens
    FROM occupied AS o
    LEFT JOIN spare_hours AS sp ON o.month = sp.month AND o.hour = sp.hour
),
hours_ranked AS (
    SELECT
        *,
        row_number() OVER (
            PARTITION BY month, team, workload ORDER BY spare_tokens - cumulative_tokens ASC, hour ASC
        ) AS tightness,
        row_number() OVER (PARTITION BY month, team, workload ORDER BY spare_tokens - tokens ASC, hour ASC)
            AS tightness_alone,
        max(tokens) OVER (PARTITION BY month, team, workload) AS peak_tokens
    FROM checked
),
tightest AS (
    SELECT
        t.month,
        t.team,
        t.workload,
        t.hour AS tightest_hour,
        t.peak_tokens,
        t.spare_tokens,
        t.cumulative_tokens,
        t.cumulative_tokens <= t.spare_tokens AS fits_with_those_before,
        a.hour AS tightest_hour_alone,
        a.tokens AS tokens_alone,
        a.spare_tokens AS spare_tokens_alone
    FROM hours_ranked AS t
    JOIN hours_ranked AS a ON a.month = t.month AND a.team = t.team AND a.workload = t.workload AND a.tightness_alone = 1
    WHERE t.tightness = 1
),
judged AS (
    SELECT
        r.*,
        m.month IS NOT NULL AS cluster_served,
        coalesce(m.capacity_known, FALSE) AS capacity_known,
        t.tightest_hour,
        t.peak_tokens,
        t.spare_tokens,
        t.cumulative_tokens,
        t.fits_with_those_before,
        t.tightest_hour_alone,
        t.tokens_alone,
        t.spare_tokens_alone,
        CASE WHEN r.saves
            THEN coalesce(bool_and(coalesce(t.fits_with_those_before AND m.capacity_known, FALSE)) OVER (
                PARTITION BY r.month, r.saves ORDER BY r.move_rank ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
            ), FALSE)
            ELSE FALSE
        END AS fits
    FROM ranked AS r
    LEFT JOIN tightest AS t ON r.month = t.month AND r.team = t.team AND r.workload = t.workload
    LEFT JOIN spare_months AS m ON r.month = m.month
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
    CASE WHEN peak_tokens IS NOT NULL THEN peak_tokens / 3600 END AS peak_tokens_per_second,
    unpriced_requests,
    CASE WHEN capacity_known AND move_rank IS NOT NULL THEN spare_tokens / 3600 END AS spare_capacity_tokens_per_second,
    move_rank,
    CASE WHEN capacity_known AND move_rank IS NOT NULL THEN cumulative_tokens / 3600 END
        AS cumulative_peak_tokens_per_second,
    fits,
    CAST(coalesce(sum(CASE WHEN fits THEN saving_usd END) OVER (
        PARTITION BY month ORDER BY move_rank ASC NULLS LAST, team ASC, workload ASC
        ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
    ), 0) AS DECIMAL(38, 12)) AS cumulative_saving_usd,
    CASE
        WHEN saving_per_task_usd IS NULL THEN 'no cost to compare: the cluster''s variable cost per task is not known'
        WHEN saving_per_task_usd <= 0 THEN 'saves nothing: the API costs no more per task than the cluster''s review'
        WHEN NOT cluster_served THEN 'no cluster served requests this month: there is no spare capacity to move it into'
        WHEN cluster_factor IS NULL THEN
            'the cluster accepted none of its work this month: what a task would take there (its attempts per '
            || 'accepted task) is unbounded'
        WHEN NOT capacity_known THEN 'the cluster''s capacity is not known (no load test within the latency target, '
            || 'and no busiest 5 minutes observed)'
        WHEN fits THEN 'fits in the spare capacity in every hour it has work'
        WHEN spare_tokens_alone <= 0 THEN format(
            'no spare capacity at {} UTC, an hour it has work: the committed nodes are full then',
            left(CAST(tightest_hour_alone AS VARCHAR), 16)
        )
        WHEN tokens_alone > spare_tokens_alone THEN format(
            'does not fit: at {} UTC it needs {} tokens a second, the cluster has {} spare',
            left(CAST(tightest_hour_alone AS VARCHAR), 16), CAST(round(tokens_alone / 3600) AS BIGINT),
            CAST(round(spare_tokens_alone / 3600) AS BIGINT)
        )
        WHEN NOT fits_with_those_before THEN format(
            'does not fit after the workloads before it: together they would pass the spare capacity at {} UTC',
            left(CAST(tightest_hour AS VARCHAR), 16)
        )
        ELSE 'waits for the workloads before it: one of them does not fit, and traffic moves in order'
    END AS reason,
    review_cost_usd,
    CAST(cluster_factor AS DECIMAL(38, 12)) AS cluster_attempts_per_accepted_task,
    cluster_factor_basis AS cluster_attempts_basis,
    CASE WHEN accepted_tasks > 0 AND cluster_tokens IS NOT NULL
        THEN CAST(money_div(cluster_tokens, accepted_tasks) AS DECIMAL(38, 2)) END AS cluster_tokens_per_accepted_task,
    CASE WHEN capacity_known AND move_rank IS NOT NULL THEN tightest_hour END AS tightest_hour,
    self_hosted_variable_cost_basis
FROM judged
ORDER BY month ASC, move_rank ASC NULLS LAST, team ASC, workload ASC
