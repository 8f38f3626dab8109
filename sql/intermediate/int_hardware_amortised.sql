-- grain: one row per owned asset x month amortised
-- materialized: table
-- unique_key: asset_id, month
-- description: Straight-line amortisation, full-month convention: (purchase price - salvage) / life_months for each of life_months months starting with the in-service month, until the month before retirement. Rounded to 1e-12 by telescoping, so the months add up to the amortisable amount exactly. Only months on the month spine appear.
-- column asset_id VARCHAR
-- column cluster_id VARCHAR
-- column month DATE
-- column month_index BIGINT: Which month of the asset's life this is: 1 for its in-service month.
-- column amount_usd DECIMAL(38,12): The month's amortisation: (purchase price - salvage value) / life_months, telescoped so the months add up to the amortisable amount exactly.
WITH asset_months AS (
    SELECT
        h.asset_id,
        h.cluster_id,
        h.purchase_price_usd - h.salvage_value_usd AS amortisable_usd,
        h.life_months,
        m.month,
        date_diff('month', CAST(date_trunc('month', h.in_service_date) AS DATE), m.month) + 1 AS month_index
    FROM staging.stg_ledger__hardware AS h
    JOIN intermediate.int_months_spined AS m
        ON m.month >= CAST(date_trunc('month', h.in_service_date) AS DATE)
        AND (h.retired_date IS NULL OR m.month_start < CAST(h.retired_date AS TIMESTAMP))
)
SELECT
    asset_id,
    cluster_id,
    month,
    month_index,
    money_div(amortisable_usd * month_index, life_months) - money_div(amortisable_usd * (month_index - 1), life_months)
        AS amount_usd
FROM asset_months
WHERE month_index <= life_months
