-- grain: one row per month x provider (with API requests or invoice lines that month)
-- materialized: table
-- unique_key: month, provider
-- description: The invoice uplift U of each API provider's month: what its invoices charge beyond list price for the same tokens (a price, never unlogged volume). Its basis, in order: 'no_invoice' (U = 1), 'untyped' (the month's invoices have no usage line, only fees or a total entered by hand as a line of type 'other', while requests were logged: the invoice cannot tell fees from tokens, U = 1, never 0), 'invoice_quantities' (every usage line states its quantity: the invoiced usage over those quantities at list), 'usage_export' (the provider's usage export of the month: the invoiced usage over the export's quantities at list), 'logged' (neither: the invoiced usage over the metered cost of the logged requests, which cannot tell price from unlogged volume). A quantity is valued at the list price the month's logged requests of that provider paid for its token type (their list cost / their tokens, so a price change within the month weighs as the requests did), or at the list price in force at the line's start when the logs hold none of that type. Lines of type 'other' (fees) are a fixed line of the month, neither price nor volume; credit and tax lines are not usage.
-- settings: reference_api_model
-- column month DATE: First day of the month (UTC).
-- column provider VARCHAR: API provider.
-- column invoiced_usage_usd DECIMAL(38,12): The month's invoice lines other than credit, tax and 'other' (fees): what the provider billed for tokens and tool calls.
-- column list_value_usd DECIMAL(38,12): The same usage at list prices: the invoice lines' own quantities ('invoice_quantities') or the usage export's ('usage_export'); NULL on the other bases.
-- column metered_usd DECIMAL(38,12): The logged requests of the provider at its list prices.
-- column uplift_basis VARCHAR: 'invoice_quantities', 'usage_export', 'logged', 'untyped' or 'no_invoice' (see the description).
-- column api_invoice_uplift DECIMAL(38,12): U = invoiced_usage_usd / list_value_usd on the first two bases, invoiced_usage_usd / metered_usd on 'logged', 1 on 'untyped', without an invoice or without a metered cost.
-- column naive_uplift DECIMAL(38,12): invoiced_usage_usd / metered_usd whatever the basis: the ratio that takes unlogged volume for price (the robustness' high or low end when the basis is 'logged'); NULL without both, and on 'untyped' (no usage billed to compare).
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
-- the logged requests' tokens and list cost by type (each at the price band it matched)
logged AS (
    SELECT
        month,
        provider,
        sum(cache_hit_input_tokens) AS hit_tokens,
        sum(cache_hit_input_usd) AS hit_usd,
        sum(cache_miss_input_tokens) AS miss_tokens,
        sum(cache_miss_input_usd) AS miss_usd,
        sum(cache_write_5m_input_tokens) AS write_5m_tokens,
        sum(cache_write_5m_input_usd) AS write_5m_usd,
        sum(cache_write_1h_input_tokens) AS write_1h_tokens,
        sum(cache_write_1h_input_usd) AS write_1h_usd,
        sum(output_tokens + reasoning_tokens) AS output_tokens,
        sum(output_usd) AS output_usd,
        sum(web_search_calls) AS search_calls,
        sum(web_search_usd) AS search_usd,
        sum(metered_usd) AS metered_usd
    FROM intermediate.int_requests_monthly
    WHERE route = 'api'
    GROUP BY month, provider
),
-- what a bill says it used: the invoice lines' quantities (the month's share of a line spanning several months) and
-- the usage export's, one row per (source, type, model, start)
invoice_usage AS (
    SELECT
        'invoice' AS source,
        month,
        provider,
        line_type AS token_type,
        model,
        period_start AS priced_at,
        CASE
            WHEN quantity IS NULL THEN NULL
            WHEN months_in_period = 1 THEN CAST(quantity AS DECIMAL(38, 6))
            WHEN line_amount_usd <> 0 THEN money_share(CAST(quantity AS DECIMAL(38, 12)), amount_usd, line_amount_usd)
            ELSE money_div(quantity, months_in_period)
        END AS quantity,
        amount_usd
    FROM intermediate.int_invoice_lines_current
    WHERE line_type NOT IN ('credit', 'tax', 'other')
),
export_usage AS (
    SELECT
        'export' AS source,
        month,
        provider,
        token_type,
        model,
        bucket_start AS priced_at,
        CAST(quantity AS DECIMAL(38, 6)) AS quantity,
        CAST(NULL AS DECIMAL(38, 12)) AS amount_usd
    FROM staging.stg_ledger__usage
    WHERE token_type <> 'requests'
),
billed AS (SELECT * FROM invoice_usage UNION ALL SELECT * FROM export_usage),
-- the list price in force at each quantity's start, per million of its type (per call for a tool)
listed AS (
    SELECT
        b.*,
        p.web_search_per_call,
        CASE b.token_type
            WHEN 'input_cache_hit' THEN p.cache_hit_input_per_million
            WHEN 'input_cache_miss' THEN p.cache_miss_input_per_million
            WHEN 'input_cache_write' THEN p.cache_write_5m_per_million
            WHEN 'input_cache_write_5m' THEN p.cache_write_5m_per_million
            WHEN 'input_cache_write_1h' THEN p.cache_write_1h_per_million
            WHEN 'output' THEN p.output_per_million
        END AS list_per_million
    FROM billed AS b
    CROSS JOIN settings AS s
    LEFT JOIN intermediate.int_prices_effective AS p
        ON p.provider = b.provider AND p.model = coalesce(b.model, s.reference_api_model)
        AND p.service_tier = 'standard' AND p.min_input_tokens = 0
        AND p.valid_from <= b.priced_at AND (p.valid_until IS NULL OR p.valid_until > b.priced_at)
),
-- the logs' own list cost and count of each quantity's type, where the month's logged requests hold that type
logged_paid AS MATERIALIZED (
    SELECT
        b.*,
        CASE b.token_type
            WHEN 'input_cache_hit' THEN l.hit_usd
            WHEN 'input_cache_miss' THEN l.miss_usd
            WHEN 'input_cache_write' THEN l.write_5m_usd + l.write_1h_usd
            WHEN 'input_cache_write_5m' THEN l.write_5m_usd
            WHEN 'input_cache_write_1h' THEN l.write_1h_usd
            WHEN 'output' THEN l.output_usd
            WHEN 'tool' THEN l.search_usd
        END AS logged_usd,
        CASE b.token_type
            WHEN 'input_cache_hit' THEN l.hit_tokens
            WHEN 'input_cache_miss' THEN l.miss_tokens
            WHEN 'input_cache_write' THEN l.write_5m_tokens + l.write_1h_tokens
            WHEN 'input_cache_write_5m' THEN l.write_5m_tokens
            WHEN 'input_cache_write_1h' THEN l.write_1h_tokens
            WHEN 'output' THEN l.output_tokens
            WHEN 'tool' THEN l.search_calls
        END AS logged_units,
        money_mul(b.quantity, b.list_per_million) AS at_list_per_million
    FROM listed AS b
    LEFT JOIN logged AS l ON l.month = b.month AND l.provider = b.provider
),
-- a quantity at list: the logs' own price for its type, else the list price in force at its start (one share
-- written once, its arguments chosen by type: each copy of the exact arithmetic lengthens the plan)
valued AS (
    SELECT
        source,
        month,
        provider,
        amount_usd,
        quantity,
        CASE
            WHEN quantity IS NULL THEN NULL
            WHEN logged_units > 0 THEN money_count_share(logged_usd, quantity, logged_units)
            WHEN token_type = 'tool' THEN money_mul(quantity, web_search_per_call)
            ELSE money_div(at_list_per_million, 1000000)
        END AS list_usd
    FROM logged_paid
),
-- each source's list value, when every one of its quantities could be valued
sources AS (
    SELECT
        month,
        provider,
        CASE WHEN bool_and(list_usd IS NOT NULL) FILTER (WHERE source = 'invoice')
            THEN sum(list_usd) FILTER (WHERE source = 'invoice') END AS invoice_list_usd,
        CASE WHEN bool_and(list_usd IS NOT NULL) FILTER (WHERE source = 'export')
            THEN sum(list_usd) FILTER (WHERE source = 'export') END AS export_list_usd,
        sum(amount_usd) FILTER (WHERE source = 'invoice') AS invoiced_usage_usd,
        count(*) FILTER (WHERE source = 'invoice') AS usage_lines
    FROM valued
    GROUP BY month, provider
),
months AS (
    SELECT
        p.month,
        p.provider,
        p.has_invoice,
        coalesce(s.invoiced_usage_usd, 0) AS invoiced_usage_usd,
        coalesce(l.metered_usd, 0) AS metered_usd,
        s.invoice_list_usd,
        s.export_list_usd,
        coalesce(s.usage_lines, 0) AS usage_lines
    FROM intermediate.int_api_provider_monthly AS p
    LEFT JOIN sources AS s USING (month, provider)
    LEFT JOIN logged AS l USING (month, provider)
),
based AS (
    SELECT
        *,
        CASE
            WHEN NOT has_invoice THEN 'no_invoice'
            WHEN usage_lines = 0 AND metered_usd > 0 THEN 'untyped'
            WHEN invoice_list_usd > 0 THEN 'invoice_quantities'
            WHEN export_list_usd > 0 THEN 'usage_export'
            ELSE 'logged'
        END AS uplift_basis
    FROM months
)
SELECT
    month,
    provider,
    CAST(invoiced_usage_usd AS DECIMAL(38, 12)) AS invoiced_usage_usd,
    CAST(CASE uplift_basis WHEN 'invoice_quantities' THEN invoice_list_usd WHEN 'usage_export' THEN export_list_usd END
        AS DECIMAL(38, 12)) AS list_value_usd,
    CAST(metered_usd AS DECIMAL(38, 12)) AS metered_usd,
    uplift_basis,
    CAST(coalesce(money_div(invoiced_usage_usd, CASE uplift_basis
        WHEN 'invoice_quantities' THEN invoice_list_usd
        WHEN 'usage_export' THEN export_list_usd
        WHEN 'logged' THEN CASE WHEN metered_usd > 0 THEN metered_usd END
    END), 1) AS DECIMAL(38, 12)) AS api_invoice_uplift,
    CASE WHEN has_invoice AND metered_usd > 0 AND uplift_basis <> 'untyped'
        THEN money_div(invoiced_usage_usd, metered_usd) END AS naive_uplift
FROM based
