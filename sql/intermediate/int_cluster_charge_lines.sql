-- grain: one row per cluster charge (canonical cluster charges and FOCUS rows allocated to a cluster)
-- materialized: table
-- unique_key: charge_id
-- description: Every charge that pays for a cluster, from both sources, with its cost category: cluster_on_demand / cluster_reserved / cluster_other (canonical charges) and focus_<charge category> or focus_correction (FOCUS EffectiveCost, the amortised cost; BilledCost when a row has none); its cost class: 'committed' (reserved charges, FOCUS PricingCategory 'committed') or 'avoidable' (on-demand and other charges: capacity that could be stopped); and whether it buys compute (buys_compute: every canonical cluster charge, and FOCUS rows of ServiceCategory Compute or AI and Machine Learning, or without a ServiceCategory; storage, networking and other services are cost, never provisioned time); and the node-hours it buys (node_hours: a canonical on-demand or reserved charge's quantity in node_hour, or in gpu_hour / the gpus_per_node setting, else one node over its period; a FOCUS usage row that buys compute: its ConsumedQuantity when ConsumedUnit is hours, one node over its period without a ConsumedUnit, none in another unit (GB of a compute service is data, not time); NULL for charges that buy no compute time).
-- settings: gpus_per_node
-- column charge_id VARCHAR
-- column cluster_id VARCHAR
-- column category VARCHAR: Where the charge comes from and what it is: cluster_on_demand, cluster_reserved or cluster_other (a cluster charge by its kind), focus_<charge category> (a FOCUS row) or focus_correction.
-- column cost_class VARCHAR: committed (reserved charges, FOCUS PricingCategory 'committed': paid whether used or not) or avoidable (capacity that could be stopped).
-- column charge_start TIMESTAMP
-- column charge_end TIMESTAMP
-- column charge_seconds BIGINT: Length of the charge's period in seconds.
-- column amount_usd DECIMAL(38,12): What the charge costs in USD: a cluster charge's amount, a FOCUS row's EffectiveCost (its BilledCost when it has none).
-- column buys_compute BOOLEAN: Whether the charge pays for compute time (every cluster charge; a FOCUS row of ServiceCategory Compute or AI and Machine Learning, or without one), rather than storage, networking or another service.
-- column node_hours DECIMAL(38,12): The node-hours the charge buys, spread evenly over its period (NULL for a charge that buys no compute time).
WITH settings AS (SELECT * FROM staging.stg_ledger__settings)
SELECT
    c.charge_id,
    c.cluster_id,
    'cluster_' || c.kind AS category,
    CASE WHEN c.kind = 'reserved' THEN 'committed' ELSE 'avoidable' END AS cost_class,
    c.charge_start,
    c.charge_end,
    c.charge_seconds,
    c.amount_usd,
    TRUE AS buys_compute,
    CASE
        WHEN c.quantity IS NOT NULL AND c.unit = 'node_hour' THEN CAST(c.quantity AS DECIMAL(38, 12))
        WHEN c.quantity IS NOT NULL AND c.unit = 'gpu_hour' THEN money_div(c.quantity, s.gpus_per_node)
        WHEN c.kind IN ('on_demand', 'reserved') OR c.unit IN ('node_hour', 'gpu_hour')
            THEN money_div(c.charge_seconds, 3600)
    END AS node_hours
FROM staging.stg_ledger__cluster_charges AS c
CROSS JOIN settings AS s
UNION ALL
SELECT
    'focus:' || left(source_file_hash, 16) || ':' || source_line,
    cluster_id,
    CASE WHEN is_correction THEN 'focus_correction' ELSE 'focus_' || charge_category END,
    CASE WHEN pricing_category = 'committed' THEN 'committed' ELSE 'avoidable' END,
    charge_period_start,
    charge_period_end,
    charge_seconds,
    -- FOCUS's amortised cost: an all-upfront purchase spread over the term it pays for (its own row's EffectiveCost
    -- is 0); BilledCost where a file leaves EffectiveCost out
    coalesce(effective_cost_usd, billed_cost_usd),
    service_category IS NULL OR lower(service_category) IN ('compute', 'ai and machine learning'),
    CASE WHEN (service_category IS NULL OR lower(service_category) IN ('compute', 'ai and machine learning'))
            AND charge_category = 'usage' AND NOT is_correction
        THEN CASE
            WHEN lower(consumed_unit) IN ('hour', 'hours', 'hrs', 'hr') THEN CAST(consumed_quantity AS DECIMAL(38, 12))
            WHEN consumed_unit IS NULL THEN money_div(charge_seconds, 3600)
        END
    END
FROM intermediate.int_focus_charges_current
WHERE cluster_id IS NOT NULL
