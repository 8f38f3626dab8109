-- grain: one row per request (a request id is unique per provider)
-- materialized: table
-- published: view
-- incremental: append
-- input requests_new: staging.stg_ledger__requests
-- months_touched: month, CAST(date_trunc('month', ended_at - INTERVAL 1 MICROSECOND) AS DATE)
-- days_touched: started_at, ended_at - INTERVAL 1 MICROSECOND
-- unique_key: provider, request_id
-- compression: request_id zstd, task_id zstd
-- description: Every request priced once. API requests at their own provider's price in force at started_at for their service tier and long-context band (metered_cost_usd); self-hosted requests at the reference API price (api_equivalent_cost_usd). No price found: cost NULL and is_priced false, never 0. Of the price it keeps only its band (price_band, a row of int_prices_effective), and of the request only the columns the models that read it use: every column written costs time on every build (at 10 M requests, each price column about 0.2 s). Incremental: rows of lake files loaded since the last build are appended (everything is repriced when prices, settings or this SQL change). In the published file it is a view: this same query over all the requests, computed when read (no copy of the table is stored); price_band joins int_prices_effective for the prices used.
-- settings: reference_api_model, reference_api_provider
-- column request_id VARCHAR
-- column task_id VARCHAR
-- column attempt INTEGER
-- column started_at TIMESTAMP
-- column ended_at TIMESTAMP: started_at + latency_ms; NULL when the latency is not logged.
-- column month DATE: First day of its month (UTC), by started_at.
-- column route VARCHAR
-- column provider VARCHAR
-- column model VARCHAR
-- column cluster_id VARCHAR
-- column cache_hit_input_tokens BIGINT
-- column cache_miss_input_tokens BIGINT
-- column cache_write_5m_input_tokens BIGINT
-- column cache_write_1h_input_tokens BIGINT
-- column output_tokens BIGINT
-- column reasoning_tokens BIGINT
-- column web_search_calls BIGINT
-- column latency_ms BIGINT
-- column status VARCHAR
-- column accepted BOOLEAN
-- column team VARCHAR
-- column workload VARCHAR
-- column source_file_hash VARCHAR
-- column is_priced BOOLEAN: A price applies to it: its provider's and model's (the reference API's for a self-hosted request), for its service tier, at started_at, in its long-context band.
-- column price_band BIGINT: The price that applied (a row of int_prices_effective); NULL when none.
-- column metered_cost_usd DECIMAL(38,12): On the API, its cost at that price: (hit x hit price + miss x miss price + cache writes x their prices + (output + reasoning) x output price) / 1,000,000 + web searches x price per search, exact to 1e-12 USD; NULL when unpriced or self-hosted.
-- column api_equivalent_cost_usd DECIMAL(38,12): On the cluster, the same sum at the reference API's price (what it would have cost on the API); NULL when unpriced or on the API.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
prices AS (
    -- each price per million also as a whole number of micro-dollars (per web search call: of picodollars) when it is
    -- exactly that and below $1,000 ($1 a call); else NULL: then costed takes the DECIMAL path
    SELECT
        *,
        list_transform(
            [cache_hit_input_per_million, cache_miss_input_per_million, cache_write_5m_per_million,
                cache_write_1h_per_million, output_per_million],
            LAMBDA x: CASE WHEN x = round(x, 6) AND abs(x) < 1000 THEN CAST(x * 1000000 AS BIGINT) END
        ) AS micro,
        CASE WHEN web_search_per_call = round(web_search_per_call, 12) AND abs(web_search_per_call) < 1
            THEN CAST(web_search_per_call * 1000000000000 AS BIGINT) END AS web_search_pico
    FROM intermediate.int_prices_effective
),
keyed AS (
    -- the price row that applies: own provider and model for api rows, the reference ones for self-hosted rows;
    -- the request's service tier; the long-context band of its input tokens (hit + miss + cache writes)
    SELECT
        r.*,
        CASE WHEN r.route = 'api' THEN r.provider ELSE s.reference_api_provider END AS price_provider,
        CASE WHEN r.route = 'api' THEN r.model ELSE s.reference_api_model END AS price_model,
        r.cache_hit_input_tokens + r.cache_miss_input_tokens + r.cache_write_5m_input_tokens
        + r.cache_write_1h_input_tokens AS input_tokens
    FROM scoped.requests_new AS r
    CROSS JOIN settings AS s
),
matched AS (
    SELECT
        r.* EXCLUDE (price_provider, price_model, input_tokens),  -- noqa: RF02
        p.cache_hit_input_per_million,
        p.cache_miss_input_per_million,
        p.cache_write_5m_per_million,
        p.cache_write_1h_per_million,
        p.output_per_million,
        p.web_search_per_call,
        p.micro[1] AS hit_micro,
        p.micro[2] AS miss_micro,
        p.micro[3] AS write_5m_micro,
        p.micro[4] AS write_1h_micro,
        p.micro[5] AS output_micro,
        p.web_search_pico,
        p.price_band
    FROM keyed AS r
    LEFT JOIN prices AS p
        ON
            r.price_provider = p.provider
            AND r.price_model = p.model
            AND r.service_tier = p.service_tier
            AND r.started_at >= p.valid_from
            AND r.started_at < p.valid_until
            AND r.input_tokens >= p.min_input_tokens
            AND r.input_tokens < p.max_input_tokens
),
costed AS (
    SELECT
        *,
        -- docs/definitions.md: (hit x price_hit + miss x price_miss + write_5m x price_write_5m + write_1h x price_write_1h
        -- + (output + reasoning) x price_out) / 1e6 + web_search_calls x price_per_search, exact at scale 12.
        -- The same sum in whole picodollars (BIGINT, 30x faster than HUGEINT decimals) when every price has a whole
        -- micro-dollar value below $1,000 (web search: a picodollar one below $1) and every token count is below
        -- 1e8 (searches below 1e5): each term is then below 2e17 and the sum below 1e18, so nothing overflows and
        -- the two paths give the same value (tests/models/test_request_cost.py by hand, tests/models/test_pricing_rule.py
        -- against a Python Decimal oracle)
        CASE WHEN
            hit_micro IS NOT NULL AND miss_micro IS NOT NULL AND write_5m_micro IS NOT NULL
            AND write_1h_micro IS NOT NULL AND output_micro IS NOT NULL AND web_search_pico IS NOT NULL
            AND cache_hit_input_tokens BETWEEN 0 AND 99999999 AND cache_miss_input_tokens BETWEEN 0 AND 99999999
            AND cache_write_5m_input_tokens BETWEEN 0 AND 99999999 AND cache_write_1h_input_tokens BETWEEN 0 AND 99999999
            AND output_tokens BETWEEN 0 AND 99999999 AND reasoning_tokens BETWEEN 0 AND 99999999
            AND web_search_calls BETWEEN 0 AND 99999
            THEN CAST(
                CAST(
                    cache_hit_input_tokens * hit_micro
                    + cache_miss_input_tokens * miss_micro
                    + cache_write_5m_input_tokens * write_5m_micro
                    + cache_write_1h_input_tokens * write_1h_micro
                    + (output_tokens + reasoning_tokens) * output_micro
                    + web_search_calls * web_search_pico
                    AS DECIMAL(18, 0)
                ) * CAST(0.000000000001 AS DECIMAL(13, 12))
                AS DECIMAL(38, 12)
            )
        ELSE CAST(
            per_million(
                CAST(cache_hit_input_tokens AS DECIMAL(20, 0)) * cache_hit_input_per_million
                + CAST(cache_miss_input_tokens AS DECIMAL(20, 0)) * cache_miss_input_per_million
                + CAST(cache_write_5m_input_tokens AS DECIMAL(20, 0)) * cache_write_5m_per_million
                + CAST(cache_write_1h_input_tokens AS DECIMAL(20, 0)) * cache_write_1h_per_million
                + CAST(output_tokens + reasoning_tokens AS DECIMAL(20, 0)) * output_per_million
            )
            + CAST(web_search_calls AS DECIMAL(20, 0)) * web_search_per_call
            AS DECIMAL(38, 12)
        ) END AS priced_cost_usd
    FROM matched
)
SELECT
    request_id, task_id, attempt, started_at, ended_at, month, route, provider, model, cluster_id,
    cache_hit_input_tokens, cache_miss_input_tokens, cache_write_5m_input_tokens, cache_write_1h_input_tokens,
    output_tokens, reasoning_tokens, web_search_calls,
    latency_ms, status, accepted, team, workload, source_file_hash,
    price_band IS NOT NULL AS is_priced,
    price_band,
    CASE WHEN route = 'api' THEN priced_cost_usd END AS metered_cost_usd,
    CASE WHEN route = 'self_hosted' THEN priced_cost_usd END AS api_equivalent_cost_usd
FROM costed
