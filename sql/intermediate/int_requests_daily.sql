-- grain: one row per day x route x provider x model x cluster x team
-- materialized: table
-- incremental: days
-- input requests_of_days: intermediate.int_requests_priced, day started_at
-- unique_key: day, route, provider, model, cluster_id, team
-- description: Request volume, tokens and token cost per day (UTC, by request start), route, provider, model (the model the request named), cluster and team: the sums of int_requests_monthly, kept per day so that a late day recomputes its day, not its month. The a/b/c sums are priced per price band: the band's prices times the band's token sums, the same exact value as the sum of every request's own (DECIMAL arithmetic does not round). Money sums keep their full scale here; int_requests_monthly sums the days and rounds once. Incremental: only the days touched by new data are recomputed.
-- column day DATE: The day (UTC) the requests started.
-- column month DATE
-- column route VARCHAR
-- column provider VARCHAR
-- column model VARCHAR
-- column cluster_id VARCHAR
-- column team VARCHAR
-- column requests BIGINT: Requests (attempts), every status.
-- column unpriced_requests BIGINT: Of them, requests no price applied to (their costs are left out of every sum below).
-- column cache_hit_input_tokens HUGEINT
-- column cache_miss_input_tokens HUGEINT
-- column cache_write_5m_input_tokens HUGEINT
-- column cache_write_1h_input_tokens HUGEINT
-- column output_tokens HUGEINT
-- column reasoning_tokens HUGEINT
-- column web_search_calls HUGEINT
-- column request_ms HUGEINT: The requests' latencies added up, in milliseconds (those that logged one).
-- column metered_usd DECIMAL(38,12): The API requests' metered cost at their provider's prices (int_requests_priced.metered_cost_usd); NULL on the cluster.
-- column api_equivalent_usd DECIMAL(38,12): The self-hosted requests at the reference API's price (int_requests_priced.api_equivalent_cost_usd); NULL on the API.
-- column a_all_miss_usd DECIMAL(38,24): A: the read input tokens (cache hits + misses) all at the cache-miss price; the cost at a 0 % hit rate of what the cache-hit sensitivity varies (cost(h) = A - h x B + C).
-- column b_hit_saving_usd DECIMAL(38,24): B: the read input tokens x (cache-miss price - cache-hit price): what a 100 % hit rate would save on them.
-- column c_not_read_input_usd DECIMAL(38,24): C: what does not depend on the hit rate: output and reasoning at the output price, cache writes at their prices, web searches per call.
-- column cache_hit_input_usd DECIMAL(38,24): The cache-hit input tokens at their price band's cache-hit price.
-- column cache_miss_input_usd DECIMAL(38,24): The cache-miss input tokens at their price band's cache-miss price.
-- column cache_write_5m_input_usd DECIMAL(38,24): The 5-minute cache writes at their price band's 5-minute write price.
-- column cache_write_1h_input_usd DECIMAL(38,24): The 1-hour cache writes at their price band's 1-hour write price.
-- column output_usd DECIMAL(38,24): Output and reasoning tokens at their price band's output price.
-- column web_search_usd DECIMAL(38,18): The web searches at their price band's price per call.
WITH by_band AS (
    -- the day's sums per price band (int_requests_priced keeps a request's band, not its prices)
    SELECT
        CAST(started_at AS DATE) AS day,
        month,
        route,
        provider,
        model,
        cluster_id,
        team,
        price_band,
        count(*) AS requests,
        count(*) FILTER (WHERE NOT is_priced) AS unpriced_requests,
        sum(cache_hit_input_tokens) AS cache_hit_input_tokens,
        sum(cache_miss_input_tokens) AS cache_miss_input_tokens,
        sum(cache_write_5m_input_tokens) AS cache_write_5m_input_tokens,
        sum(cache_write_1h_input_tokens) AS cache_write_1h_input_tokens,
        sum(output_tokens) AS output_tokens,
        sum(reasoning_tokens) AS reasoning_tokens,
        sum(web_search_calls) AS web_search_calls,
        sum(latency_ms) AS request_ms,
        sum(metered_cost_usd) AS metered_usd,
        sum(api_equivalent_cost_usd) AS api_equivalent_usd
    FROM scoped.requests_of_days
    GROUP BY CAST(started_at AS DATE), month, route, provider, model, cluster_id, team, price_band
)
SELECT
    b.day,
    b.month,
    b.route,
    b.provider,
    b.model,
    b.cluster_id,
    b.team,
    CAST(sum(b.requests) AS BIGINT) AS requests,
    CAST(sum(b.unpriced_requests) AS BIGINT) AS unpriced_requests,
    sum(b.cache_hit_input_tokens) AS cache_hit_input_tokens,
    sum(b.cache_miss_input_tokens) AS cache_miss_input_tokens,
    sum(b.cache_write_5m_input_tokens) AS cache_write_5m_input_tokens,
    sum(b.cache_write_1h_input_tokens) AS cache_write_1h_input_tokens,
    sum(b.output_tokens) AS output_tokens,
    sum(b.reasoning_tokens) AS reasoning_tokens,
    sum(b.web_search_calls) AS web_search_calls,
    sum(b.request_ms) AS request_ms,
    sum(b.metered_usd) AS metered_usd,
    sum(b.api_equivalent_usd) AS api_equivalent_usd,
    sum(per_million(
        CAST(b.cache_hit_input_tokens + b.cache_miss_input_tokens AS DECIMAL(38, 0)) * p.cache_miss_input_per_million
    )) AS a_all_miss_usd,
    sum(per_million(
        CAST(b.cache_hit_input_tokens + b.cache_miss_input_tokens AS DECIMAL(38, 0))
        * (p.cache_miss_input_per_million - p.cache_hit_input_per_million)
    )) AS b_hit_saving_usd,
    sum(
        per_million(
            CAST(b.output_tokens + b.reasoning_tokens AS DECIMAL(38, 0)) * p.output_per_million
            + CAST(b.cache_write_5m_input_tokens AS DECIMAL(38, 0)) * p.cache_write_5m_per_million
            + CAST(b.cache_write_1h_input_tokens AS DECIMAL(38, 0)) * p.cache_write_1h_per_million
        )
        + CAST(b.web_search_calls AS DECIMAL(38, 0)) * p.web_search_per_call
    ) AS c_not_read_input_usd,
    -- each token type at its own price (what the invoice uplift values a bill's quantities at)
    sum(per_million(CAST(b.cache_hit_input_tokens AS DECIMAL(38, 0)) * p.cache_hit_input_per_million))
        AS cache_hit_input_usd,
    sum(per_million(CAST(b.cache_miss_input_tokens AS DECIMAL(38, 0)) * p.cache_miss_input_per_million))
        AS cache_miss_input_usd,
    sum(per_million(CAST(b.cache_write_5m_input_tokens AS DECIMAL(38, 0)) * p.cache_write_5m_per_million))
        AS cache_write_5m_input_usd,
    sum(per_million(CAST(b.cache_write_1h_input_tokens AS DECIMAL(38, 0)) * p.cache_write_1h_per_million))
        AS cache_write_1h_input_usd,
    sum(per_million(CAST(b.output_tokens + b.reasoning_tokens AS DECIMAL(38, 0)) * p.output_per_million)) AS output_usd,
    sum(CAST(b.web_search_calls AS DECIMAL(38, 0)) * p.web_search_per_call) AS web_search_usd
FROM by_band AS b
-- unpriced requests (no band) find no prices: their a/b/c terms are NULL, which sum() leaves out
LEFT JOIN intermediate.int_prices_effective AS p ON b.price_band = p.price_band
GROUP BY b.day, b.month, b.route, b.provider, b.model, b.cluster_id, b.team
