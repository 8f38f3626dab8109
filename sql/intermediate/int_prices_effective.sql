-- grain: one row per provider x model x service_tier x min_input_tokens x valid_from (a price band in force over a span of time)
-- materialized: table
-- unique_key: provider, model, service_tier, min_input_tokens, valid_from
-- description: The prices in force, in USD, as bands a request matches by equality and ranges: for each (provider, model, service_tier), time is cut at every instant a price starts or stops; within each span, each min_input_tokens level in force covers input token counts from its min_input_tokens up to the next level's (the long-context tiers). A price runs from effective_from to its effective_to, else the next price of the same level, else forever. A price whose range overlaps an earlier-loaded one of the same level is left out (ingest quarantines such rows; this keeps a ledger loaded before that check buildable), so no request ever matches two prices.
-- column provider VARCHAR
-- column model VARCHAR
-- column service_tier VARCHAR
-- column min_input_tokens BIGINT
-- column max_input_tokens BIGINT: The band covers requests with min_input_tokens <= input tokens < max_input_tokens.
-- column valid_from TIMESTAMP: First instant of the span (inclusive).
-- column valid_until TIMESTAMP: End of the span (exclusive).
-- column effective_from TIMESTAMP: When the price row itself took effect (its key in the price catalogue).
-- column currency VARCHAR: The currency the price was published in (its prices here are converted to USD).
-- column cache_hit_input_per_million DECIMAL(38,18)
-- column cache_miss_input_per_million DECIMAL(38,18)
-- column cache_write_5m_per_million DECIMAL(38,18)
-- column cache_write_1h_per_million DECIMAL(38,18)
-- column output_per_million DECIMAL(38,18)
-- column web_search_per_call DECIMAL(38,18)
-- column price_band BIGINT: The band's number (its rank in the order of the unique key): what int_requests_priced keeps of a request's price, and int_requests_daily prices its sums by.
WITH overlapping AS (
    SELECT DISTINCT
        a.provider,
        a.model,
        a.service_tier,
        a.min_input_tokens,
        CASE WHEN a.loaded_seq >= b.loaded_seq THEN a.effective_from ELSE b.effective_from END AS effective_from
    FROM staging.stg_ledger__prices AS a
    INNER JOIN staging.stg_ledger__prices AS b
        ON
            a.provider = b.provider AND a.model = b.model AND a.service_tier = b.service_tier
            AND a.min_input_tokens = b.min_input_tokens AND a.effective_from < b.effective_from
            AND a.effective_to > b.effective_from
),
levels AS (
    SELECT
        p.* EXCLUDE (loaded_seq, effective_to),  -- noqa: RF02
        coalesce(
            p.effective_to,
            lead(p.effective_from) OVER (
                PARTITION BY p.provider, p.model, p.service_tier, p.min_input_tokens ORDER BY p.effective_from
            ),
            TIMESTAMP '9999-12-31 00:00:00'
        ) AS effective_until
    FROM staging.stg_ledger__prices AS p
    ANTI JOIN overlapping USING (provider, model, service_tier, min_input_tokens, effective_from)
),
instants AS (
    -- where a span starts or ends: a price starts or stops, or (a price in another currency) its rate changes
    SELECT DISTINCT provider, model, service_tier, unnest([effective_from, effective_until]) AS t
    FROM levels
    UNION
    SELECT DISTINCT l.provider, l.model, l.service_tier, CAST(x.date AS TIMESTAMP) AS t
    FROM levels AS l
    INNER JOIN staging.stg_ledger__fx AS x
        ON
            l.currency = x.currency AND CAST(x.date AS TIMESTAMP) > l.effective_from
            AND CAST(x.date AS TIMESTAMP) < l.effective_until
),
spans AS (
    SELECT
        provider,
        model,
        service_tier,
        t AS valid_from,
        lead(t) OVER (PARTITION BY provider, model, service_tier ORDER BY t) AS valid_until
    FROM instants
),
banded AS (
    SELECT
        l.*,
        s.valid_from,
        s.valid_until,
        coalesce(
            lead(l.min_input_tokens) OVER (
                PARTITION BY l.provider, l.model, l.service_tier, s.valid_from ORDER BY l.min_input_tokens
            ),
            9223372036854775807
        ) AS max_input_tokens
    FROM spans AS s
    INNER JOIN levels AS l
        ON
            s.provider = l.provider AND s.model = l.model AND s.service_tier = l.service_tier
            AND l.effective_from <= s.valid_from AND s.valid_until <= l.effective_until
    WHERE s.valid_until IS NOT NULL
),
rates AS (
    SELECT
        currency,
        date,
        usd_per_unit AS rate,
        next_date
    FROM staging.stg_ledger__fx
    UNION ALL
    SELECT
        'USD' AS currency,
        DATE '0001-01-01' AS date,
        CAST(1 AS DECIMAL(38, 12)) AS rate,
        CAST(NULL AS DATE) AS next_date
)

-- prices in USD per million tokens (per call for web search): a price in another currency at the fx rate in
-- force when its span starts (the latest rate on or before it); a span before the currency's first rate has no
-- USD price, so its requests find no band and are unpriced (named as such), never converted at 1
SELECT
    b.provider,
    b.model,
    b.service_tier,
    b.min_input_tokens,
    b.max_input_tokens,
    b.valid_from,
    b.valid_until,
    b.effective_from,
    b.currency,
    CAST(b.cache_hit_input_per_million * r.rate AS DECIMAL(38, 18)) AS cache_hit_input_per_million,
    CAST(b.cache_miss_input_per_million * r.rate AS DECIMAL(38, 18)) AS cache_miss_input_per_million,
    CAST(b.cache_write_5m_per_million * r.rate AS DECIMAL(38, 18)) AS cache_write_5m_per_million,
    CAST(b.cache_write_1h_per_million * r.rate AS DECIMAL(38, 18)) AS cache_write_1h_per_million,
    CAST(b.output_per_million * r.rate AS DECIMAL(38, 18)) AS output_per_million,
    CAST(b.web_search_per_call * r.rate AS DECIMAL(38, 18)) AS web_search_per_call,
    row_number() OVER (ORDER BY b.provider, b.model, b.service_tier, b.min_input_tokens, b.valid_from) AS price_band
FROM banded AS b
INNER JOIN rates AS r
    ON
        b.currency = r.currency AND CAST(b.valid_from AS DATE) >= r.date
        AND (r.next_date IS NULL OR CAST(b.valid_from AS DATE) < r.next_date)
