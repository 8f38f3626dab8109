-- grain: one row per month x cluster x cost category x cost class
-- materialized: table
-- unique_key: month, cluster_id, category, cost_class
-- description: What self-hosting cost each month, by cluster, category and cost class: cluster charges split by hours (cluster_on_demand, cluster_reserved, cluster_other; FOCUS EffectiveCost (amortised: an upfront purchase over its term) of rows allocated to the cluster as focus_usage, focus_purchase, ..., focus_correction), straight-line hardware amortisation (hardware_amortisation) and operating costs (the opex categories, and energy: the owned hardware's GPUs' metered energy priced by the energy settings when the month's opex has no energy row).
-- column month DATE: First day of the month (UTC).
-- column cluster_id VARCHAR: Cluster the cost belongs to; NULL = an operating cost shared by all clusters.
-- column category VARCHAR: cluster_on_demand, cluster_reserved, cluster_other, focus_<charge category>, focus_correction, hardware_amortisation, or an opex category (platform_engineering, inference_operations, networking, storage, observability, security, on_call, energy, other).
-- column amount_usd DECIMAL(38,12): Cost in USD, exact (DECIMAL, 12 decimal places).
-- column cost_class VARCHAR: 'committed' (hardware amortisation, reserved charges, FOCUS PricingCategory 'committed': paid whether or not the cluster serves anything), 'operating' (the opex categories: stops when the service is shut down, though not at once) or 'avoidable' (on-demand and other charges: capacity that can be stopped within the month). All three are fixed: they do not grow with tasks.
WITH items AS (
    SELECT month, cluster_id, category, cost_class, amount_usd
    FROM intermediate.int_cluster_charges_split
    UNION ALL
    SELECT month, cluster_id, 'hardware_amortisation', 'committed', amount_usd
    FROM intermediate.int_hardware_amortised
    UNION ALL
    SELECT o.month, o.cluster_id, o.category, 'operating', o.amount_usd
    FROM staging.stg_ledger__opex AS o
    JOIN intermediate.int_months_spined USING (month)
    UNION ALL
    SELECT e.month, e.cluster_id, 'energy', 'operating', e.energy_usd
    FROM intermediate.int_cluster_energy_monthly AS e
    JOIN intermediate.int_months_spined USING (month)
    WHERE e.energy_line = 'added'
)
SELECT
    month,
    cluster_id,
    category,
    CAST(sum(amount_usd) AS DECIMAL(38, 12)) AS amount_usd,
    cost_class
FROM items
GROUP BY month, cluster_id, category, cost_class
