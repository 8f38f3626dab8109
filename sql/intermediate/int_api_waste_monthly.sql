-- grain: one row per month (with enough accepted API tasks, alone or pooled)
-- materialized: table
-- unique_key: month
-- description: The API waste factor W: the metered cost of all the API route's attempts / that of its accepted attempts (at the route's own prices), from the month alone when it has at least min_tasks_for_factor accepted API tasks (a setting), else pooled with up to 3 months before until it has (pooled_back: how many); months that reach the minimum in no such way have no row (W is then assumed 1 by its readers). Its 95 % interval is the 2.5th and 97.5th percentile of a reproducible Poisson bootstrap (500 replicates) over the task groups of int_api_task_groups_monthly in the months it was measured on: each group's weight in a replicate is a Poisson(1) draw made from a hash of bootstrap_random_state (a setting), the replicate, the month and the group, so the same data and setting give the same interval.
-- column month: First day of the month (UTC).
-- column pooled_back: 0 when the month alone has enough accepted API tasks, else how many months before it were pooled (1 to 3).
-- column api_waste_factor: W, exact (DECIMAL).
-- column api_waste_factor_low: 2.5th percentile of the bootstrap replicates.
-- column api_waste_factor_high: 97.5th percentile of the bootstrap replicates.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
-- how many months a window reaches back (0-3), and the bootstrap's 500 replicates
lookback AS (SELECT unnest(generate_series(0, 3)) AS back),
replicates AS (SELECT unnest(generate_series(0, 499)) AS replicate),
waste_months AS (
    SELECT
        month,
        sum(attempts_metered_usd) AS attempts_usd,
        sum(accepted_metered_usd) AS accepted_usd,
        sum(accepted_tasks) AS accepted_tasks
    FROM intermediate.int_api_task_groups_monthly
    GROUP BY month
),
waste_windows AS (
    SELECT
        r.month,
        k.back,
        coalesce(sum(w.accepted_tasks), 0) AS accepted_tasks,
        sum(w.attempts_usd) AS attempts_usd,
        sum(w.accepted_usd) AS accepted_usd
    FROM intermediate.int_months_spined AS r
    CROSS JOIN lookback AS k
    LEFT JOIN waste_months AS w
        ON w.month BETWEEN CAST(r.month - to_months(CAST(k.back AS INTEGER)) AS DATE) AND r.month
    GROUP BY r.month, k.back
),
waste_pool AS (
    -- the fewest months back that reach the minimum (with a metered accepted cost to divide by)
    SELECT w.month, min(w.back) AS back
    FROM waste_windows AS w, settings AS s
    WHERE w.accepted_tasks >= s.min_tasks_for_factor AND w.accepted_usd > 0
    GROUP BY w.month
),
waste AS (
    SELECT
        w.month,
        p.back AS pooled_back,
        money_div(w.attempts_usd, w.accepted_usd) AS api_waste_factor
    FROM waste_pool AS p
    JOIN waste_windows AS w USING (month, back)
),
-- its 95 % interval: a reproducible Poisson bootstrap over the task groups of the months it was measured on (500 replicates;
-- each group's weight is a Poisson(1) draw from a hash of bootstrap_random_state, the replicate, the month and the group)
waste_draws AS (
    SELECT
        w.month,
        b.replicate,
        -- one integer key per (random state, replicate, month, group), hashed whole (a hash that combines several
        -- arguments' hashes can mix them too weakly for independent draws), as a uniform draw in [0, 1)
        hash_key(
            ((CAST(s.bootstrap_random_state AS HUGEINT) * 1000 + b.replicate) * 100000
                + date_diff('day', DATE '2000-01-01', g.month)) * 1000 + g.task_group
        ) / 1152921504606846976.0 AS u,
        g.attempts_metered_usd,
        g.accepted_metered_usd
    FROM waste AS w
    CROSS JOIN settings AS s
    JOIN intermediate.int_api_task_groups_monthly AS g
        ON g.month BETWEEN CAST(w.month - to_months(CAST(w.pooled_back AS INTEGER)) AS DATE) AND w.month
    CROSS JOIN replicates AS b
),
waste_replicates AS (
    SELECT
        month,
        replicate,
        sum(weight * CAST(attempts_metered_usd AS DOUBLE)) / nullif(sum(weight * CAST(accepted_metered_usd AS DOUBLE)), 0)
            AS factor
    FROM (
        SELECT
            *,
            -- Poisson(1) by its cumulative distribution
            CASE WHEN u < 0.3678794412 THEN 0 WHEN u < 0.7357588823 THEN 1 WHEN u < 0.9196986029 THEN 2
                WHEN u < 0.9810118431 THEN 3 WHEN u < 0.9963401532 THEN 4 WHEN u < 0.9994058151 THEN 5
                WHEN u < 0.9999167589 THEN 6 WHEN u < 0.9999897508 THEN 7 ELSE 8 END AS weight
        FROM waste_draws
    ) AS weighted
    GROUP BY month, replicate
),
waste_interval AS (
    SELECT
        month,
        CAST(quantile_cont(factor, 0.025) AS DECIMAL(38, 12)) AS api_waste_factor_low,
        CAST(quantile_cont(factor, 0.975) AS DECIMAL(38, 12)) AS api_waste_factor_high
    FROM waste_replicates
    GROUP BY month
)

SELECT
    w.month,
    w.pooled_back,
    w.api_waste_factor,
    i.api_waste_factor_low,
    i.api_waste_factor_high
FROM waste AS w
LEFT JOIN waste_interval AS i USING (month)
