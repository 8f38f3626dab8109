-- grain: one row per task (that has at least one request)
-- materialized: table
-- published: no
-- incremental: keys
-- input requests_of_tasks: intermediate.int_requests_priced (task_id, request_id, attempt, started_at, route, month, latency_ms, status, accepted, metered_cost_usd, api_equivalent_cost_usd, team, workload, cluster_id, cache_hit_input_tokens, cache_miss_input_tokens, cache_write_5m_input_tokens, cache_write_1h_input_tokens, output_tokens, reasoning_tokens)
-- input outcomes_of_tasks: staging.stg_ledger__outcomes
-- unique_key: task_id
-- compression: task_id zstd, accepted_request_id zstd
-- description: Each task's final outcome, and what its accepted attempt alone costs at the API (accepted_attempt_api_cost_usd: the API comparator's like-for-like basis). The final decision is the latest outcomes row; its accepted attempt is its request_id, else the task's last 'ok' attempt. Without an outcomes row the request log's accepted column decides (the last attempt judged accepted). An accepted attempt slower than its route's SLO is a latency violation and does not count as accepted. The task belongs to the month and route of its accepted attempt, else of its last attempt. Every task carries the team and workload of its last attempt ('(none)' when not logged: where its workload's accepted tasks are counted). A task with one attempt also carries that attempt's day (UTC) and team (single_day, single_team: where int_team_usage_daily counts it, without joining every request with its task); an accepted task carries its accepted attempt's day and cluster (accepted_day, accepted_cluster_id: where int_cluster_requests_daily counts its request time, likewise), and its start and tokens (accepted_at, accepted_tokens: the work a task moved between routes brings, in its own hour). Incremental: only the tasks with new attempts or new decisions are recomputed (from all their attempts).
-- settings: review_rate_per_hour_usd, slo_ms_api, slo_ms_self_hosted
-- column task_id VARCHAR: The task.
-- column attempts BIGINT: Its attempts (requests) in the request log.
-- column outcome_source VARCHAR: What decided it: 'outcomes' (its latest outcomes row), 'request_log' (the log's accepted column) or 'undecided' (neither).
-- column judged_accepted BOOLEAN: Judged accepted by that decision, before the latency check.
-- column accepted_request_id VARCHAR: Its accepted attempt: the one the decision names, else its last 'ok' attempt (with the request log deciding, the last attempt judged accepted); NULL when none.
-- column accepted_attempt_missing BOOLEAN: Judged accepted, but the accepted attempt is not in the request log (or the task has no 'ok' attempt).
-- column route VARCHAR: 'api' or 'self_hosted': its accepted attempt's route, else its last attempt's.
-- column month DATE: First day of its month (UTC): its accepted attempt's, else its last attempt's.
-- column accepted_latency_ms BIGINT: The accepted attempt's latency in milliseconds; NULL when not logged.
-- column slo_ms BIGINT: The latency limit of the accepted attempt's route (slo.api_ms or slo.self_hosted_ms); NULL without an accepted attempt or a limit.
-- column latency_violation BOOLEAN: The accepted attempt was slower than slo_ms: the task is not accepted.
-- column accepted BOOLEAN: Accepted: an accepted attempt within its route's latency limit.
-- column review_minutes DECIMAL(38,4): Human review minutes over all its outcomes rows.
-- column review_cost_usd DECIMAL(38,12): review_minutes at the review rate (review.rate_per_hour_usd / 60 a minute).
-- column accepted_attempt_api_cost_usd DECIMAL(38,12): What the accepted attempt alone costs at the API: its own provider's price on the API, the reference API price on the cluster; NULL when not accepted or unpriced.
-- column single_day DATE: The day (UTC) of its one attempt; NULL when it has several.
-- column single_team VARCHAR: The team of its one attempt ('(none)' when not logged); NULL when it has several.
-- column team VARCHAR: Its last attempt's team; '(none)' when not logged.
-- column workload VARCHAR: Its last attempt's workload; '(none)' when not logged.
-- column accepted_day DATE: The accepted attempt's day (UTC), for an accepted task.
-- column accepted_cluster_id VARCHAR: The cluster the accepted attempt ran on, for an accepted task on the cluster.
-- column accepted_at TIMESTAMP: When the accepted attempt started, for an accepted task.
-- column accepted_tokens BIGINT: The accepted attempt's tokens (input including cache hits and writes, output, reasoning), for an accepted task.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
-- per task: the latest attempt, the latest 'ok' one and the latest judged accepted one, with what is needed of them
-- ("latest" = started_at, then attempt, then request_id: the same order everywhere). Most tasks have one attempt,
-- which is all three at once; only tasks with retries need the (costly) ordered aggregates.
retried AS (
    -- the tasks with more than one attempt (a few percent): a small table the single-attempt rows are told from
    SELECT task_id FROM scoped.requests_of_tasks GROUP BY task_id HAVING count(*) > 1
),
attempts AS (
    SELECT
        *,
        cache_hit_input_tokens + cache_miss_input_tokens + cache_write_5m_input_tokens + cache_write_1h_input_tokens
        + output_tokens + reasoning_tokens AS tokens
    FROM scoped.requests_of_tasks
),
single AS (
    SELECT
        r.task_id,
        1 AS attempts,
        CAST(r.started_at AS DATE) AS single_day,
        coalesce(r.team, '(none)') AS single_team,
        CAST(r.accepted IS NOT NULL AS BIGINT) AS judged_attempts,
        struct_pack(
            request_id := r.request_id, route := r.route, month := r.month, team := r.team, workload := r.workload
        ) AS last_attempt,
        CASE WHEN r.status = 'ok'
            THEN struct_pack(request_id := r.request_id, route := r.route, month := r.month, latency_ms := r.latency_ms,
                        api_cost := coalesce(r.metered_cost_usd, r.api_equivalent_cost_usd), cluster_id := r.cluster_id,
                        started_at := r.started_at, tokens := r.tokens) END AS last_ok,
        CASE WHEN r.accepted
            THEN struct_pack(request_id := r.request_id, route := r.route, month := r.month, latency_ms := r.latency_ms,
                        api_cost := coalesce(r.metered_cost_usd, r.api_equivalent_cost_usd), cluster_id := r.cluster_id,
                        started_at := r.started_at, tokens := r.tokens) END AS log_accepted
    FROM attempts AS r
    ANTI JOIN retried AS c ON c.task_id = r.task_id
),
multi AS (
    SELECT
        r.task_id,
        count(*) AS attempts,
        CAST(NULL AS DATE) AS single_day,
        CAST(NULL AS VARCHAR) AS single_team,
        count(r.accepted) AS judged_attempts,
        arg_max(struct_pack(request_id := r.request_id, route := r.route, month := r.month, team := r.team,
                        workload := r.workload),
                struct_pack(s := r.started_at, a := coalesce(r.attempt, -2147483648), r := r.request_id)) AS last_attempt,
        arg_max(struct_pack(request_id := r.request_id, route := r.route, month := r.month, latency_ms := r.latency_ms,
                        api_cost := coalesce(r.metered_cost_usd, r.api_equivalent_cost_usd), cluster_id := r.cluster_id,
                        started_at := r.started_at, tokens := r.tokens),
                struct_pack(s := r.started_at, a := coalesce(r.attempt, -2147483648), r := r.request_id))
            FILTER (WHERE r.status = 'ok') AS last_ok,
        arg_max(struct_pack(request_id := r.request_id, route := r.route, month := r.month, latency_ms := r.latency_ms,
                        api_cost := coalesce(r.metered_cost_usd, r.api_equivalent_cost_usd), cluster_id := r.cluster_id,
                        started_at := r.started_at, tokens := r.tokens),
                struct_pack(s := r.started_at, a := coalesce(r.attempt, -2147483648), r := r.request_id))
            FILTER (WHERE r.accepted) AS log_accepted
    FROM attempts AS r
    SEMI JOIN retried AS c ON c.task_id = r.task_id
    GROUP BY r.task_id
),
picked AS (
    SELECT * FROM single
    UNION ALL
    SELECT * FROM multi
),
final_decision AS (
    SELECT * FROM scoped.outcomes_of_tasks
    QUALIFY row_number() OVER (PARTITION BY task_id ORDER BY decided_at DESC) = 1
),
review AS (
    SELECT task_id, sum(review_minutes) AS review_minutes FROM scoped.outcomes_of_tasks GROUP BY task_id
),
-- the attempt a decision names (request_id), looked up only for decisions that name one
named AS (
    SELECT r.task_id, r.request_id, r.route, r.month, r.latency_ms,
        coalesce(r.metered_cost_usd, r.api_equivalent_cost_usd) AS api_cost, r.cluster_id, r.started_at, r.tokens
    FROM attempts AS r
    SEMI JOIN final_decision AS fd ON fd.task_id = r.task_id AND fd.request_id = r.request_id
),
decided AS (
    SELECT
        p.task_id,
        p.attempts,
        p.single_day,
        p.single_team,
        p.last_attempt,
        CASE
            WHEN fd.task_id IS NOT NULL THEN 'outcomes'
            WHEN p.judged_attempts > 0 THEN 'request_log'
            ELSE 'undecided'
        END AS outcome_source,
        CASE
            WHEN fd.task_id IS NOT NULL THEN fd.accepted
            ELSE p.log_accepted IS NOT NULL
        END AS judged_accepted,
        -- the accepted attempt: the one the decision names, else the task's last 'ok' one; without a decision, the log's
        CASE
            WHEN fd.task_id IS NULL THEN p.log_accepted
            WHEN NOT fd.accepted THEN NULL
            WHEN fd.request_id IS NULL THEN p.last_ok
            WHEN n.request_id IS NOT NULL
                THEN struct_pack(request_id := n.request_id, route := n.route, month := n.month, latency_ms := n.latency_ms,
                                 api_cost := n.api_cost, cluster_id := n.cluster_id, started_at := n.started_at,
                                 tokens := n.tokens)
        END AS acc,
        coalesce(rv.review_minutes, 0) AS review_minutes
    FROM picked AS p
    LEFT JOIN final_decision AS fd USING (task_id)
    LEFT JOIN named AS n ON n.task_id = fd.task_id AND n.request_id = fd.request_id
    LEFT JOIN review AS rv ON rv.task_id = p.task_id
),
judged AS (
    SELECT
        d.*,
        d.acc.request_id AS acc_request_id,
        d.acc.route AS acc_route,
        d.acc.month AS acc_month,
        d.acc.latency_ms AS acc_latency_ms,
        d.acc.api_cost AS acc_api_cost,
        d.acc.cluster_id AS acc_cluster_id,
        CAST(d.acc.started_at AS DATE) AS acc_day,
        d.acc.started_at AS acc_started_at,
        d.acc.tokens AS acc_tokens,
        d.last_attempt.route AS last_route,
        d.last_attempt.month AS last_month,
        coalesce(d.last_attempt.team, '(none)') AS task_team,
        coalesce(d.last_attempt.workload, '(none)') AS task_workload,
        CASE d.acc.route WHEN 'api' THEN s.slo_ms_api WHEN 'self_hosted' THEN s.slo_ms_self_hosted END AS slo_ms,
        s.review_rate_per_hour_usd
    FROM decided AS d
    CROSS JOIN settings AS s
),
settled AS (
    -- accepted: the task has an accepted attempt and it was within its route's SLO (one expression for every column
    -- that holds only for accepted tasks)
    SELECT
        *,
        coalesce(acc_latency_ms > slo_ms, FALSE) AS is_latency_violation,
        acc_request_id IS NOT NULL AND NOT coalesce(acc_latency_ms > slo_ms, FALSE) AS is_accepted
    FROM judged
)
SELECT
    task_id,
    attempts,
    outcome_source,
    judged_accepted,
    acc_request_id AS accepted_request_id,
    -- judged accepted, but the accepted attempt is not in the request log (or the task has no 'ok' attempt)
    judged_accepted AND acc_request_id IS NULL AS accepted_attempt_missing,
    coalesce(acc_route, last_route) AS route,
    coalesce(acc_month, last_month) AS month,
    acc_latency_ms AS accepted_latency_ms,
    slo_ms,
    is_latency_violation AS latency_violation,
    is_accepted AS accepted,
    review_minutes,
    money_div(review_minutes * review_rate_per_hour_usd, 60) AS review_cost_usd,
    -- what the accepted attempt alone costs at the API: its own provider's price (api) or the reference price (self_hosted)
    CASE WHEN is_accepted THEN acc_api_cost END AS accepted_attempt_api_cost_usd,
    single_day,
    single_team,
    task_team AS team,
    task_workload AS workload,
    -- the accepted attempt's day (UTC) and cluster, for accepted tasks only
    CASE WHEN is_accepted THEN acc_day END AS accepted_day,
    CASE WHEN is_accepted THEN acc_cluster_id END AS accepted_cluster_id,
    CASE WHEN is_accepted THEN acc_started_at END AS accepted_at,
    CAST(CASE WHEN is_accepted THEN acc_tokens END AS BIGINT) AS accepted_tokens
FROM settled
