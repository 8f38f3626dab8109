-- grain: one row per FOCUS billing row per loaded export
-- materialized: view
-- unique_key: source_file_hash, source_line
-- description: FOCUS cloud billing rows as loaded (BilledCost = cash cost, EffectiveCost = amortised cost), with the length of their charge period.
SELECT
    source_file_hash,
    source_line,
    coalesce(billing_account_id, '') AS billing_account_id,
    provider_name,
    coalesce(billing_period_start, CAST(date_trunc('month', charge_period_start) AS TIMESTAMP)) AS billing_period_start,
    charge_period_start,
    charge_period_end,
    date_diff('second', charge_period_start, charge_period_end) AS charge_seconds,
    charge_category,
    charge_class,
    charge_frequency,
    pricing_category,
    resource_id,
    service_name,
    service_category,
    billed_cost AS billed_cost_usd,
    effective_cost AS effective_cost_usd,
    tags
FROM raw.focus_charges
