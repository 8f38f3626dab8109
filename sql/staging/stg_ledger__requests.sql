-- grain: one row per request (= one attempt of a task)
-- materialized: view
-- unique_key: request_id
-- key_enforced_by: ingest (meta.key_index: a row whose key is loaded already is quarantined)
-- description: Requests as loaded, with month and end time derived (rename, cast, unit conversion only). ended_at is NULL when latency_ms is (api rows may lack it).
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
