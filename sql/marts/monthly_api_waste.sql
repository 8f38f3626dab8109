-- grain: one row per month x API provider (with API attempts in the month)
-- materialized: table
-- unique_key: month, provider
-- description: Each API provider's waste factor W: the metered cost of all its attempts / that of its accepted attempts, at its own prices: what it spends on failures, retries and rejected tasks per dollar of accepted work. Measured on the month when the provider has at least min_tasks_for_factor accepted tasks (a setting), else pooled with up to 3 months before until it has, else assumed 1. Break-even uses the reference provider's own (marts.monthly_break_even.api_waste_factor), never another provider's.
-- settings: reference_api_provider
-- column month DATE: First day of the month (UTC).
-- column provider VARCHAR: The API provider.
-- column api_waste_factor DECIMAL(38,12): W, exact; 1 when assumed.
-- column api_waste_factor_low DECIMAL(38,12): Low end of W's 95 % interval (a reproducible bootstrap over task groups); 1 when assumed.
-- column api_waste_factor_high DECIMAL(38,12): High end of W's 95 % interval; 1 when assumed.
-- column accepted_tasks BIGINT: Accepted tasks whose accepted attempt went to the provider, in the months W was measured on (the month alone when assumed).
-- column api_waste_basis VARCHAR: 'month', 'pooled' (with months before it) or 'assumed' (too few accepted tasks even pooled: W = 1).
-- column is_reference_provider BOOLEAN: The provider is the reference API (settings): its W is the one break-even uses.
WITH providers AS (
    SELECT month, provider, sum(accepted_tasks) AS accepted_tasks
    FROM intermediate.int_api_task_groups_monthly
    GROUP BY month, provider
),
settings AS (SELECT * FROM staging.stg_ledger__settings)
SELECT
    p.month,
    p.provider,
    coalesce(w.api_waste_factor, CAST(1 AS DECIMAL(38, 12))) AS api_waste_factor,
    coalesce(w.api_waste_factor_low, CAST(1 AS DECIMAL(38, 12))) AS api_waste_factor_low,
    coalesce(w.api_waste_factor_high, CAST(1 AS DECIMAL(38, 12))) AS api_waste_factor_high,
    CAST(coalesce(w.accepted_tasks, p.accepted_tasks) AS BIGINT) AS accepted_tasks,
    coalesce(w.api_waste_basis, 'assumed') AS api_waste_basis,
    p.provider = s.reference_api_provider AS is_reference_provider
FROM providers AS p
CROSS JOIN settings AS s
LEFT JOIN intermediate.int_api_waste_monthly AS w ON w.month = p.month AND w.provider = p.provider
