-- costledger export focus: one month of the ledger's own spend on both routes as FOCUS 1.2 rows (the columns the
-- specification marks mandatory, the conditional ones the ledger knows, and x_ columns of its own). Parameters:
-- $month (the month's first day), $tag_key (the settings' focus.cluster_tag_key: a cluster row's Tags names its cluster
-- under it, so the ledger's own FOCUS reader allocates it back to that cluster).
--
-- Each row on FOCUS's own bases (x_CostBasis says which): EffectiveCost is the ledger's cost of it, and the month's
-- rows' EffectiveCost adds up to marts.monthly_route_cost's cost_usd less review on both routes exactly; BilledCost is
-- what was billed in the month:
--   * API usage per day, provider, model, team and token class, each price band a row of its own: the tokens x the
--     catalogue's price per million (ConsumedQuantity in tokens; PricingQuantity in millions of tokens, so that
--     PricingQuantity x ListUnitPrice = ListCost exactly); billed as incurred;
--   * per provider whose invoice is loaded: its tax and credit lines, and the rest of the invoice's difference from the
--     metered cost as an Adjustment (the API route is costed at the invoice's total);
--   * each cluster's costs by category and cost class (marts.monthly_self_hosted_cost): charges and operating costs,
--     billed as incurred, a month's worth each (PricingQuantity 1, PricingUnit Month); the owned hardware's
--     straight-line write-off as usage of its node-hours, 'amortised' (BilledCost 0: the purchase was billed once,
--     in its in-service month, as a Purchase row whose EffectiveCost is 0); the energy the ledger estimates from the
--     GPUs' meters (no opex row), 'estimated' (BilledCost 0);
--   * review is the team's own time, no provider's charge: it is not exported (marts.monthly_route_cost has it).
WITH months AS (
    SELECT
        CAST($month AS DATE) AS month,
        CAST($month AS TIMESTAMP) AS month_start,
        CAST(CAST($month AS DATE) + INTERVAL 1 MONTH AS TIMESTAMP) AS month_end,
        CAST($tag_key AS VARCHAR) AS tag_key
),
providers AS (
    SELECT p.*
    FROM intermediate.int_api_provider_monthly AS p
    JOIN months AS m ON p.month = m.month
),
api_bands AS (
    -- the month's priced API requests per day, provider, model, team and price band
    SELECT
        CAST(r.started_at AS DATE) AS day,
        r.provider,
        r.model,
        r.team,
        r.price_band,
        sum(r.cache_hit_input_tokens) AS cache_hit_input,
        sum(r.cache_miss_input_tokens) AS cache_miss_input,
        sum(r.cache_write_5m_input_tokens) AS cache_write_5m_input,
        sum(r.cache_write_1h_input_tokens) AS cache_write_1h_input,
        sum(r.output_tokens + r.reasoning_tokens) AS output,
        sum(r.web_search_calls) AS web_search
    FROM intermediate.int_requests_priced AS r
    JOIN months AS m ON r.month = m.month
    WHERE r.route = 'api' AND r.is_priced
    GROUP BY CAST(r.started_at AS DATE), r.provider, r.model, r.team, r.price_band
),
api_classes AS (
    SELECT
        b.day,
        b.provider,
        b.model,
        b.team,
        b.price_band,
        p.effective_from,
        c.token_class,
        c.quantity,
        c.unit_price
    FROM api_bands AS b
    JOIN intermediate.int_prices_effective AS p ON b.price_band = p.price_band
    CROSS JOIN LATERAL (
        VALUES
        ('cache_hit_input', b.cache_hit_input, p.cache_hit_input_per_million),
        ('cache_miss_input', b.cache_miss_input, p.cache_miss_input_per_million),
        ('cache_write_5m_input', b.cache_write_5m_input, p.cache_write_5m_per_million),
        ('cache_write_1h_input', b.cache_write_1h_input, p.cache_write_1h_per_million),
        ('output', b.output, p.output_per_million),
        ('web_search', b.web_search, p.web_search_per_call)
    ) AS c (token_class, quantity, unit_price)
    WHERE c.quantity > 0
),
api_costed AS (
    -- each row's exact cost, and the running total of them in the rows' order per provider and team (the groups
    -- int_requests_monthly rounds its metered cost in, once each)
    SELECT
        a.*,
        CASE
            WHEN a.token_class = 'web_search' THEN CAST(a.quantity AS DECIMAL(38, 0)) * a.unit_price
            ELSE per_million(CAST(a.quantity AS DECIMAL(38, 0)) * a.unit_price)
        END AS exact_cost,
        sum(exact_cost) OVER (
            PARTITION BY a.provider, a.team ORDER BY a.day, a.model, a.token_class, a.price_band
            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
        ) AS running
    FROM api_classes AS a
),
api_usage AS (
    SELECT
        'Usage' AS charge_category,
        'Usage-Based' AS charge_frequency,
        'Standard' AS pricing_category,
        CAST(a.day AS TIMESTAMP) AS charge_period_start,
        CAST(a.day AS TIMESTAMP) + INTERVAL 1 DAY AS charge_period_end,
        a.provider AS provider_name,
        a.model AS service_name,
        'AI and Machine Learning' AS service_category,
        'Generative AI' AS service_subcategory,
        format('{} {} tokens, priced from {}', a.model, replace(a.token_class, '_', ' '), CAST(CAST(a.effective_from AS DATE) AS VARCHAR))
            AS charge_description,
        CAST(NULL AS VARCHAR) AS resource_id,
        CAST(a.quantity AS DECIMAL(38, 6)) AS consumed_quantity,
        CASE WHEN a.token_class = 'web_search' THEN 'Requests' ELSE 'Tokens' END AS consumed_unit,
        -- tokens in millions (exact to 1e-6), priced per million; web searches one by one, priced per call
        CASE
            WHEN a.token_class = 'web_search' THEN CAST(a.quantity AS DECIMAL(38, 6))
            ELSE CAST(CAST(a.quantity AS DECIMAL(38, 6)) / 1000000 AS DECIMAL(38, 6))
        END AS pricing_quantity,
        CASE WHEN a.token_class = 'web_search' THEN 'Requests' ELSE '1000000 Tokens' END AS pricing_unit,
        a.unit_price,
        -- to 1e-12 by telescoping: the rounded running total less the rounded total before the row, so a provider's
        -- and team's rows add up to their metered cost rounded once
        CAST(a.running AS DECIMAL(38, 12)) - CAST(a.running - a.exact_cost AS DECIMAL(38, 12)) AS cost,
        a.token_class,
        coalesce(a.team, '(unassigned)') AS team,
        'api' AS route,
        'usage' AS cost_class,
        CASE WHEN p.has_invoice THEN p.invoice_ids END AS invoice_id,
        format('{}/{}/{}', a.provider, a.model, a.token_class) AS sku_id,
        format('{}/{}/{}@{}', a.provider, a.model, a.token_class, CAST(CAST(a.effective_from AS DATE) AS VARCHAR))
            AS sku_price_id
    FROM api_costed AS a
    LEFT JOIN providers AS p ON a.provider = p.provider
),
api_invoice_rest AS (
    -- an invoiced provider's tax, credits and the rest of its invoice's difference from the metered cost
    SELECT
        p.provider,
        p.invoice_ids,
        r.charge_category,
        r.cost,
        r.description
    FROM providers AS p
    CROSS JOIN LATERAL (
        VALUES
        ('Tax', p.tax_usd, 'tax on the invoice'),
        ('Credit', p.credits_usd, 'credits on the invoice'),
        (
            'Adjustment',
            p.invoiced_total_usd - p.tax_usd - p.credits_usd - coalesce(p.metered_usd, 0),
            'the invoice''s usage beyond the metered cost of the logged requests (uplift, fees, unlogged or unpriced requests)'
        )
    ) AS r (charge_category, cost, description)
    WHERE p.has_invoice AND r.cost <> 0
),
api_rest AS (
    SELECT
        r.charge_category,
        'Recurring' AS charge_frequency,
        CAST(NULL AS VARCHAR) AS pricing_category,
        m.month_start AS charge_period_start,
        m.month_end AS charge_period_end,
        r.provider AS provider_name,
        format('{} API', r.provider) AS service_name,
        'AI and Machine Learning' AS service_category,
        'Generative AI' AS service_subcategory,
        format('{}: {}', r.provider, r.description) AS charge_description,
        CAST(NULL AS VARCHAR) AS resource_id,
        CAST(NULL AS DECIMAL(38, 6)) AS consumed_quantity,
        CAST(NULL AS VARCHAR) AS consumed_unit,
        CAST(NULL AS DECIMAL(38, 6)) AS pricing_quantity,
        CAST(NULL AS VARCHAR) AS pricing_unit,
        CAST(NULL AS DECIMAL(38, 18)) AS unit_price,
        r.cost,
        CAST(NULL AS VARCHAR) AS token_class,
        CAST(NULL AS VARCHAR) AS team,
        'api' AS route,
        lower(r.charge_category) AS cost_class,
        r.invoice_ids AS invoice_id,
        CAST(NULL AS VARCHAR) AS sku_id,
        CAST(NULL AS VARCHAR) AS sku_price_id
    FROM api_invoice_rest AS r
    CROSS JOIN months AS m
),
cluster_hours AS (
    -- the hours each category's charges ran in the month (a usage row's consumed quantity)
    SELECT
        s.cluster_id,
        s.category,
        s.cost_class,
        CAST(sum(s.seconds_in_month) AS DECIMAL(38, 6)) / 3600 AS hours
    FROM intermediate.int_cluster_charges_split AS s
    JOIN months AS m ON s.month = m.month
    GROUP BY s.cluster_id, s.category, s.cost_class
),
owned_hours AS (
    -- the owned hardware's node-hours in the month: what its write-off is usage of
    SELECT n.cluster_id, n.owned_node_hours AS hours
    FROM intermediate.int_cluster_nodes_monthly AS n
    JOIN months AS m ON n.month = m.month
),
cluster_costs AS (
    SELECT
        c.*,
        CASE
            WHEN c.category IN ('cluster_on_demand', 'focus_usage', 'hardware_amortisation') THEN 'Usage'
            WHEN c.category = 'focus_tax' THEN 'Tax'
            WHEN c.category = 'focus_credit' THEN 'Credit'
            WHEN c.category IN ('focus_adjustment', 'focus_correction') THEN 'Adjustment'
            ELSE 'Purchase'
        END AS charge_category,
        CASE WHEN c.category = 'hardware_amortisation' THEN o.hours ELSE h.hours END AS hours
    FROM marts.monthly_self_hosted_cost AS c
    JOIN months AS m ON c.month = m.month
    LEFT JOIN cluster_hours AS h
        ON c.cluster_id = h.cluster_id AND c.category = h.category AND c.cost_class = h.cost_class
    LEFT JOIN owned_hours AS o ON c.cluster_id = o.cluster_id
    WHERE c.amount_usd <> 0
),
self_hosted AS (
    SELECT
        c.charge_category,
        CASE WHEN c.charge_category = 'Usage' THEN 'Usage-Based' ELSE 'Recurring' END AS charge_frequency,
        CASE WHEN c.charge_category IN ('Usage', 'Purchase') THEN 'Standard' END AS pricing_category,
        m.month_start AS charge_period_start,
        m.month_end AS charge_period_end,
        'self-hosted' AS provider_name,
        CASE
            WHEN c.category LIKE 'cluster_%' OR c.category LIKE 'focus_%' THEN 'GPU cluster charges'
            WHEN c.category = 'hardware_amortisation' THEN 'Owned hardware'
            ELSE 'Cluster operations'
        END AS service_name,
        CASE
            WHEN c.category = 'networking' THEN 'Networking'
            WHEN c.category = 'storage' THEN 'Storage'
            WHEN c.category = 'security' THEN 'Security'
            WHEN c.category IN ('observability', 'platform_engineering', 'inference_operations', 'on_call') THEN 'Management and Governance'
            WHEN c.category IN ('energy', 'other') THEN 'Other'
            ELSE 'Compute'
        END AS service_category,
        CASE
            WHEN c.category = 'networking' THEN 'Other (Networking)'
            WHEN c.category = 'storage' THEN 'Other (Storage)'
            WHEN c.category = 'security' THEN 'Other (Security)'
            WHEN c.category = 'observability' THEN 'Observability'
            WHEN c.category = 'on_call' THEN 'Support'
            WHEN c.category IN ('platform_engineering', 'inference_operations') THEN 'Other (Management and Governance)'
            WHEN c.category IN ('energy', 'other') THEN 'Other (Other)'
            WHEN c.category IN ('cluster_on_demand', 'cluster_reserved') THEN 'Virtual Machines'
            ELSE 'Other (Compute)'
        END AS service_subcategory,
        format(
            '{}: {} ({} cost)', coalesce(c.cluster_id, 'every cluster'), replace(c.category, '_', ' '), c.cost_class
        ) AS charge_description,
        c.cluster_id AS resource_id,
        CASE WHEN c.charge_category = 'Usage' THEN coalesce(CAST(c.hours AS DECIMAL(38, 6)), 0) END AS consumed_quantity,
        CASE WHEN c.charge_category = 'Usage' THEN 'Hours' END AS consumed_unit,
        CASE WHEN c.charge_category IN ('Usage', 'Purchase') THEN CAST(1 AS DECIMAL(38, 6)) END AS pricing_quantity,
        CASE WHEN c.charge_category IN ('Usage', 'Purchase') THEN 'Month' END AS pricing_unit,
        CASE WHEN c.charge_category IN ('Usage', 'Purchase') THEN CAST(c.amount_usd AS DECIMAL(38, 18)) END AS unit_price,
        c.amount_usd AS cost,
        CAST(NULL AS VARCHAR) AS token_class,
        CAST(NULL AS VARCHAR) AS team,
        'self_hosted' AS route,
        c.cost_class,
        CAST(NULL AS VARCHAR) AS invoice_id,
        format('self-hosted/{}', c.category) AS sku_id,
        format('self-hosted/{}', c.category) AS sku_price_id
    FROM cluster_costs AS c
    CROSS JOIN months AS m
),
purchases AS (
    -- owned hardware put in service this month: bought once, billed in full now, its cost effective over its life
    SELECT
        'Purchase' AS charge_category,
        'One-Time' AS charge_frequency,
        'Standard' AS pricing_category,
        m.month_start AS charge_period_start,
        m.month_end AS charge_period_end,
        'self-hosted' AS provider_name,
        'Owned hardware' AS service_name,
        'Compute' AS service_category,
        'Other (Compute)' AS service_subcategory,
        format('{}: {} bought, in service from {} for {} months', h.cluster_id, h.asset_id,
            CAST(CAST(h.in_service_date AS DATE) AS VARCHAR), CAST(h.life_months AS VARCHAR)) AS charge_description,
        h.cluster_id AS resource_id,
        CAST(NULL AS DECIMAL(38, 6)) AS consumed_quantity,
        CAST(NULL AS VARCHAR) AS consumed_unit,
        CAST(1 AS DECIMAL(38, 6)) AS pricing_quantity,
        'Units' AS pricing_unit,
        CAST(h.purchase_price_usd AS DECIMAL(38, 18)) AS unit_price,
        h.purchase_price_usd AS cost,
        CAST(NULL AS VARCHAR) AS token_class,
        CAST(NULL AS VARCHAR) AS team,
        'self_hosted' AS route,
        'committed' AS cost_class,
        CAST(NULL AS VARCHAR) AS invoice_id,
        'self-hosted/hardware_purchase' AS sku_id,
        format('self-hosted/hardware_purchase/{}', h.asset_id) AS sku_price_id
    FROM staging.stg_ledger__hardware AS h
    JOIN months AS m ON CAST(date_trunc('month', CAST(h.in_service_date AS DATE)) AS DATE) = m.month
    WHERE h.purchase_price_usd <> 0
),
estimated AS (
    -- the clusters whose energy line is the ledger's estimate from the GPUs' meters, not a bill
    SELECT e.cluster_id
    FROM intermediate.int_cluster_energy_monthly AS e
    JOIN months AS m ON e.month = m.month
    WHERE e.energy_line = 'added'
),
charges AS (
    SELECT * FROM api_usage
    UNION ALL
    SELECT * FROM api_rest
    UNION ALL
    SELECT * FROM self_hosted
    UNION ALL
    SELECT * FROM purchases
),
based AS (
    SELECT
        c.*,
        CASE
            WHEN c.sku_id = 'self-hosted/hardware_purchase' THEN 'purchase'
            WHEN c.sku_id = 'self-hosted/hardware_amortisation' THEN 'amortised'
            WHEN c.sku_id = 'self-hosted/energy' AND e.cluster_id IS NOT NULL THEN 'estimated'
            ELSE 'billed'
        END AS basis
    FROM charges AS c
    LEFT JOIN estimated AS e ON c.resource_id = e.cluster_id
)
-- FOCUS's column names are CamelCase: quoted, so that sqlfluff's lower-case rule leaves them as FOCUS has them
-- noqa: disable=RF06
SELECT
    CAST(CASE WHEN c.basis IN ('amortised', 'estimated') THEN 0 ELSE c.cost END AS DECIMAL(38, 12)) AS "BilledCost",
    c.provider_name AS "BillingAccountId",
    c.provider_name AS "BillingAccountName",
    'USD' AS "BillingCurrency",
    m.month_end AS "BillingPeriodEnd",
    m.month_start AS "BillingPeriodStart",
    c.charge_category AS "ChargeCategory",
    CAST(NULL AS VARCHAR) AS "ChargeClass",
    c.charge_description AS "ChargeDescription",
    c.charge_frequency AS "ChargeFrequency",
    c.charge_period_end AS "ChargePeriodEnd",
    c.charge_period_start AS "ChargePeriodStart",
    -- no commitment discount, region or sub account: present (the validator of FOCUS 1.0 asks for them) and null
    CAST(NULL AS VARCHAR) AS "CommitmentDiscountCategory",
    CAST(NULL AS VARCHAR) AS "CommitmentDiscountId",
    CAST(NULL AS VARCHAR) AS "CommitmentDiscountName",
    CAST(NULL AS VARCHAR) AS "CommitmentDiscountStatus",
    CAST(NULL AS VARCHAR) AS "CommitmentDiscountType",
    c.consumed_quantity AS "ConsumedQuantity",
    c.consumed_unit AS "ConsumedUnit",
    CAST(c.cost AS DECIMAL(38, 12)) AS "ContractedCost",
    CAST(c.unit_price AS DECIMAL(38, 12)) AS "ContractedUnitPrice",
    CAST(CASE WHEN c.basis = 'purchase' THEN 0 ELSE c.cost END AS DECIMAL(38, 12)) AS "EffectiveCost",
    c.invoice_id AS "InvoiceId",
    c.provider_name AS "InvoiceIssuerName",
    CAST(c.cost AS DECIMAL(38, 12)) AS "ListCost",
    CAST(c.unit_price AS DECIMAL(38, 12)) AS "ListUnitPrice",
    c.pricing_category AS "PricingCategory",
    c.pricing_quantity AS "PricingQuantity",
    c.pricing_unit AS "PricingUnit",
    c.provider_name AS "ProviderName",
    c.provider_name AS "PublisherName",
    CAST(NULL AS VARCHAR) AS "RegionId",
    CAST(NULL AS VARCHAR) AS "RegionName",
    c.resource_id AS "ResourceId",
    c.resource_id AS "ResourceName",
    CASE WHEN c.resource_id IS NOT NULL THEN 'GPU cluster' END AS "ResourceType",
    c.service_category AS "ServiceCategory",
    c.service_name AS "ServiceName",
    c.service_subcategory AS "ServiceSubcategory",
    -- a SKU per model and token class (API) or per cost category (self-hosted); its price per price in force
    CASE WHEN c.charge_category IN ('Usage', 'Purchase') THEN c.sku_id END AS "SkuId",
    CASE WHEN c.charge_category IN ('Usage', 'Purchase') THEN c.sku_price_id END AS "SkuPriceId",
    CAST(NULL AS VARCHAR) AS "SubAccountId",
    CAST(NULL AS VARCHAR) AS "SubAccountName",
    CASE WHEN c.resource_id IS NOT NULL THEN json_object(m.tag_key, c.resource_id) END AS "Tags",
    c.route AS "x_Route",
    c.team AS "x_Team",
    c.token_class AS "x_TokenClass",
    c.cost_class AS "x_CostClass",
    c.basis AS "x_CostBasis"
FROM based AS c
CROSS JOIN months AS m
ORDER BY
    "ChargePeriodStart" ASC, c.route ASC, "ProviderName" ASC, "ServiceName" ASC, c.team ASC NULLS FIRST,
    c.token_class ASC NULLS FIRST, "ChargeDescription" ASC
