-- The invoices that count in a month, one line each (credit notes and adjustments are their own lines,
-- never replacements). $month: the month (first day).
SELECT
    provider,
    invoice_id,
    coalesce(sum(amount_usd) FILTER (WHERE line_type NOT IN ('credit', 'tax')), 0) AS usage_usd,
    coalesce(sum(amount_usd) FILTER (WHERE line_type = 'credit'), 0) AS credits_usd,
    coalesce(sum(amount_usd) FILTER (WHERE line_type = 'tax'), 0) AS tax_usd,
    sum(amount_usd) AS total_usd,
    CASE WHEN max(months_in_period) > 1
        THEN ' (this month''s share of a ' || max(months_in_period) || '-month period, by ' || min(allocation_basis) || ')'
        ELSE '' END AS note
FROM intermediate.int_invoice_lines_current
WHERE month = CAST($month AS DATE)
GROUP BY provider, invoice_id
ORDER BY provider, invoice_id
