-- grain: one row per cluster charge
-- materialized: view
-- unique_key: charge_id
-- description: Cluster charges as loaded, with their length in seconds. Amounts in another currency are converted to USD at the fx rate of the charge start.
-- column charge_id VARCHAR
-- column cluster_id VARCHAR
-- column charge_start TIMESTAMP
-- column charge_end TIMESTAMP
-- column charge_seconds BIGINT: Length of the charge's period in seconds (charge_end - charge_start): what a charge is split by when it spans months.
-- column kind VARCHAR
-- column quantity DECIMAL(38,6)
-- column unit VARCHAR
-- column unit_price DECIMAL(38,12)
-- column amount_usd DECIMAL(38,12): The charge's amount in USD (converted at the fx rate of the charge start when it was in another currency).
SELECT
    t.charge_id,
    t.cluster_id,
    t.charge_start,
    t.charge_end,
    date_diff('second', t.charge_start, t.charge_end) AS charge_seconds,
    t.kind,
    t.quantity,
    t.unit,
    t.unit_price,
    CAST(t.amount * CASE WHEN t.currency = 'USD' THEN 1 ELSE fx.usd_per_unit END AS DECIMAL(38, 12)) AS amount_usd
FROM raw.cluster_charges AS t
LEFT JOIN staging.stg_ledger__fx AS fx
    ON
        t.currency = fx.currency AND CAST(t.charge_start AS DATE) >= fx.date
        AND (fx.next_date IS NULL OR CAST(t.charge_start AS DATE) < fx.next_date)
