-- grain: one row per day x route x provider x cluster x team
-- materialized: table
-- incremental: days
-- input requests_of_days: intermediate.int_requests_priced, day started_at
-- unique_key: day, route, provider, cluster_id, team
-- description: Request volume, tokens and token cost per day (UTC, by request start), route, provider, cluster and team: the sums of int_requests_monthly, kept per day so that a late day recomputes its day, not its month. Money sums keep their full scale here; int_requests_monthly sums the days and rounds once. Incremental: only the days touched by new data are recomputed.
SELECT
    CAST(started_at AS DATE) AS day,
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
    sum(metered_cost_usd) AS metered_usd,
    sum(api_equivalent_cost_usd) AS api_equivalent_usd,
    sum(CAST(cache_hit_input_tokens + cache_miss_input_tokens AS DECIMAL(20, 0)) * cache_miss_input_per_million
        * CAST(0.000001 AS DECIMAL(7, 6))) FILTER (WHERE is_priced) AS a_all_miss_usd,
    sum(CAST(cache_hit_input_tokens + cache_miss_input_tokens AS DECIMAL(20, 0))
        * (cache_miss_input_per_million - cache_hit_input_per_million) * CAST(0.000001 AS DECIMAL(7, 6)))
        FILTER (WHERE is_priced) AS b_hit_saving_usd,
    sum(
        (CAST(output_tokens + reasoning_tokens AS DECIMAL(20, 0)) * output_per_million
            + CAST(cache_write_5m_input_tokens AS DECIMAL(20, 0)) * cache_write_5m_per_million
            + CAST(cache_write_1h_input_tokens AS DECIMAL(20, 0)) * cache_write_1h_per_million)
        * CAST(0.000001 AS DECIMAL(7, 6))
        + CAST(web_search_calls AS DECIMAL(20, 0)) * web_search_per_call
    ) FILTER (WHERE is_priced) AS c_not_read_input_usd
FROM scoped.requests_of_days
GROUP BY day, month, route, provider, cluster_id, team
