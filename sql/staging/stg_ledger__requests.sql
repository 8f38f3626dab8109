-- grain: one row per request (= one attempt of a task)
-- materialized: view
-- unique_key: request_id
-- key_enforced_by: ingest (meta.key_index: a row whose key is loaded already is quarantined)
-- description: Requests as loaded, with month and end time derived (rename, cast, unit conversion only). ended_at is NULL when latency_ms is (api rows may lack it).
-- column request_id VARCHAR
-- column task_id VARCHAR
-- column attempt INTEGER
-- column started_at TIMESTAMP
-- column ended_at TIMESTAMP: When the request ended: started_at + latency_ms (NULL when the latency is unknown).
-- column month DATE: The month the request started in (first day).
-- column route VARCHAR
-- column provider VARCHAR
-- column cluster_id VARCHAR
-- column model VARCHAR
-- column cache_hit_input_tokens BIGINT
-- column cache_miss_input_tokens BIGINT
-- column cache_write_5m_input_tokens BIGINT
-- column cache_write_1h_input_tokens BIGINT
-- column output_tokens BIGINT
-- column reasoning_tokens BIGINT
-- column web_search_calls BIGINT
-- column service_tier VARCHAR
-- column latency_ms BIGINT
-- column status VARCHAR
-- column accepted BOOLEAN
-- column team VARCHAR
-- column workload VARCHAR
-- column reported_cost_usd DECIMAL(38,12)
-- column source_file_hash VARCHAR
SELECT
    request_id,
    task_id,
    attempt,
    started_at,
    started_at + to_milliseconds(latency_ms) AS ended_at,
    CAST(date_trunc('month', started_at) AS DATE) AS month,
    route,
    provider,
    cluster_id,
    model,
    cache_hit_input_tokens,
    cache_miss_input_tokens,
    cache_write_5m_input_tokens,
    cache_write_1h_input_tokens,
    output_tokens,
    reasoning_tokens,
    web_search_calls,
    service_tier,
    latency_ms,
    status,
    accepted,
    team,
    workload,
    reported_cost_usd,
    source_file_hash
FROM raw.requests
