-- grain: one row per month x cluster x category
-- materialized: view
-- unique_key: month, cluster_id, category
-- description: Operating costs as loaded; cluster_id NULL = shared by all clusters. Amounts in another currency are converted to USD at the fx rate of the month's first day.
-- column month DATE
-- column cluster_id VARCHAR
-- column category VARCHAR
-- column amount_usd DECIMAL(38,12): The operating cost in USD (converted at the fx rate of the month's first day).
-- column note VARCHAR
SELECT
    t.month,
    nullif(t.cluster_id, '') AS cluster_id,
    t.category,
    CAST(t.amount * CASE WHEN t.currency = 'USD' THEN 1 ELSE fx.usd_per_unit END AS DECIMAL(38, 12)) AS amount_usd,
    t.note
FROM raw.opex AS t
LEFT JOIN staging.stg_ledger__fx AS fx
    ON
        t.currency = fx.currency AND CAST(t.month AS DATE) >= fx.date
        AND (fx.next_date IS NULL OR CAST(t.month AS DATE) < fx.next_date)
