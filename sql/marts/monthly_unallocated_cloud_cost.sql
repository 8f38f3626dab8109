-- grain: one row per month x provider x service x charge category (FOCUS rows allocated to no cluster)
-- materialized: table
-- unique_key: month, provider_name, service_name, charge_category
-- description: FOCUS billing rows that no tag key or ResourceId pattern allocates to a cluster: kept and shown here, never dropped, by the month their charge period starts. Not part of the self-hosted cost.
-- column month DATE: First day of the month the charge period starts in (UTC).
-- column provider_name VARCHAR: FOCUS ProviderName ('(none)' when empty).
-- column service_name VARCHAR: FOCUS ServiceName ('(none)' when empty).
-- column charge_category VARCHAR: FOCUS ChargeCategory, lower-cased ('correction' rows counted apart in corrections_usd).
-- column rows BIGINT: FOCUS rows.
-- column billed_cost_usd DECIMAL(38,12): Sum of BilledCost (cash cost).
-- column effective_cost_usd DECIMAL(38,12): Sum of EffectiveCost (amortised cost).
-- column corrections_usd DECIMAL(38,12): BilledCost of the rows that are corrections of earlier periods.
SELECT
    CAST(date_trunc('month', charge_period_start) AS DATE) AS month,
    coalesce(provider_name, '(none)') AS provider_name,
    coalesce(service_name, '(none)') AS service_name,
    charge_category,
    count(*) AS rows,
    CAST(sum(billed_cost_usd) AS DECIMAL(38, 12)) AS billed_cost_usd,
    CAST(coalesce(sum(effective_cost_usd), 0) AS DECIMAL(38, 12)) AS effective_cost_usd,
    CAST(coalesce(sum(billed_cost_usd) FILTER (WHERE is_correction), 0) AS DECIMAL(38, 12)) AS corrections_usd
FROM intermediate.int_focus_charges_current
WHERE cluster_id IS NULL
GROUP BY ALL
