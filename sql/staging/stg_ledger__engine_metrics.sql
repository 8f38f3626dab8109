-- grain: one row per engine metric sample (cluster x metric x series x instant)
-- materialized: view
-- unique_key: cluster_id, metric, labels, sampled_at
-- description: The serving engines' own meters as loaded (raw.engine_metrics), each sample with its engine and what it measures.
-- column cluster_id VARCHAR
-- column metric VARCHAR
-- column labels VARCHAR
-- column sampled_at TIMESTAMP
-- column value DECIMAL(38,6)
-- column engine VARCHAR: vllm or sglang: the serving engine that exports the metric (its name's prefix).
-- column measure VARCHAR: prompt_tokens or generation_tokens (counters: tokens processed since the engine started), prefix_cache_queries or prefix_cache_hits (counters: prompt tokens looked up in the engine's prefix cache, and found there; SGLang counts only those found, its sglang:cached_tokens_total, by cache_source), prefill_seconds or decode_seconds (counters: the seconds requests spent in the prefill and in the decode phase, the sums of vLLM's histograms), requests_waiting or requests_running (gauges).
SELECT
    cluster_id,
    metric,
    labels,
    sampled_at,
    value,
    CASE WHEN metric LIKE 'vllm:%' THEN 'vllm' ELSE 'sglang' END AS engine,
    CASE
        WHEN metric IN ('vllm:prompt_tokens_total', 'sglang:prompt_tokens_total') THEN 'prompt_tokens'
        WHEN metric IN ('vllm:generation_tokens_total', 'sglang:generation_tokens_total') THEN 'generation_tokens'
        WHEN metric IN ('vllm:num_requests_waiting', 'sglang:num_queue_reqs') THEN 'requests_waiting'
        WHEN metric = 'vllm:prefix_cache_queries_total' THEN 'prefix_cache_queries'
        WHEN metric IN ('vllm:prefix_cache_hits_total', 'sglang:cached_tokens_total') THEN 'prefix_cache_hits'
        WHEN metric = 'vllm:request_prefill_time_seconds_sum' THEN 'prefill_seconds'
        WHEN metric = 'vllm:request_decode_time_seconds_sum' THEN 'decode_seconds'
        ELSE 'requests_running'
    END AS measure
FROM raw.engine_metrics
