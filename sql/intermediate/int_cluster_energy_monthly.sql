-- grain: one row per cluster x month with GPU energy metered
-- materialized: table
-- unique_key: cluster_id, month
-- description: The energy each cluster's GPUs drew in the month and what it cost. A GPU's energy is its energy counter's rises where the month has any, else its power gauge integrated over time (int_gpu_intervals). The cost is kWh x energy.pue (the site's energy over the GPUs') x energy.usd_per_kwh, for the owned hardware's share of the month's provisioned node-hours only: a cloud node's energy is in its price and is never added twice. It becomes the operating cost line energy (marts.monthly_self_hosted_cost) unless the month has an opex row of category energy for the cluster or for all clusters (the site's own bill comes first).
-- settings: energy_pue, energy_usd_per_kwh
-- column cluster_id VARCHAR
-- column month DATE
-- column gpus BIGINT: GPUs metered (series of energy or power).
-- column energy_kwh DECIMAL(38,12): kWh the GPUs drew (exact to 1e-12).
-- column energy_source VARCHAR: counter (every GPU's energy counter), power (the power gauge integrated over time) or mixed.
-- column owned_share DECIMAL(38,12): The owned hardware's node-hours / all provisioned node-hours of the cluster in the month (0 without owned hardware in service).
-- column energy_usd DECIMAL(38,12): energy_kwh x pue x usd_per_kwh x owned_share; NULL without energy.usd_per_kwh.
-- column energy_line VARCHAR: What became of the cost: added (an operating cost line energy), opex_row (the month's opex has energy), no_owned_hardware (all of it is in cloud prices) or no_price (energy.usd_per_kwh is not set).
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
per_gpu AS (
    SELECT
        cluster_id,
        month,
        labels,
        bool_or(measure = 'energy_mj') AS has_counter,
        sum(energy_kwh) FILTER (WHERE measure = 'energy_mj') AS counter_kwh,
        sum(energy_kwh) FILTER (WHERE measure = 'power_w') AS power_kwh
    FROM intermediate.int_gpu_intervals
    WHERE measure IN ('energy_mj', 'power_w')
    GROUP BY cluster_id, month, labels
),
clusters AS (
    SELECT
        cluster_id,
        month,
        count(*) AS gpus,
        CAST(sum(CASE WHEN has_counter THEN counter_kwh ELSE coalesce(power_kwh, 0) END) AS DECIMAL(38, 12)) AS energy_kwh,
        CASE WHEN bool_and(has_counter) THEN 'counter' WHEN bool_or(has_counter) THEN 'mixed' ELSE 'power' END
            AS energy_source
    FROM per_gpu
    GROUP BY cluster_id, month
),
owned AS (
    SELECT
        cluster_id,
        month,
        CASE WHEN committed_node_hours + on_demand_node_hours > 0
            THEN money_div(owned_node_hours, committed_node_hours + on_demand_node_hours) END AS owned_share
    FROM intermediate.int_cluster_nodes_monthly
),
opex_energy AS (
    -- the cluster months with an energy opex row of their own or of all clusters
    SELECT
        c.cluster_id,
        c.month
    FROM clusters AS c
    JOIN staging.stg_ledger__opex AS o
        ON o.month = c.month AND coalesce(o.cluster_id, c.cluster_id) = c.cluster_id AND o.category = 'energy'
    GROUP BY c.cluster_id, c.month
),
priced AS (
    SELECT
        c.*,
        CAST(coalesce(o.owned_share, 0) AS DECIMAL(38, 12)) AS owned_share,
        x.month IS NOT NULL AS opex_row
    FROM clusters AS c
    LEFT JOIN owned AS o USING (cluster_id, month)
    LEFT JOIN opex_energy AS x ON x.cluster_id = c.cluster_id AND x.month = c.month
)
SELECT
    p.cluster_id,
    p.month,
    p.gpus,
    p.energy_kwh,
    p.energy_source,
    p.owned_share,
    -- one product at a time, each back to 12 places: four factors' scales together would pass DECIMAL's 38 digits
    CAST(
        CAST(CAST(p.energy_kwh * s.energy_pue AS DECIMAL(38, 12)) * s.energy_usd_per_kwh AS DECIMAL(38, 12))
        * p.owned_share AS DECIMAL(38, 12)
    ) AS energy_usd,
    CASE
        WHEN p.opex_row THEN 'opex_row'
        WHEN p.owned_share = 0 THEN 'no_owned_hardware'
        WHEN s.energy_usd_per_kwh IS NULL THEN 'no_price'
        ELSE 'added'
    END AS energy_line
FROM priced AS p
CROSS JOIN settings AS s
