-- grain: one row per invoice line
-- materialized: view
-- unique_key: provider, invoice_id, line_id
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
    amount AS amount_usd
FROM raw.invoices
