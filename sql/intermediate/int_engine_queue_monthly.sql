-- grain: one row per cluster x month with requests waiting
-- materialized: table
-- unique_key: cluster_id, month
-- description: The clock hours in which a serving engine reported requests waiting in its queue (a requests_waiting sample above 0), and the fewest tokens the cluster's engines counted in any of those hours (their token counters' rises in intervals ending in the hour). marts.monthly_utilisation sets that against the capacity of the nodes in service: requests queueing while the cluster served under half of it mean the load test is optimistic for production's mix.
-- column cluster_id VARCHAR
-- column month DATE
-- column waiting_hours BIGINT: Clock hours with requests waiting.
-- column least_waiting_hour_tokens DECIMAL(38,6): The fewest tokens counted in an hour with requests waiting (0 when the engines counted none in such an hour).
WITH waiting AS (
    SELECT DISTINCT
        cluster_id,
        date_trunc('hour', sampled_at) AS hour
    FROM staging.stg_ledger__engine_metrics
    WHERE measure = 'requests_waiting' AND value > 0
),
served AS (
    SELECT
        cluster_id,
        date_trunc('hour', interval_end) AS hour,
        sum(increase) AS tokens
    FROM intermediate.int_engine_token_increases
    WHERE measure IN ('prompt_tokens', 'generation_tokens')
    GROUP BY cluster_id, date_trunc('hour', interval_end)
)
SELECT
    w.cluster_id,
    CAST(date_trunc('month', w.hour) AS DATE) AS month,
    count(*) AS waiting_hours,
    CAST(min(coalesce(s.tokens, 0)) AS DECIMAL(38, 6)) AS least_waiting_hour_tokens
FROM waiting AS w
LEFT JOIN served AS s ON s.cluster_id = w.cluster_id AND s.hour = w.hour
GROUP BY w.cluster_id, CAST(date_trunc('month', w.hour) AS DATE)
