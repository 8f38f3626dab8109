-- grain: one row per owned asset
-- materialized: view
-- unique_key: asset_id
-- description: Owned hardware as loaded. Prices in another currency are converted to USD at the fx rate of the in-service date. nodes: 1 when not given.
-- column asset_id VARCHAR
-- column cluster_id VARCHAR
-- column purchase_price_usd DECIMAL(38,12): The asset's purchase price in USD (converted at the fx rate of the in-service date).
-- column salvage_value_usd DECIMAL(38,12): What the asset is expected to fetch at the end of its life, in USD (0 when not given).
-- column in_service_date DATE
-- column life_months INTEGER
-- column retired_date DATE
-- column nodes INTEGER
SELECT
    t.asset_id,
    t.cluster_id,
    CAST(t.purchase_price * CASE WHEN t.currency = 'USD' THEN 1 ELSE fx.usd_per_unit END AS DECIMAL(38, 12)) AS purchase_price_usd,
    CAST(coalesce(t.salvage_value, 0) * CASE WHEN t.currency = 'USD' THEN 1 ELSE fx.usd_per_unit END AS DECIMAL(38, 12)) AS salvage_value_usd,
    t.in_service_date,
    t.life_months,
    t.retired_date,
    coalesce(t.nodes, 1) AS nodes
FROM raw.hardware AS t
LEFT JOIN staging.stg_ledger__fx AS fx
    ON
        t.currency = fx.currency AND CAST(t.in_service_date AS DATE) >= fx.date
        AND (fx.next_date IS NULL OR CAST(t.in_service_date AS DATE) < fx.next_date)
