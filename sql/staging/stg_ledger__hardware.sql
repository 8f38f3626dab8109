-- grain: one row per owned asset
-- materialized: view
-- unique_key: asset_id
-- description: Owned hardware as loaded.
SELECT
    asset_id,
    cluster_id,
    purchase_price AS purchase_price_usd,
    coalesce(salvage_value, 0) AS salvage_value_usd,
    in_service_date,
    life_months,
    retired_date
FROM raw.hardware
