-- grain: one row per cluster charge (canonical cluster charges and FOCUS rows allocated to a cluster)
-- materialized: table
-- unique_key: charge_id
-- description: Every charge that pays for a cluster, from both sources, with its cost category: cluster_on_demand / cluster_reserved / cluster_other (canonical charges) and focus_<charge category> or focus_correction (FOCUS BilledCost); its cost class: 'committed' (reserved charges, FOCUS PricingCategory 'committed') or 'avoidable' (on-demand and other charges: capacity that could be stopped); and whether it buys compute (buys_compute: every canonical cluster charge, and FOCUS rows of ServiceCategory Compute or AI and Machine Learning, or without a ServiceCategory; storage, networking and other services are cost, never provisioned time).
SELECT
    charge_id,
    cluster_id,
    'cluster_' || kind AS category,
    CASE WHEN kind = 'reserved' THEN 'committed' ELSE 'avoidable' END AS cost_class,
    charge_start,
    charge_end,
    charge_seconds,
    amount_usd,
    TRUE AS buys_compute
FROM staging.stg_ledger__cluster_charges
UNION ALL
SELECT
    'focus:' || left(source_file_hash, 16) || ':' || source_line,
    cluster_id,
    CASE WHEN is_correction THEN 'focus_correction' ELSE 'focus_' || charge_category END,
    CASE WHEN pricing_category = 'committed' THEN 'committed' ELSE 'avoidable' END,
    charge_period_start,
    charge_period_end,
    charge_seconds,
    billed_cost_usd,
    service_category IS NULL OR lower(service_category) IN ('compute', 'ai and machine learning')
FROM intermediate.int_focus_charges_current
WHERE cluster_id IS NOT NULL
