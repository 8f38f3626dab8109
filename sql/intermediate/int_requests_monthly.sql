-- grain: one row per month x route x provider x cluster x team
-- materialized: table
-- incremental: months
-- input requests_of_months: intermediate.int_requests_priced
-- unique_key: month, route, provider, cluster_id, team
-- description: Request volume, tokens and token cost per month, route, provider, cluster and team: the sums every monthly model needs, so none of them reads the request-level table. metered_usd: API rows at their provider's price (priced rows only); api_equivalent_usd: self-hosted rows at the reference API price. The a/b/c sums split the priced rows' cost at the API (own provider for api rows, reference price for self-hosted rows) for the cache-hit sensitivity (cost(h) = A - h x B + C; C is what does not depend on the hit rate: output, cache writes, web searches). Incremental: only months touched by new data are recomputed.
SELECT
    month,
    route,
    provider,
    cluster_id,
    team,
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
    CAST(coalesce(sum(metered_cost_usd), 0) AS DECIMAL(38, 12)) AS metered_usd,
    CAST(coalesce(sum(api_equivalent_cost_usd), 0) AS DECIMAL(38, 12)) AS api_equivalent_usd,
    CAST(coalesce(sum(CAST(cache_hit_input_tokens + cache_miss_input_tokens AS DECIMAL(20, 0)) * cache_miss_input_per_million
        * CAST(0.000001 AS DECIMAL(7, 6))) FILTER (WHERE is_priced), 0) AS DECIMAL(38, 12)) AS a_all_miss_usd,
    CAST(coalesce(sum(CAST(cache_hit_input_tokens + cache_miss_input_tokens AS DECIMAL(20, 0))
        * (cache_miss_input_per_million - cache_hit_input_per_million) * CAST(0.000001 AS DECIMAL(7, 6)))
        FILTER (WHERE is_priced), 0) AS DECIMAL(38, 12)) AS b_hit_saving_usd,
    CAST(coalesce(sum(
        (CAST(output_tokens + reasoning_tokens AS DECIMAL(20, 0)) * output_per_million
            + CAST(cache_write_5m_input_tokens AS DECIMAL(20, 0)) * cache_write_5m_per_million
            + CAST(cache_write_1h_input_tokens AS DECIMAL(20, 0)) * cache_write_1h_per_million)
        * CAST(0.000001 AS DECIMAL(7, 6))
        + CAST(web_search_calls AS DECIMAL(20, 0)) * web_search_per_call
    ) FILTER (WHERE is_priced), 0) AS DECIMAL(38, 12)) AS c_not_read_input_usd
FROM scoped.requests_of_months
GROUP BY month, route, provider, cluster_id, team
