-- grain: one row per cluster x day (with self-hosted requests)
-- materialized: table
-- incremental: days
-- input requests_of_days: intermediate.int_requests_priced, day started_at
-- input accepted_of_days: intermediate.int_tasks_resolved (accepted_request_id, accepted), within accepted_request_id of requests_of_days.request_id
-- unique_key: cluster_id, day
-- description: Each cluster's self-hosted requests started in a day (UTC): count, request time (sum of latencies), the part of it that belongs to accepted attempts, the requests started in the day's busiest clock hour, the tokens served, and the highest tokens per second in any of the day's 5-minute windows whose p95 latency was within the self-hosted SLO (NULL when none was). Clock hours and 5-minute windows lie within a day, so int_cluster_requests_monthly sums and takes the maximum of the days. Incremental: only the days touched by new data are recomputed, and the days of every attempt of a task whose attempts or decision changed (its accepted attempt may move).
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
requests AS (
    SELECT
        r.cluster_id,
        CAST(r.started_at AS DATE) AS day,
        r.month,
        r.request_id,
        r.task_id,
        r.latency_ms,
        r.started_at,
        r.cache_hit_input_tokens + r.cache_miss_input_tokens + r.output_tokens + r.reasoning_tokens AS tokens
    FROM scoped.requests_of_days AS r
    WHERE r.route = 'self_hosted' AND r.cluster_id IS NOT NULL
),
request_time AS (
    SELECT
        r.cluster_id,
        r.day,
        r.month,
        count(*) AS requests,
        sum(r.latency_ms) AS request_ms,
        coalesce(sum(r.latency_ms) FILTER (WHERE t.accepted_request_id IS NOT NULL), 0) AS accepted_attempt_request_ms,
        CAST(sum(r.tokens) AS BIGINT) AS tokens_served
    FROM requests AS r
    LEFT JOIN scoped.accepted_of_days AS t ON t.accepted_request_id = r.request_id AND t.accepted
    GROUP BY r.cluster_id, r.day, r.month
),
peak AS (
    SELECT cluster_id, day, month, max(n) AS peak_hour_requests
    FROM (SELECT cluster_id, day, month, date_trunc('hour', started_at) AS hour, count(*) AS n FROM requests GROUP BY ALL) AS hourly
    GROUP BY cluster_id, day, month
),
windows AS (
    -- 5-minute windows by request start: tokens, requests, and requests within the SLO
    SELECT
        r.cluster_id,
        r.day,
        r.month,
        time_bucket(INTERVAL 5 MINUTE, r.started_at) AS window_start,
        sum(r.tokens) AS tokens,
        count(*) AS n,
        count(*) FILTER (WHERE s.slo_ms_self_hosted IS NULL OR r.latency_ms <= s.slo_ms_self_hosted) AS n_within_slo
    FROM requests AS r
    CROSS JOIN settings AS s
    GROUP BY ALL
),
observed AS (
    -- p95 within the SLO <=> the quantile_disc position of p95 (max(1, n - floor(n - 0.95 n))) is within the SLO,
    -- i.e. at least that many of the window's requests are
    SELECT
        cluster_id,
        day,
        month,
        CAST(max(tokens / 300) FILTER (WHERE n_within_slo >= greatest(1, n - floor(n - 0.95 * n))) AS DECIMAL(18, 3))
            AS observed_tokens_per_second
    FROM windows
    GROUP BY cluster_id, day, month
)
SELECT rt.*, p.peak_hour_requests, o.observed_tokens_per_second
FROM request_time AS rt
JOIN peak AS p USING (cluster_id, day, month)
JOIN observed AS o USING (cluster_id, day, month)
