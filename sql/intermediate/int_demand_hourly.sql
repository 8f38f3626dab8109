-- grain: one row per hour x route (with requests)
-- materialized: table
-- incremental: days
-- input requests_of_days: intermediate.int_requests_priced, day started_at
-- unique_key: day, hour, route, cluster_id
-- description: The demand profile: the tokens the organisation asked for in each clock hour (UTC, by request start) on each route (and, on the self-hosted route, each cluster), every attempt counted (input including cache hits and writes, output and reasoning), and what the priced part of them costs at the API (an API request at its own provider's price, a self-hosted one at the reference API price): marts.monthly_hybrid_plan sends an hour's tokens above the cluster's capacity to the API at that hour's price per token. Incremental: only the days touched by new data are recomputed.
-- column day DATE: The day (UTC) of the hour.
-- column month DATE
-- column hour TIMESTAMP: The clock hour (UTC) the requests started in.
-- column route VARCHAR
-- column cluster_id VARCHAR
-- column requests BIGINT: Requests started in the hour on the route (and cluster), every attempt.
-- column tokens HUGEINT: Their tokens: input (cache hits, misses and writes), output and reasoning.
-- column priced_tokens HUGEINT: The part of those tokens of requests the ledger can price (at the API).
-- column priced_cost_usd DECIMAL(38,12): What those priced requests cost at the API: an API request at its own provider's price, a self-hosted one at the reference API price.
SELECT
    CAST(started_at AS DATE) AS day,
    CAST(date_trunc('month', started_at) AS DATE) AS month,
    date_trunc('hour', started_at) AS hour,
    route,
    cluster_id,
    count(*) AS requests,
    CAST(sum(
        cache_hit_input_tokens + cache_miss_input_tokens + cache_write_5m_input_tokens + cache_write_1h_input_tokens
        + output_tokens + reasoning_tokens
    ) AS HUGEINT) AS tokens,
    CAST(coalesce(sum(
        cache_hit_input_tokens + cache_miss_input_tokens + cache_write_5m_input_tokens + cache_write_1h_input_tokens
        + output_tokens + reasoning_tokens
    ) FILTER (WHERE is_priced), 0) AS HUGEINT) AS priced_tokens,
    CAST(coalesce(sum(coalesce(metered_cost_usd, api_equivalent_cost_usd)) FILTER (WHERE is_priced), 0)
        AS DECIMAL(38, 12)) AS priced_cost_usd
FROM scoped.requests_of_days
GROUP BY ALL
