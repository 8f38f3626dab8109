-- grain: one row per month x cluster x category
-- materialized: view
-- unique_key: month, cluster_id, category
-- description: Operating costs as loaded; cluster_id NULL = shared by all clusters.
SELECT
    month,
    nullif(cluster_id, '') AS cluster_id,
    category,
    amount AS amount_usd,
    note
FROM raw.opex
