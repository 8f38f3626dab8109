-- grain: one row per month (UTC) from the first to the last month with any activity
-- materialized: table
-- unique_key: month
-- description: The month spine: every month between the first and last month that has requests, charges, invoices, opex or FOCUS rows, or samples of the cluster's own meters (engine or GPU metrics).
-- column month DATE: The month (its first day, UTC).
-- column month_start TIMESTAMP: The month's first instant (UTC).
-- column month_end TIMESTAMP: The next month's first instant: the month is [month_start, month_end).
-- column hours_in_month BIGINT: Hours from month_start to month_end (672 to 744).
WITH activity AS (
    SELECT month AS m FROM intermediate.int_requests_monthly
    UNION ALL SELECT CAST(date_trunc('month', charge_start) AS DATE) FROM staging.stg_ledger__cluster_charges
    UNION ALL SELECT CAST(date_trunc('month', charge_end - INTERVAL 1 MICROSECOND) AS DATE) FROM staging.stg_ledger__cluster_charges
    UNION ALL SELECT month FROM intermediate.int_invoice_lines_current
    UNION ALL SELECT month FROM staging.stg_ledger__opex
    UNION ALL SELECT CAST(date_trunc('month', charge_period_start) AS DATE) FROM staging.stg_ledger__focus_charges
    UNION ALL SELECT CAST(date_trunc('month', charge_period_end - INTERVAL 1 MICROSECOND) AS DATE)
        FROM staging.stg_ledger__focus_charges WHERE charge_period_end > charge_period_start
    UNION ALL SELECT DISTINCT CAST(date_trunc('month', sampled_at) AS DATE) FROM staging.stg_ledger__engine_metrics
    UNION ALL SELECT DISTINCT CAST(date_trunc('month', sampled_at) AS DATE) FROM staging.stg_ledger__gpu_metrics
),
bounds AS (SELECT min(m) AS lo, max(m) AS hi FROM activity),
spine AS (
    SELECT unnest(generate_series(CAST(lo AS TIMESTAMP), CAST(hi AS TIMESTAMP), INTERVAL 1 MONTH)) AS month_start
    FROM bounds
    WHERE lo IS NOT NULL
)

SELECT
    CAST(g.month_start AS DATE) AS month,
    CAST(g.month_start AS TIMESTAMP) AS month_start,
    CAST(g.month_start + INTERVAL 1 MONTH AS TIMESTAMP) AS month_end,
    date_diff('hour', CAST(g.month_start AS TIMESTAMP), CAST(g.month_start + INTERVAL 1 MONTH AS TIMESTAMP)) AS hours_in_month
FROM spine AS g
