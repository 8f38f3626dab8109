-- grain: one row per month x route x provider x cluster x team
-- materialized: table
-- unique_key: month, route, provider, cluster_id, team
-- description: Request volume, tokens and token cost per month, route, provider, cluster and team: the sums every monthly model needs, so none of them reads the request-level table. metered_usd: API rows at their provider's price (priced rows only); api_equivalent_usd: self-hosted rows at the reference API price. The a/b/c sums split the priced rows' cost at the API (own provider for api rows, reference price for self-hosted rows) for the cache-hit sensitivity (cost(h) = A - h x B + C; C is what does not depend on the hit rate: output, cache writes, web searches). The sums of its days (int_requests_daily), rounded once.
-- column month DATE
-- column route VARCHAR
-- column provider VARCHAR
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
-- column metered_usd DECIMAL(38,12): The API requests' metered cost at their provider's prices (int_requests_priced.metered_cost_usd); 0 on the cluster.
-- column api_equivalent_usd DECIMAL(38,12): The self-hosted requests at the reference API's price (int_requests_priced.api_equivalent_cost_usd); 0 on the API.
-- column a_all_miss_usd DECIMAL(38,12): A: the read input tokens (cache hits + misses) all at the cache-miss price; the cost at a 0 % hit rate of what the cache-hit sensitivity varies (cost(h) = A - h x B + C).
-- column b_hit_saving_usd DECIMAL(38,12): B: the read input tokens x (cache-miss price - cache-hit price): what a 100 % hit rate would save on them.
-- column c_not_read_input_usd DECIMAL(38,12): C: what does not depend on the hit rate: output and reasoning at the output price, cache writes at their prices, web searches per call.
-- column cache_hit_input_usd DECIMAL(38,12): The cache-hit input tokens at their price band's cache-hit price (likewise cache_miss_input_usd, cache_write_5m_input_usd, cache_write_1h_input_usd, output_usd for output and reasoning, web_search_usd): each token type's list cost, which the invoice uplift values a bill's quantities by.
-- column cache_miss_input_usd DECIMAL(38,12): The cache-miss input tokens at their price band's cache-miss price.
-- column cache_write_5m_input_usd DECIMAL(38,12): The 5-minute cache writes at their price band's 5-minute write price.
-- column cache_write_1h_input_usd DECIMAL(38,12): The 1-hour cache writes at their price band's 1-hour write price.
-- column output_usd DECIMAL(38,12): Output and reasoning tokens at their price band's output price.
-- column web_search_usd DECIMAL(38,12): The web searches at their price band's price per call.
SELECT
    month,
    route,
    provider,
    cluster_id,
    team,
    CAST(sum(requests) AS BIGINT) AS requests,
    CAST(sum(unpriced_requests) AS BIGINT) AS unpriced_requests,
    sum(cache_hit_input_tokens) AS cache_hit_input_tokens,
    sum(cache_miss_input_tokens) AS cache_miss_input_tokens,
    sum(cache_write_5m_input_tokens) AS cache_write_5m_input_tokens,
    sum(cache_write_1h_input_tokens) AS cache_write_1h_input_tokens,
    sum(output_tokens) AS output_tokens,
    sum(reasoning_tokens) AS reasoning_tokens,
    sum(web_search_calls) AS web_search_calls,
    sum(request_ms) AS request_ms,
    CAST(coalesce(sum(metered_usd), 0) AS DECIMAL(38, 12)) AS metered_usd,
    CAST(coalesce(sum(api_equivalent_usd), 0) AS DECIMAL(38, 12)) AS api_equivalent_usd,
    CAST(coalesce(sum(a_all_miss_usd), 0) AS DECIMAL(38, 12)) AS a_all_miss_usd,
    CAST(coalesce(sum(b_hit_saving_usd), 0) AS DECIMAL(38, 12)) AS b_hit_saving_usd,
    CAST(coalesce(sum(c_not_read_input_usd), 0) AS DECIMAL(38, 12)) AS c_not_read_input_usd,
    CAST(coalesce(sum(cache_hit_input_usd), 0) AS DECIMAL(38, 12)) AS cache_hit_input_usd,
    CAST(coalesce(sum(cache_miss_input_usd), 0) AS DECIMAL(38, 12)) AS cache_miss_input_usd,
    CAST(coalesce(sum(cache_write_5m_input_usd), 0) AS DECIMAL(38, 12)) AS cache_write_5m_input_usd,
    CAST(coalesce(sum(cache_write_1h_input_usd), 0) AS DECIMAL(38, 12)) AS cache_write_1h_input_usd,
    CAST(coalesce(sum(output_usd), 0) AS DECIMAL(38, 12)) AS output_usd,
    CAST(coalesce(sum(web_search_usd), 0) AS DECIMAL(38, 12)) AS web_search_usd
FROM intermediate.int_requests_daily
GROUP BY month, route, provider, cluster_id, team
