-- grain: one row per month x provider (with API requests or invoice lines that month)
-- materialized: table
-- unique_key: month, provider
-- description: Each API provider's month: metered cost of its requests (priced rows only; unpriced ones counted apart) and its current invoice lines (the latest version of each line; several invoices of a month add up; multi-month lines allocated) by type. Usage = cache-hit, cache-miss, output and other lines; credits and tax are kept apart.
-- column month DATE: The month (its first day, UTC): of the requests' start, and the month an invoice line is allocated to.
-- column provider VARCHAR
-- column requests BIGINT
-- column unpriced_requests BIGINT
-- column metered_usd DECIMAL(38,12)
-- column has_invoice BOOLEAN: Whether any current invoice line of the provider falls in the month.
-- column invoice_lines BIGINT: Current invoice lines of the provider in the month (0 when none).
-- column invoices INTEGER: Distinct invoices those lines belong to.
-- column invoice_ids VARCHAR: Those invoices' ids, sorted, comma-separated (NULL when none).
-- column allocated_from_multi_month_usd DECIMAL(38,12): The part of invoiced_total_usd allocated to the month from lines whose billed period spans several months (NULL when no invoice).
-- column invoiced_total_usd DECIMAL(38,12): Every current invoice line of the provider in the month added up: usage, credits and tax (NULL when no invoice).
-- column invoiced_usage_usd DECIMAL(38,12): The usage lines alone (cache-hit, cache-miss, output and other lines; not credits, not tax; NULL when no invoice).
-- column credits_usd DECIMAL(38,12): The credit lines added up (NULL when no invoice).
-- column tax_usd DECIMAL(38,12): The tax lines added up (NULL when no invoice).
WITH metered AS (
    SELECT
        month,
        provider,
        CAST(sum(requests) AS BIGINT) AS requests,
        CAST(sum(unpriced_requests) AS BIGINT) AS unpriced_requests,
        sum(metered_usd) AS metered_usd
    FROM intermediate.int_requests_monthly
    WHERE route = 'api'
    GROUP BY month, provider
),
invoiced AS (
    SELECT
        month,
        provider,
        count(*) AS invoice_lines,
        CAST(count(DISTINCT invoice_id) AS INTEGER) AS invoices,
        string_agg(DISTINCT invoice_id, ', ' ORDER BY invoice_id) AS invoice_ids,
        coalesce(sum(amount_usd) FILTER (WHERE months_in_period > 1), 0) AS allocated_from_multi_month_usd,
        sum(amount_usd) AS invoiced_total_usd,
        coalesce(sum(amount_usd) FILTER (WHERE line_type NOT IN ('credit', 'tax')), 0) AS invoiced_usage_usd,
        coalesce(sum(amount_usd) FILTER (WHERE line_type = 'credit'), 0) AS credits_usd,
        coalesce(sum(amount_usd) FILTER (WHERE line_type = 'tax'), 0) AS tax_usd
    FROM intermediate.int_invoice_lines_current
    GROUP BY month, provider
)
SELECT
    month,
    provider,
    coalesce(m.requests, 0) AS requests,
    coalesce(m.unpriced_requests, 0) AS unpriced_requests,
    coalesce(m.metered_usd, CAST(0 AS DECIMAL(38, 12))) AS metered_usd,
    i.provider IS NOT NULL AS has_invoice,
    coalesce(i.invoice_lines, 0) AS invoice_lines,
    coalesce(i.invoices, 0) AS invoices,
    i.invoice_ids,
    i.allocated_from_multi_month_usd,
    i.invoiced_total_usd,
    i.invoiced_usage_usd,
    i.credits_usd,
    i.tax_usd
FROM metered AS m
FULL OUTER JOIN invoiced AS i USING (month, provider)
