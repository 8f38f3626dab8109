-- grain: one row per eval set x task
-- materialized: table
-- unique_key: eval_set, task_id
-- description: Each evaluation task of the deployment gate with what its attempts did: its route and month (those of the task: its accepted attempt's, else its last attempt's), its final outcome (a latency violation is not accepted), its attempts and their latencies, its tokens over every attempt and, on the API, their metered cost at the provider's own prices. A task missing from the request log has no route: its case is not measured on that route. A self-hosted task carries the cluster its attempts ran on (cluster_id).
-- column eval_set VARCHAR
-- column case_id VARCHAR
-- column category VARCHAR: The category the evaluation file names for it ('uncategorised' when none).
-- column task_id VARCHAR
-- column route VARCHAR: The task's route ('api' or 'self_hosted', int_tasks_resolved.route); NULL when the request log does not name the task.
-- column month DATE: First day of the task's month (UTC); NULL when the request log does not name the task.
-- column accepted BOOLEAN: The task was accepted (within its route's latency limit).
-- column latency_violation BOOLEAN: The task's accepted attempt was slower than its route's limit.
-- column attempts BIGINT: The task's attempts; 0 when the request log does not name it.
-- column first_started_at TIMESTAMP: When its first attempt started (UTC).
-- column last_started_at TIMESTAMP: When its last attempt started (UTC).
-- column latencies_ms BIGINT[]: Its attempts' latencies in milliseconds, ascending (those logged).
-- column input_tokens HUGEINT: Input tokens over its attempts: cache hits, misses and cache writes.
-- column cache_hit_input_tokens HUGEINT: Cache-hit input tokens over its attempts.
-- column output_tokens HUGEINT: Output tokens over its attempts.
-- column reasoning_tokens HUGEINT: Reasoning tokens over its attempts.
-- column metered_cost_usd DECIMAL(38,12): On the API, its attempts' metered cost at the provider's own prices; NULL on the cluster or when an attempt is unpriced.
-- column review_cost_usd DECIMAL(38,12): Its human review at the review rate.
-- column cluster_id VARCHAR: The cluster its attempts ran on (the first by name when several); NULL on the API.
WITH cases AS (
    SELECT * FROM staging.stg_ledger__eval_tasks
),
attempts AS (
    SELECT
        r.task_id,
        count(*) AS attempts,
        min(r.started_at) AS first_started_at,
        max(r.started_at) AS last_started_at,
        list(r.latency_ms ORDER BY r.latency_ms) FILTER (WHERE r.latency_ms IS NOT NULL) AS latencies_ms,
        CAST(sum(r.cache_hit_input_tokens + r.cache_miss_input_tokens + r.cache_write_5m_input_tokens
            + r.cache_write_1h_input_tokens) AS HUGEINT) AS input_tokens,
        CAST(sum(r.cache_hit_input_tokens) AS HUGEINT) AS cache_hit_input_tokens,
        CAST(sum(r.output_tokens) AS HUGEINT) AS output_tokens,
        CAST(sum(r.reasoning_tokens) AS HUGEINT) AS reasoning_tokens,
        CAST(sum(r.metered_cost_usd) AS DECIMAL(38, 12)) AS metered_cost_usd,
        bool_and(r.is_priced) AS all_priced,
        min(r.cluster_id) AS cluster_id
    FROM intermediate.int_requests_priced AS r
    WHERE r.task_id IN (SELECT c.task_id FROM cases AS c)
    GROUP BY r.task_id
)
SELECT
    c.eval_set,
    c.case_id,
    c.category,
    c.task_id,
    t.route,
    t.month,
    coalesce(t.accepted, FALSE) AS accepted,
    coalesce(t.latency_violation, FALSE) AS latency_violation,
    coalesce(a.attempts, 0) AS attempts,
    a.first_started_at,
    a.last_started_at,
    a.latencies_ms,
    a.input_tokens,
    a.cache_hit_input_tokens,
    a.output_tokens,
    a.reasoning_tokens,
    CASE WHEN t.route = 'api' AND a.all_priced THEN a.metered_cost_usd END AS metered_cost_usd,
    coalesce(t.review_cost_usd, 0) AS review_cost_usd,
    a.cluster_id
FROM cases AS c
LEFT JOIN attempts AS a ON c.task_id = a.task_id
LEFT JOIN intermediate.int_tasks_resolved AS t ON c.task_id = t.task_id
