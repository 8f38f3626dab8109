-- grain: one row per month x API provider
-- materialized: table
-- unique_key: month, provider
-- description: Invoice vs metered, per provider and month. The invoiced usage (cache-hit, cache-miss, output and other lines; credits and tax shown apart) is compared with the metered cost of the provider's requests. A difference beyond the tolerance is 'mismatch', never hidden.
-- settings: reconciliation_tolerance_pct, reconciliation_tolerance_usd
-- column month DATE: First day of the month (UTC).
-- column provider VARCHAR: API provider.
-- column invoiced_usd DECIMAL(38,12): Invoiced usage in USD (lines other than credit and tax); NULL when no invoice is loaded.
-- column metered_usd DECIMAL(38,12): Requests x the price in force at each request, in USD (priced requests only).
-- column difference_usd DECIMAL(38,12): invoiced_usd - metered_usd; NULL when either side is missing.
-- column status VARCHAR: 'ok' (within tolerance), 'mismatch', 'missing_invoice' (requests but no invoice), 'missing_requests' (invoice but no requests).
-- column tolerance_usd DECIMAL(38,12): The allowed difference: the larger of the absolute and the percent tolerance.
-- column credits_usd DECIMAL(38,12): Credit lines on the invoice (negative).
-- column tax_usd DECIMAL(38,12): Tax lines on the invoice.
-- column invoiced_total_usd DECIMAL(38,12): All invoice lines: usage + credits + tax (what the route's cost uses).
-- column requests BIGINT: The provider's API requests in the month.
-- column unpriced_requests BIGINT: Requests with no price (missing from metered_usd).
-- column invoices INTEGER: How many invoices of the provider count in the month (an invoice, its credit notes and adjustments are separate invoices that add up).
-- column invoice_ids VARCHAR: Their ids, comma-separated.
-- column allocated_from_multi_month_usd DECIMAL(38,12): The part of the invoiced total that comes from lines whose period spans several months (allocated by metered cost, else by time).
-- column line_price_mismatches BIGINT: Invoice lines (stating a quantity and a unit price) whose amount differs from quantity x unit price / 1e6 by more than the tolerance (the larger of tolerance_usd and tolerance_pct of the priced amount): line_price_mismatch, a fee or surcharge the price list lacks.
-- column line_price_mismatch_usd DECIMAL(38,12): What those lines add (this month's share) above their quantity x unit price.
-- column line_price_mismatch_share DOUBLE: line_price_mismatch_usd / those lines at their quantity x unit price: the surcharge as a share (0.03 = 3 %); NULL without such lines.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
judged AS (
    SELECT
        p.*,
        greatest(
            s.reconciliation_tolerance_usd,
            money_mul(abs(p.metered_usd), s.reconciliation_tolerance_pct * CAST(0.01 AS DECIMAL(3, 2)))
        ) AS tolerance_usd
    FROM intermediate.int_api_provider_monthly AS p
    CROSS JOIN settings AS s
),
-- lines whose amount is not their quantity x unit price (beyond the tolerance): a fee or surcharge the price list lacks
line_checks AS (
    SELECT
        l.month,
        l.provider,
        count(*) AS line_price_mismatches,
        sum(money_share(l.amount_usd, l.line_amount_usd - l.line_priced_usd, l.line_amount_usd)) AS line_price_mismatch_usd,
        sum(l.amount_usd) AS mismatched_lines_usd
    FROM intermediate.int_invoice_lines_current AS l
    CROSS JOIN settings AS s
    WHERE l.line_priced_usd IS NOT NULL AND l.line_amount_usd <> 0
        AND abs(l.line_amount_usd - l.line_priced_usd) > greatest(
            s.reconciliation_tolerance_usd,
            money_mul(abs(l.line_priced_usd), s.reconciliation_tolerance_pct * CAST(0.01 AS DECIMAL(3, 2)))
        )
    GROUP BY l.month, l.provider
),
checked AS (
    SELECT j.*, c.* EXCLUDE (month, provider)
    FROM judged AS j
    LEFT JOIN line_checks AS c USING (month, provider)
)
SELECT
    month,
    provider,
    invoiced_usage_usd AS invoiced_usd,
    metered_usd,
    invoiced_usage_usd - metered_usd AS difference_usd,
    CASE
        WHEN NOT has_invoice THEN 'missing_invoice'
        WHEN requests = 0 THEN 'missing_requests'
        WHEN abs(invoiced_usage_usd - metered_usd) <= tolerance_usd THEN 'ok'
        ELSE 'mismatch'
    END AS status,
    tolerance_usd,
    credits_usd,
    tax_usd,
    invoiced_total_usd,
    requests,
    unpriced_requests,
    invoices,
    invoice_ids,
    allocated_from_multi_month_usd,
    coalesce(line_price_mismatches, 0) AS line_price_mismatches,
    CAST(coalesce(line_price_mismatch_usd, 0) AS DECIMAL(38, 12)) AS line_price_mismatch_usd,
    CAST(money_div(line_price_mismatch_usd, mismatched_lines_usd - line_price_mismatch_usd) AS DOUBLE)
        AS line_price_mismatch_share
FROM checked
