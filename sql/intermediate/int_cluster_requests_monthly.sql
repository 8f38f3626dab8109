-- grain: one row per cluster x month (with self-hosted requests)
-- materialized: table
-- unique_key: cluster_id, month
-- description: Each cluster's self-hosted requests in a month: count, request time (sum of latencies), the part of it that belongs to accepted attempts (a failed retry of a task that was later accepted is not among them), the requests started in the busiest clock hour, the tokens it served (input and output, all requests) and those of its accepted attempts, the tokens started in its busiest clock hour, the observed capacity: the highest tokens per second in any 5-minute window (each request's tokens spread over the time it ran) whose p95 latency was within the self-hosted SLO (every window when there is no SLO), and the accepted attempts' exact p95 latency (DuckDB's quantile_disc: the ceil(0.95 x n)-th smallest, from the days' latency histograms). Observed capacity is a lower bound: the cluster did at least this much at the SLO. The sums and maxima of its days (int_cluster_requests_daily): hours and 5-minute windows never cross midnight.
-- column cluster_id VARCHAR: The cluster that served the requests.
-- column month DATE
-- column requests BIGINT: The cluster's self-hosted requests started in the month.
-- column request_ms HUGEINT: Their latencies added up (overlapping requests each counted: request time, not busy time).
-- column accepted_attempt_request_ms HUGEINT: The latencies of the accepted attempts among them (a failed retry of a task later accepted is not one).
-- column tokens_served BIGINT: Input (cache-hit and cache-miss), output and reasoning tokens of the month's requests, every attempt.
-- column accepted_tokens BIGINT: The same tokens of the accepted attempts alone.
-- column peak_hour_requests BIGINT: The requests started in the month's busiest clock hour (by requests).
-- column peak_hour_tokens BIGINT: The tokens of the requests started in the month's busiest clock hour (by tokens).
-- column observed_tokens_per_second DECIMAL(38,3): Observed capacity, a lower bound: the most tokens per second the cluster served in any 5-minute window of the month whose p95 latency was within the setting slo.self_hosted_ms (every window when it is not set); NULL when none was.
-- column accepted_p95_latency_ms BIGINT: The accepted attempts' 95th-percentile latency, exact: the ceil(0.95 x n)-th smallest of their known latencies (NULL when none is known).
-- column observed_window_start TIMESTAMP: When the window of the observed capacity began (UTC; of windows as busy, the earliest): the nodes in service then divide it into a capacity per node.
WITH histogram AS (
    SELECT cluster_id, month, struct_extract(h, 'latency_ms') AS latency_ms, sum(struct_extract(h, 'n')) AS n
    FROM (SELECT cluster_id, month, unnest(accepted_latencies) AS h FROM intermediate.int_cluster_requests_daily) AS days
    GROUP BY cluster_id, month, struct_extract(h, 'latency_ms')
),
cumulative AS (
    SELECT
        *,
        sum(n) OVER (PARTITION BY cluster_id, month ORDER BY latency_ms ROWS UNBOUNDED PRECEDING) AS upto,
        sum(n) OVER (PARTITION BY cluster_id, month) AS total
    FROM histogram
),
accepted_p95 AS (
    -- the quantile_disc position of the 95th percentile among n values (quantile_position)
    SELECT
        cluster_id,
        month,
        min(latency_ms) FILTER (WHERE upto >= quantile_position(total, 0.95)) AS accepted_p95_latency_ms
    FROM cumulative
    GROUP BY cluster_id, month
),
best_window AS (
    -- when the month's best window began (of days as busy, the earliest)
    SELECT cluster_id, month, observed_window_start
    FROM (
        SELECT
            cluster_id,
            month,
            observed_window_start,
            row_number() OVER (
                PARTITION BY cluster_id, month ORDER BY observed_tokens_per_second DESC, observed_window_start ASC
            ) AS rank_in_month
        FROM intermediate.int_cluster_requests_daily
        WHERE observed_tokens_per_second IS NOT NULL
    ) AS ranked
    WHERE rank_in_month = 1
),
days AS (
    SELECT
        cluster_id,
        month,
        CAST(sum(requests) AS BIGINT) AS requests,
        sum(request_ms) AS request_ms,
        sum(accepted_attempt_request_ms) AS accepted_attempt_request_ms,
        CAST(sum(tokens_served) AS BIGINT) AS tokens_served,
        CAST(sum(accepted_tokens) AS BIGINT) AS accepted_tokens,
        max(peak_hour_requests) AS peak_hour_requests,
        max(peak_hour_tokens) AS peak_hour_tokens,
        max(observed_tokens_per_second) AS observed_tokens_per_second
    FROM intermediate.int_cluster_requests_daily
    GROUP BY cluster_id, month
)
SELECT d.*, p.accepted_p95_latency_ms, b.observed_window_start
FROM days AS d
LEFT JOIN accepted_p95 AS p USING (cluster_id, month)
LEFT JOIN best_window AS b USING (cluster_id, month)
