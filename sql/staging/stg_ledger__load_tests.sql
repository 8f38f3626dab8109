-- grain: one row per sweep x cluster x concurrency
-- materialized: view
-- unique_key: sweep_id, cluster_id, concurrency
-- description: Capacity sweep points as loaded (canonical load-tests files, vLLM bench serve and SGLang bench_serving results): aggregate tokens per second and latency of a cluster at each concurrency, on nodes nodes (1 when not given: nodes_given says whether it was).
-- column sweep_id VARCHAR
-- column cluster_id VARCHAR
-- column concurrency INTEGER
-- column measured_at TIMESTAMP
-- column tokens_per_second DECIMAL(18,3)
-- column p95_latency_ms DECIMAL(18,3)
-- column p50_latency_ms DECIMAL(18,3)
-- column output_tokens_per_second DECIMAL(18,3)
-- column nodes INTEGER
-- column nodes_given BOOLEAN: Whether the sweep file said how many nodes served it (otherwise nodes is taken as 1).
SELECT
    sweep_id,
    cluster_id,
    concurrency,
    measured_at,
    tokens_per_second,
    p95_latency_ms,
    p50_latency_ms,
    output_tokens_per_second,
    coalesce(nodes, 1) AS nodes,
    nodes IS NOT NULL AS nodes_given
FROM raw.load_tests
