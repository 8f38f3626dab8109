-- grain: one row per invoice line per loaded export (a newer export of the period repeats its lines)
-- materialized: view
-- unique_key: provider, invoice_id, line_id, source_file_hash
-- description: Invoice lines as loaded; the month is the month the billed period starts in.
SELECT
    provider,
    invoice_id,
    line_id,
    period_start,
    period_end,
    CAST(date_trunc('month', period_start) AS DATE) AS month,
    line_type,
    model,
    quantity,
    unit_price_per_million,
    amount AS amount_usd,
    source_file_hash
FROM raw.invoices
