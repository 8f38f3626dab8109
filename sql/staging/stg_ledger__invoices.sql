-- grain: one row per invoice line per loaded export (a newer export of the period repeats its lines)
-- materialized: view
-- unique_key: provider, invoice_id, line_id, source_file_hash
-- description: Invoice lines as loaded; the month is the month the billed period starts in. Amounts in another currency are converted to USD at the fx rate of the period start (the latest on or before it). usd_per_unit: that rate (1 for USD).
-- column provider VARCHAR
-- column invoice_id VARCHAR
-- column line_id VARCHAR
-- column period_start TIMESTAMP
-- column period_end TIMESTAMP
-- column month DATE: The month the line's billed period starts in (first day).
-- column line_type VARCHAR
-- column model VARCHAR
-- column quantity DECIMAL(38,6)
-- column unit_price_per_million DECIMAL(24,12)
-- column amount_usd DECIMAL(38,12): The line's amount in USD (converted at usd_per_unit when the invoice was in another currency).
-- column currency VARCHAR
-- column usd_per_unit DECIMAL(38,12)
-- column source_file_hash VARCHAR
SELECT
    t.provider,
    t.invoice_id,
    t.line_id,
    t.period_start,
    t.period_end,
    CAST(date_trunc('month', t.period_start) AS DATE) AS month,
    t.line_type,
    t.model,
    t.quantity,
    t.unit_price_per_million,
    CAST(t.amount * CASE WHEN t.currency = 'USD' THEN 1 ELSE fx.usd_per_unit END AS DECIMAL(38, 12)) AS amount_usd,
    t.currency,
    CASE WHEN t.currency = 'USD' THEN 1 ELSE fx.usd_per_unit END AS usd_per_unit,
    t.source_file_hash
FROM raw.invoices AS t
LEFT JOIN staging.stg_ledger__fx AS fx
    ON
        t.currency = fx.currency AND CAST(t.period_start AS DATE) >= fx.date
        AND (fx.next_date IS NULL OR CAST(t.period_start AS DATE) < fx.next_date)
