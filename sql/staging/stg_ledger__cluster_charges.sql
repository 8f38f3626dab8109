-- grain: one row per cluster charge
-- materialized: view
-- unique_key: charge_id
-- description: Cluster charges as loaded, with their length in seconds.
SELECT
    charge_id,
    cluster_id,
    charge_start,
    charge_end,
    date_diff('second', charge_start, charge_end) AS charge_seconds,
    kind,
    quantity,
    unit,
    unit_price,
    amount AS amount_usd
FROM raw.cluster_charges
