-- grain: one row per task (that has at least one request)
-- materialized: table
-- published: no
-- unique_key: task_id
-- description: Each task's final outcome. The final decision is the latest outcomes row; its accepted attempt is its request_id, else the task's last 'ok' attempt. Without an outcomes row the request log's accepted column decides (the last attempt judged accepted). An accepted attempt slower than its route's SLO is a latency violation and does not count as accepted. The task belongs to the month and route of its accepted attempt, else of its last attempt.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
-- one pass over the attempts: the latest attempt, the latest 'ok' one and the latest judged accepted one
-- ("latest" = started_at, then attempt, then request_id: the same order everywhere)
per_task AS (
    SELECT
        task_id,
        count(*) AS attempts,
        count(accepted) AS judged_attempts,
        arg_max(request_id, struct_pack(s := started_at, a := coalesce(attempt, -2147483648), r := request_id))
            AS last_request_id,
        arg_max(request_id, struct_pack(s := started_at, a := coalesce(attempt, -2147483648), r := request_id))
            FILTER (WHERE status = 'ok') AS last_ok_request_id,
        arg_max(request_id, struct_pack(s := started_at, a := coalesce(attempt, -2147483648), r := request_id))
            FILTER (WHERE accepted) AS log_accepted_request_id
    FROM intermediate.int_requests_priced
    GROUP BY task_id
),
final_decision AS (
    SELECT * FROM staging.stg_ledger__outcomes
    QUALIFY row_number() OVER (PARTITION BY task_id ORDER BY decided_at DESC) = 1
),
review AS (
    SELECT task_id, sum(review_minutes) AS review_minutes FROM staging.stg_ledger__outcomes GROUP BY task_id
),
decided AS (
    SELECT
        p.task_id,
        p.attempts,
        p.last_request_id,
        CASE
            WHEN fd.task_id IS NOT NULL THEN 'outcomes'
            WHEN p.judged_attempts > 0 THEN 'request_log'
            ELSE 'undecided'
        END AS outcome_source,
        CASE
            WHEN fd.task_id IS NOT NULL THEN fd.accepted
            ELSE p.log_accepted_request_id IS NOT NULL
        END AS judged_accepted,
        CASE
            WHEN fd.task_id IS NOT NULL THEN CASE WHEN fd.accepted THEN coalesce(fd.request_id, p.last_ok_request_id) END
            ELSE p.log_accepted_request_id
        END AS accepted_request_id,
        coalesce(rv.review_minutes, 0) AS review_minutes
    FROM per_task AS p
    LEFT JOIN final_decision AS fd USING (task_id)
    LEFT JOIN review AS rv USING (task_id)
),
judged AS (
    SELECT
        d.*,
        acc.request_id AS acc_request_id,
        acc.route AS acc_route,
        acc.month AS acc_month,
        acc.latency_ms AS acc_latency_ms,
        la.route AS last_route,
        la.month AS last_month,
        CASE acc.route WHEN 'api' THEN s.slo_ms_api WHEN 'self_hosted' THEN s.slo_ms_self_hosted END AS slo_ms,
        s.review_rate_per_hour_usd
    FROM decided AS d
    CROSS JOIN settings AS s
    JOIN intermediate.int_requests_priced AS la ON la.request_id = d.last_request_id
    LEFT JOIN intermediate.int_requests_priced AS acc
        ON acc.request_id = d.accepted_request_id AND acc.task_id = d.task_id
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
    coalesce(acc_latency_ms > slo_ms, false) AS latency_violation,
    acc_request_id IS NOT NULL AND NOT coalesce(acc_latency_ms > slo_ms, false) AS accepted,
    review_minutes,
    money_div(review_minutes * review_rate_per_hour_usd, 60) AS review_cost_usd
FROM judged
