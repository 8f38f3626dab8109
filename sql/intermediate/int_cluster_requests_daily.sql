-- grain: one row per cluster x day (with self-hosted requests)
-- materialized: table
-- incremental: days
-- input requests_of_days: intermediate.int_requests_priced, day started_at
-- input requests_near_days: intermediate.int_requests_priced (cluster_id, route, latency_ms, started_at, ended_at, cache_hit_input_tokens, cache_miss_input_tokens, output_tokens, reasoning_tokens), day started_at, lookback ended_at
-- input accepted_of_days: intermediate.int_tasks_resolved (accepted_day, accepted_cluster_id, accepted_latency_ms, accepted_request_id, route, accepted), day accepted_day
-- unique_key: cluster_id, day
-- description: Each cluster's self-hosted requests started in a day (UTC): count, request time (sum of latencies), the part of it that belongs to accepted attempts, the requests started in the day's busiest clock hour and the tokens started in its busiest hour by tokens (peak_hour_tokens) and the start of every hour that many tokens started in (peak_hours), the tokens served and those of accepted attempts (accepted_tokens: the day's requests an accepted task names as its accepted attempt), the histogram of the accepted attempts' known latencies (accepted_latencies: one (latency_ms, n) per distinct latency, for the month's exact p95), and the highest tokens per second in any of the day's 5-minute windows whose p95 latency was within the self-hosted SLO (NULL when none was): each request's tokens spread evenly over the time it ran, so a window counts the tokens served in it and the requests running in it (requests started the day before included: the lookback of requests_near_days). Clock hours and 5-minute windows lie within a day, so int_cluster_requests_monthly sums and takes the maximum of the days. The accepted part comes from the accepted tasks by their accepted attempt's day and cluster (int_tasks_resolved's accepted_day, accepted_cluster_id), not from joining every request with its task. Incremental: only the days touched by new data are recomputed, and the days of every attempt of a task whose attempts or decision changed (its accepted attempt may move).
-- settings: slo_ms_self_hosted
-- column cluster_id VARCHAR: The cluster that served the requests.
-- column day DATE: The day (UTC) the requests started.
-- column month DATE
-- column requests BIGINT: The cluster's self-hosted requests started in the day.
-- column request_ms HUGEINT: Their latencies added up (overlapping requests each counted: request time, not busy time).
-- column accepted_attempt_request_ms HUGEINT: The latencies of the accepted attempts among them (an accepted task's accepted attempt that ran on the cluster and started in the day).
-- column tokens_served BIGINT: Input (cache-hit and cache-miss), output and reasoning tokens of the day's requests, every attempt.
-- column accepted_tokens BIGINT: The same tokens of the accepted attempts alone.
-- column peak_hour_requests BIGINT: The requests started in the day's busiest clock hour (by requests).
-- column peak_hour_tokens BIGINT: The tokens of the requests started in the day's busiest clock hour (by tokens).
-- column peak_hours TIMESTAMP[]: The start of every clock hour of the day in which peak_hour_tokens tokens started (more than one when hours tie).
-- column observed_tokens_per_second DECIMAL(38,3): The most tokens per second the cluster served in any 5-minute window of the day whose p95 latency was within the setting slo.self_hosted_ms (every window when it is not set): each request's tokens spread evenly over the time it ran; NULL when no window was within it.
-- column observed_window_start TIMESTAMP: When that window began (UTC; the earliest of windows as busy): the nodes in service then divide it into a capacity per node. NULL when no window was within the SLO.
-- column accepted_latencies STRUCT(latency_ms BIGINT, n BIGINT)[]: The accepted attempts' known latencies as a histogram: one (latency_ms, n) per distinct latency, in order (the month's exact p95 is taken from these).
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
requests AS (
    SELECT
        r.request_id,
        r.cluster_id,
        CAST(r.started_at AS DATE) AS day,
        r.month,
        r.latency_ms,
        r.started_at,
        r.cache_hit_input_tokens + r.cache_miss_input_tokens + r.output_tokens + r.reasoning_tokens AS tokens
    FROM scoped.requests_of_days AS r
    WHERE r.route = 'self_hosted' AND r.cluster_id IS NOT NULL
),
accepted_by_latency AS (
    -- the accepted attempts (self-hosted, on a cluster) by their day, cluster and latency
    SELECT accepted_cluster_id AS cluster_id, accepted_day AS day, accepted_latency_ms AS latency_ms, count(*) AS n
    FROM scoped.accepted_of_days
    WHERE accepted AND route = 'self_hosted' AND accepted_cluster_id IS NOT NULL
    GROUP BY accepted_cluster_id, accepted_day, accepted_latency_ms
),
accepted_time AS (
    -- their request time, and the histogram of their known latencies (int_cluster_requests_monthly's p95)
    SELECT
        cluster_id,
        day,
        sum(latency_ms * n) AS accepted_ms,
        list(struct_pack(latency_ms := latency_ms, n := n) ORDER BY latency_ms) FILTER (WHERE latency_ms IS NOT NULL)
            AS accepted_latencies
    FROM accepted_by_latency
    GROUP BY cluster_id, day
),
accepted_work AS (
    -- the tokens of the accepted attempts: the day's self-hosted requests that an accepted task names (its accepted
    -- attempt starts that day, so it is among them)
    SELECT r.cluster_id, r.day, sum(r.tokens) AS accepted_tokens
    FROM requests AS r
    SEMI JOIN scoped.accepted_of_days AS a
        ON
            a.accepted_request_id = r.request_id
            AND a.accepted
            AND a.route = 'self_hosted'
    GROUP BY r.cluster_id, r.day
),
request_time AS (
    SELECT
        r.cluster_id,
        r.day,
        r.month,
        count(*) AS requests,
        sum(r.latency_ms) AS request_ms,
        CAST(sum(r.tokens) AS BIGINT) AS tokens_served
    FROM requests AS r
    GROUP BY r.cluster_id, r.day, r.month
),
peak AS (
    -- the busiest clock hour by requests, and by tokens (every attempt, by its start hour): each its own hour; the
    -- hours that tie for the most tokens kept (the month's busiest hour is judged by the nodes present then)
    SELECT
        cluster_id,
        day,
        month,
        max(n) AS peak_hour_requests,
        max(hour_tokens) AS peak_hour_tokens,
        list(hour ORDER BY hour) FILTER (WHERE hour_tokens = day_most) AS peak_hours
    FROM (
        SELECT *, max(hour_tokens) OVER (PARTITION BY cluster_id, day) AS day_most
        FROM (
            SELECT cluster_id, day, month, date_trunc('hour', started_at) AS hour, count(*) AS n, sum(tokens) AS hour_tokens
            FROM requests
            GROUP BY ALL
        ) AS counted
    ) AS hourly
    GROUP BY cluster_id, day, month
),
spans AS (
    -- every request running on the cluster in the day (those started before it included): its tokens spread evenly
    -- over [started_at, started_at + latency); a request without latency is a point at its start
    SELECT
        cluster_id,
        started_at AS s,
        CASE WHEN latency_ms > 0 THEN ended_at ELSE started_at END AS e,
        latency_ms,
        cache_hit_input_tokens + cache_miss_input_tokens + output_tokens + reasoning_tokens AS tokens
    FROM scoped.requests_near_days
    WHERE route = 'self_hosted' AND cluster_id IS NOT NULL
),
window_pieces AS (
    -- a span within one 5-minute window stays whole; a longer one is cut into the windows it overlaps
    SELECT cluster_id, time_bucket(INTERVAL 5 MINUTE, s) AS window_start, CAST(tokens AS DOUBLE) AS tokens, latency_ms
    FROM spans
    WHERE time_bucket(INTERVAL 5 MINUTE, s) = time_bucket(INTERVAL 5 MINUTE, e - INTERVAL 1 MICROSECOND) OR e = s
    UNION ALL
    SELECT
        cluster_id,
        w AS window_start,
        tokens * date_diff('millisecond', greatest(s, w), least(e, w + INTERVAL 5 MINUTE)) / latency_ms,
        latency_ms
    FROM (
        SELECT *, unnest(generate_series(time_bucket(INTERVAL 5 MINUTE, s), e - INTERVAL 1 MICROSECOND, INTERVAL 5 MINUTE)) AS w
        FROM spans
        WHERE e > s AND time_bucket(INTERVAL 5 MINUTE, s) < time_bucket(INTERVAL 5 MINUTE, e - INTERVAL 1 MICROSECOND)
    ) AS windows_of_span
),
windows AS (
    -- 5-minute windows: the tokens served in them, the requests running in them, and those within the SLO
    SELECT
        p.cluster_id,
        CAST(p.window_start AS DATE) AS day,
        CAST(date_trunc('month', p.window_start) AS DATE) AS month,
        p.window_start,
        sum(p.tokens) AS tokens,
        count(*) AS n,
        count(*) FILTER (WHERE s.slo_ms_self_hosted IS NULL OR p.latency_ms <= s.slo_ms_self_hosted) AS n_within_slo
    FROM window_pieces AS p
    CROSS JOIN settings AS s
    GROUP BY ALL
),
observed AS (
    -- the day's best window within the SLO, and when it began (the earliest of equals: the nodes in service then
    -- divide it); p95 within the SLO <=> the quantile_disc position of p95 (quantile_position) is within the SLO,
    -- i.e. at least that many of the window's requests are
    SELECT cluster_id, day, month, observed_tokens_per_second, window_start AS observed_window_start
    FROM (
        SELECT
            cluster_id,
            day,
            month,
            window_start,
            CAST(tokens / 300 AS DECIMAL(38, 3)) AS observed_tokens_per_second,
            row_number() OVER (
                PARTITION BY cluster_id, day ORDER BY CAST(tokens / 300 AS DECIMAL(38, 3)) DESC, window_start ASC
            ) AS rank_in_day
        FROM windows
        WHERE n_within_slo >= quantile_position(n, 0.95)
    ) AS ranked
    WHERE rank_in_day = 1
)
-- an accepted attempt is one of the cluster's self-hosted requests of its day: its cluster and day have a request_time row
SELECT
    rt.cluster_id,
    rt.day,
    rt.month,
    rt.requests,
    rt.request_ms,
    coalesce(a.accepted_ms, 0) AS accepted_attempt_request_ms,
    rt.tokens_served,
    CAST(coalesce(w.accepted_tokens, 0) AS BIGINT) AS accepted_tokens,
    p.peak_hour_requests,
    CAST(p.peak_hour_tokens AS BIGINT) AS peak_hour_tokens,
    p.peak_hours,
    o.observed_tokens_per_second,
    o.observed_window_start,
    a.accepted_latencies
FROM request_time AS rt
JOIN peak AS p USING (cluster_id, day, month)
LEFT JOIN observed AS o USING (cluster_id, day, month)
LEFT JOIN accepted_time AS a USING (cluster_id, day)
LEFT JOIN accepted_work AS w USING (cluster_id, day)
