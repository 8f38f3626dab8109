-- grain: one row per month x provider (with enough accepted API tasks, alone or pooled); provider NULL: all providers of the month pooled
-- materialized: table
-- unique_key: month, provider
-- description: The API waste factor W of each provider: the metered cost of all its attempts / that of its accepted attempts (at its own prices), from the month alone when it has at least min_tasks_for_factor accepted tasks (a setting), else pooled with up to 3 months before until it has (pooled_back: how many); a provider that reaches the minimum in no such way has no row. One more row per month with provider NULL pools every API provider's attempts of the month (no months before). Break-even uses one row per month (is_break_even_factor): the reference provider's own, else the pooled providers'; without either, W is assumed 1 by its readers. Another provider's retries never enter the reference provider's W. Its 95 % interval is the 2.5th and 97.5th percentile of a reproducible Poisson bootstrap (500 replicates) over the task groups of int_api_task_groups_monthly in the months and providers it was measured on: each group's weight in a replicate is a Poisson(1) draw made from a hash of bootstrap_random_state (a setting), the replicate, the month and the group (the same for every provider, so a pooled group is resampled whole), so the same data and setting give the same interval.
-- settings: bootstrap_random_state, min_tasks_for_factor, reference_api_provider
-- column month DATE: First day of the month (UTC).
-- column provider VARCHAR: The API provider; NULL for the row that pools all providers of the month.
-- column pooled_back BIGINT: 0 when the month alone has enough accepted tasks, else how many months before it were pooled (1 to 3); 0 on the pooled providers' row.
-- column api_waste_factor DECIMAL(38,12): W, exact (DECIMAL).
-- column api_waste_factor_low DECIMAL(38,12): 2.5th percentile of the bootstrap replicates.
-- column api_waste_factor_high DECIMAL(38,12): 97.5th percentile of the bootstrap replicates.
-- column accepted_tasks HUGEINT: Accepted tasks W was measured on (over the months pooled).
-- column api_waste_basis VARCHAR: 'month', 'pooled' (with months before it) or 'pooled_providers' (every provider of the month).
-- column is_break_even_factor BOOLEAN: The row break-even uses for the month: the reference provider's, else the pooled providers'.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
-- how many months a window reaches back (0-3), and the bootstrap's 500 replicates
lookback AS (SELECT unnest(generate_series(0, 3)) AS back),
replicates AS (SELECT unnest(generate_series(0, 499)) AS replicate),
provider_months AS (
    SELECT month, provider, sum(attempts_metered_usd) AS attempts_usd, sum(accepted_metered_usd) AS accepted_usd,
        sum(accepted_tasks) AS accepted_tasks
    FROM intermediate.int_api_task_groups_monthly
    GROUP BY month, provider
),
candidates AS (
    -- each month of the spine, with every provider seen in it or the 3 months before
    SELECT DISTINCT r.month, p.provider
    FROM intermediate.int_months_spined AS r
    JOIN provider_months AS p ON p.month BETWEEN CAST(r.month - to_months(3) AS DATE) AND r.month
),
waste_windows AS (
    SELECT
        c.month,
        c.provider,
        k.back,
        coalesce(sum(p.accepted_tasks), 0) AS accepted_tasks,
        sum(p.attempts_usd) AS attempts_usd,
        sum(p.accepted_usd) AS accepted_usd
    FROM candidates AS c
    CROSS JOIN lookback AS k
    LEFT JOIN provider_months AS p
        ON p.provider = c.provider
        AND p.month BETWEEN CAST(c.month - to_months(CAST(k.back AS INTEGER)) AS DATE) AND c.month
    GROUP BY c.month, c.provider, k.back
    UNION ALL
    -- every provider of the month pooled (provider NULL), the month alone
    SELECT month, NULL, 0, sum(accepted_tasks), sum(attempts_usd), sum(accepted_usd)
    FROM provider_months
    GROUP BY month
),
waste_pool AS (
    -- the fewest months back that reach the minimum (with a metered accepted cost to divide by)
    SELECT w.month, w.provider, min(w.back) AS back
    FROM waste_windows AS w, settings AS s
    WHERE w.accepted_tasks >= s.min_tasks_for_factor AND w.accepted_usd > 0
    GROUP BY w.month, w.provider
),
waste AS (
    SELECT
        w.month,
        w.provider,
        p.back AS pooled_back,
        w.accepted_tasks,
        money_div(w.attempts_usd, w.accepted_usd) AS api_waste_factor
    FROM waste_pool AS p
    JOIN waste_windows AS w ON w.month = p.month AND w.provider IS NOT DISTINCT FROM p.provider AND w.back = p.back
),
-- its 95 % interval: a reproducible Poisson bootstrap over the task groups of the months and providers it was measured
-- on (500 replicates; each group's weight is a Poisson(1) draw from a hash of bootstrap_random_state, the replicate,
-- the month and the group). A group's draw is the same in every row that resamples it: drawn once per month, group
-- and replicate, then joined to each row.
group_weights AS (
    SELECT
        month,
        task_group,
        replicate,
        -- Poisson(1) by its cumulative distribution
        CASE WHEN u < 0.3678794412 THEN 0 WHEN u < 0.7357588823 THEN 1 WHEN u < 0.9196986029 THEN 2
            WHEN u < 0.9810118431 THEN 3 WHEN u < 0.9963401532 THEN 4 WHEN u < 0.9994058151 THEN 5
            WHEN u < 0.9999167589 THEN 6 WHEN u < 0.9999897508 THEN 7 ELSE 8 END AS weight
    FROM (
        SELECT
            g.month,
            g.task_group,
            b.replicate,
            -- one integer key per (random state, replicate, month, group), hashed whole (a hash that combines
            -- several arguments' hashes can mix them too weakly for independent draws), as a uniform draw in [0, 1)
            hash_key(
                ((CAST(s.bootstrap_random_state AS HUGEINT) * 1000 + b.replicate) * 100000
                    + date_diff('day', DATE '2000-01-01', g.month)) * 1000 + g.task_group
            ) / 1152921504606846976.0 AS u
        FROM (SELECT DISTINCT month, task_group FROM intermediate.int_api_task_groups_monthly) AS g
        CROSS JOIN settings AS s
        CROSS JOIN replicates AS b
    ) AS drawn
),
waste_replicates AS (
    SELECT
        w.month,
        w.provider,
        d.replicate,
        sum(d.weight * CAST(g.attempts_metered_usd AS DOUBLE))
        / nullif(sum(d.weight * CAST(g.accepted_metered_usd AS DOUBLE)), 0) AS factor
    FROM waste AS w
    JOIN intermediate.int_api_task_groups_monthly AS g
        ON g.month BETWEEN CAST(w.month - to_months(CAST(w.pooled_back AS INTEGER)) AS DATE) AND w.month
        AND (w.provider IS NULL OR g.provider = w.provider)
    JOIN group_weights AS d ON d.month = g.month AND d.task_group = g.task_group
    GROUP BY w.month, w.provider, d.replicate
),
waste_interval AS (
    SELECT
        month,
        provider,
        CAST(quantile_cont(factor, 0.025) AS DECIMAL(38, 12)) AS api_waste_factor_low,
        CAST(quantile_cont(factor, 0.975) AS DECIMAL(38, 12)) AS api_waste_factor_high
    FROM waste_replicates
    GROUP BY month, provider
),
ranked AS (
    -- the row break-even uses: the reference provider's own, else the pooled providers'
    SELECT
        w.*,
        row_number() OVER (
            PARTITION BY w.month ORDER BY CASE WHEN w.provider = s.reference_api_provider THEN 0 ELSE 1 END
        ) = 1 AND (w.provider = s.reference_api_provider OR w.provider IS NULL) AS is_break_even_factor
    FROM waste AS w
    CROSS JOIN settings AS s
    WHERE w.provider = s.reference_api_provider OR w.provider IS NULL
    UNION ALL
    SELECT w.*, FALSE
    FROM waste AS w
    CROSS JOIN settings AS s
    WHERE w.provider <> s.reference_api_provider
)

SELECT
    w.month,
    w.provider,
    w.pooled_back,
    w.api_waste_factor,
    i.api_waste_factor_low,
    i.api_waste_factor_high,
    w.accepted_tasks,
    CASE WHEN w.provider IS NULL THEN 'pooled_providers' WHEN w.pooled_back = 0 THEN 'month' ELSE 'pooled' END
        AS api_waste_basis,
    w.is_break_even_factor
FROM ranked AS w
LEFT JOIN waste_interval AS i ON i.month = w.month AND i.provider IS NOT DISTINCT FROM w.provider
