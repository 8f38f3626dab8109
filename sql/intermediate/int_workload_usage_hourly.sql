-- grain: one row per hour x route x provider x team x workload (with requests)
-- materialized: table
-- incremental: days
-- input requests_of_days: intermediate.int_requests_priced, day started_at
-- unique_key: day, hour, route, provider, team, workload
-- description: What each workload asked for in each clock hour (UTC, by request start) on each route, every attempt counted: a workload is the request's team and workload ('(none)' when the log names none). Its tokens (input including cache hits and writes, output and reasoning), the cache-hit and all input tokens (for its cache-hit share) and, on the API, the metered cost of its priced attempts at their own provider's price (unpriced_requests counts the others). marts.monthly_workload_moves takes each workload's busiest hour and its month's cost from here. Incremental: only the days touched by new data are recomputed.
-- column day DATE: The day (UTC) of the hour.
-- column month DATE
-- column hour TIMESTAMP: The clock hour (UTC) the requests started in.
-- column route VARCHAR
-- column provider VARCHAR
-- column team VARCHAR: The team that sent the requests ('(none)' when not logged).
-- column workload VARCHAR: The kind of work the requests did, as the request log names it ('(none)' when not logged).
-- column requests BIGINT: Requests of the workload started in the hour on the route, every attempt.
-- column tokens HUGEINT: Their tokens: input (cache hits, misses and writes), output and reasoning.
-- column cache_hit_input_tokens HUGEINT
-- column input_tokens HUGEINT: Their input tokens alone: cache hits, misses and writes.
-- column metered_cost_usd DECIMAL(38,12): The metered cost of the priced ones at their own provider's price (API requests; 0 on the self-hosted route).
-- column unpriced_requests BIGINT: API requests of the hour the ledger has no price for.
SELECT
    CAST(started_at AS DATE) AS day,
    CAST(date_trunc('month', started_at) AS DATE) AS month,
    date_trunc('hour', started_at) AS hour,
    route,
    provider,
    coalesce(team, '(none)') AS team,
    coalesce(workload, '(none)') AS workload,
    count(*) AS requests,
    CAST(sum(
        cache_hit_input_tokens + cache_miss_input_tokens + cache_write_5m_input_tokens + cache_write_1h_input_tokens
        + output_tokens + reasoning_tokens
    ) AS HUGEINT) AS tokens,
    CAST(sum(cache_hit_input_tokens) AS HUGEINT) AS cache_hit_input_tokens,
    CAST(sum(cache_hit_input_tokens + cache_miss_input_tokens + cache_write_5m_input_tokens + cache_write_1h_input_tokens)
        AS HUGEINT) AS input_tokens,
    CAST(coalesce(sum(metered_cost_usd), 0) AS DECIMAL(38, 12)) AS metered_cost_usd,
    count(*) FILTER (WHERE route = 'api' AND NOT is_priced) AS unpriced_requests
FROM scoped.requests_of_days
GROUP BY ALL
