-- grain: one row per month x provider x token_type (provider-months with a usage export)
-- materialized: table
-- unique_key: month, provider, token_type
-- description: The tokens (and requests) a provider's usage export reports against the ones in the request logs, per month, provider and token type: a gateway that drops logs shows up here before it shows up on an invoice. Logged output includes reasoning tokens (providers bill and count them as output). Only provider-months with a usage export have rows; a token type neither reported nor logged is left out.
-- settings: reconciliation_tolerance_pct
-- column month DATE: First day of the month (UTC).
-- column provider VARCHAR: API provider.
-- column token_type VARCHAR: input_cache_hit, input_cache_miss, input_cache_write_5m, input_cache_write_1h, output (incl. reasoning) or requests.
-- column reported BIGINT: What the provider's usage export reports (NULL: the export does not break this type out).
-- column logged BIGINT: What the request logs hold for the provider's api requests in the month.
-- column difference BIGINT: logged - reported (negative: fewer in the logs than the provider counted).
-- column difference_pct DECIMAL(18,4): difference / reported x 100, to 4 decimals; NULL when reported is 0 or NULL.
-- column status VARCHAR: 'ok' (within [reconciliation] tolerance_pct of reported), 'logs_missing' (the logs hold fewer: a gateway dropping logs, or a log not loaded), 'logs_extra' (the logs hold more) or 'not_in_export'.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
reported AS (
    SELECT
        month,
        provider,
        token_type,
        sum(quantity) AS reported
    FROM staging.stg_ledger__usage
    GROUP BY month, provider, token_type
),
exported AS (
    SELECT DISTINCT
        month,
        provider
    FROM reported
),
logged_wide AS (
    SELECT
        month,
        provider,
        sum(cache_hit_input_tokens) AS input_cache_hit,
        sum(cache_miss_input_tokens) AS input_cache_miss,
        sum(cache_write_5m_input_tokens) AS input_cache_write_5m,
        sum(cache_write_1h_input_tokens) AS input_cache_write_1h,
        sum(output_tokens + reasoning_tokens) AS output,
        sum(requests) AS requests
    FROM intermediate.int_requests_monthly
    WHERE route = 'api'
    GROUP BY month, provider
),
logged AS (
    SELECT
        e.month,
        e.provider,
        t.token_type,
        CAST(coalesce(CASE t.token_type
            WHEN 'input_cache_hit' THEN l.input_cache_hit
            WHEN 'input_cache_miss' THEN l.input_cache_miss
            WHEN 'input_cache_write_5m' THEN l.input_cache_write_5m
            WHEN 'input_cache_write_1h' THEN l.input_cache_write_1h
            WHEN 'output' THEN l.output
            WHEN 'requests' THEN l.requests
        END, 0) AS HUGEINT) AS logged
    FROM exported AS e
    CROSS JOIN (
        VALUES ('input_cache_hit'), ('input_cache_miss'), ('input_cache_write_5m'), ('input_cache_write_1h'),
        ('output'), ('requests')
    ) AS t (token_type)
    LEFT JOIN logged_wide AS l ON e.month = l.month AND e.provider = l.provider
),
compared AS (
    SELECT
        l.month,
        l.provider,
        l.token_type,
        CAST(r.reported AS HUGEINT) AS reported,
        l.logged,
        l.logged - r.reported AS difference
    FROM logged AS l
    LEFT JOIN reported AS r ON l.month = r.month AND l.provider = r.provider AND l.token_type = r.token_type
    WHERE r.reported IS NOT NULL OR l.logged > 0
)

SELECT
    c.month,
    c.provider,
    c.token_type,
    CAST(c.reported AS BIGINT) AS reported,
    CAST(c.logged AS BIGINT) AS logged,
    CAST(c.difference AS BIGINT) AS difference,
    CASE WHEN c.reported > 0 THEN CAST(round(c.difference * 100.0 / c.reported, 4) AS DECIMAL(18, 4)) END
        AS difference_pct,
    CASE
        WHEN c.reported IS NULL THEN 'not_in_export'
        WHEN abs(c.difference) * 100 <= c.reported * s.reconciliation_tolerance_pct THEN 'ok'
        WHEN c.difference < 0 THEN 'logs_missing'
        ELSE 'logs_extra'
    END AS status
FROM compared AS c
CROSS JOIN settings AS s
