-- grain: one row per FOCUS billing row per loaded export
-- materialized: view
-- unique_key: source_file_hash, source_line
-- description: FOCUS cloud billing rows as loaded (BilledCost = cash cost, EffectiveCost = amortised cost), with the length of their charge period. Costs in another billing currency are converted to USD at the fx rate of the charge period start.
-- column source_file_hash VARCHAR
-- column source_line BIGINT
-- column billing_account_id VARCHAR
-- column provider_name VARCHAR
-- column billing_period_start TIMESTAMP
-- column charge_period_start TIMESTAMP
-- column charge_period_end TIMESTAMP
-- column charge_seconds BIGINT: Length of the charge period in seconds (ChargePeriodEnd - ChargePeriodStart).
-- column charge_category VARCHAR
-- column charge_class VARCHAR
-- column charge_frequency VARCHAR
-- column pricing_category VARCHAR
-- column resource_id VARCHAR
-- column service_name VARCHAR
-- column service_category VARCHAR
-- column consumed_quantity DECIMAL(38,12)
-- column consumed_unit VARCHAR
-- column billed_cost_usd DECIMAL(38,12): BilledCost (the cash cost) in USD, converted at the fx rate of the charge period start.
-- column effective_cost_usd DECIMAL(38,12): EffectiveCost (the amortised cost, commitments spread over their term) in USD, converted at the fx rate of the charge period start.
-- column tags VARCHAR
SELECT
    t.source_file_hash,
    t.source_line,
    coalesce(t.billing_account_id, '') AS billing_account_id,
    t.provider_name,
    coalesce(t.billing_period_start, CAST(date_trunc('month', t.charge_period_start) AS TIMESTAMP)) AS billing_period_start,
    t.charge_period_start,
    t.charge_period_end,
    date_diff('second', t.charge_period_start, t.charge_period_end) AS charge_seconds,
    t.charge_category,
    t.charge_class,
    t.charge_frequency,
    t.pricing_category,
    t.resource_id,
    t.service_name,
    t.service_category,
    t.consumed_quantity,
    t.consumed_unit,
    CAST(t.billed_cost * CASE WHEN t.currency = 'USD' THEN 1 ELSE fx.usd_per_unit END AS DECIMAL(38, 12)) AS billed_cost_usd,
    CAST(t.effective_cost * CASE WHEN t.currency = 'USD' THEN 1 ELSE fx.usd_per_unit END AS DECIMAL(38, 12)) AS effective_cost_usd,
    t.tags
FROM raw.focus_charges AS t
LEFT JOIN staging.stg_ledger__fx AS fx
    ON
        t.currency = fx.currency AND CAST(t.charge_period_start AS DATE) >= fx.date
        AND (fx.next_date IS NULL OR CAST(t.charge_period_start AS DATE) < fx.next_date)
