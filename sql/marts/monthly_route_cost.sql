-- grain: one row per month x route
-- materialized: table
-- unique_key: month, route
-- description: Each route's month: volume, tokens, cost and cost per accepted task. API cost is the invoiced total where the provider's invoice is loaded, else the metered cost; self-hosted cost is marts.monthly_self_hosted_cost. Both include every failed, retried and rejected attempt and the human review cost of the route's tasks.
-- column month DATE: First day of the month (UTC).
-- column route VARCHAR: 'api' (hosted, per token) or 'self_hosted' (own cluster, per hour).
-- column requests BIGINT: Requests (attempts) started in the month on the route, whatever their status.
-- column tasks BIGINT: Distinct tasks with at least one attempt on the route in the month.
-- column accepted_tasks BIGINT: Tasks whose accepted attempt is on the route in the month and within the route's latency SLO.
-- column cache_hit_input_tokens HUGEINT: Prompt tokens served from a prefix cache.
-- column cache_miss_input_tokens HUGEINT: Prompt tokens not served from cache.
-- column output_tokens HUGEINT: Visible output tokens, excluding reasoning.
-- column reasoning_tokens HUGEINT: Hidden reasoning tokens (billed at the output rate).
-- column cache_hit_rate DOUBLE: cache_hit_input_tokens / all input tokens; NULL without input tokens.
-- column cost_usd DECIMAL(38,12): The route's monthly cost in USD (exact DECIMAL), including review cost.
-- column cost_basis VARCHAR: api: 'invoice' (every provider's invoice loaded), 'metered' (none), 'mixed' (some). self_hosted: 'cluster_billing'.
-- column cost_per_accepted_task_usd DECIMAL(38,12): cost_usd / accepted_tasks, rounded to 1e-12; NULL when no task was accepted.
-- column p50_latency_ms BIGINT: Median request latency in ms (the route-month's requests with a latency).
-- column p95_latency_ms BIGINT: 95th percentile request latency in ms.
-- column latency_violations BIGINT: Tasks judged accepted whose accepted attempt was slower than the route's SLO (not counted as accepted).
-- column review_cost_usd DECIMAL(38,12): Human review cost included in cost_usd (review minutes x review rate).
-- column unpriced_requests BIGINT: API requests with no price for their provider, model and time (excluded from metered cost, never priced at 0).
-- column acceptance_rate DOUBLE: accepted_tasks / tasks; NULL without tasks.
-- column retry_rate DOUBLE: extra attempts per task: requests / tasks - 1; NULL without tasks.
-- column latency_unknown BIGINT: Requests logged without a latency (api response bodies carry none): left out of the percentiles and the SLO check.
-- column cache_write_5m_input_tokens HUGEINT: Prompt tokens written to a provider's cache with a 5-minute lifetime.
-- column cache_write_1h_input_tokens HUGEINT: Prompt tokens written to a provider's cache with a 1-hour lifetime.
-- column web_search_calls HUGEINT: Web searches the route's requests ran (billed per call).
WITH routes AS (
    SELECT m.month, r.route
    FROM intermediate.int_months_spined AS m
    CROSS JOIN (VALUES ('api'), ('self_hosted')) AS r (route)
),
volume AS (
    SELECT * FROM intermediate.int_route_volume_monthly
),
outcomes AS (
    SELECT * FROM intermediate.int_task_outcomes_monthly
),
api_spend AS (
    SELECT
        month,
        'api' AS route,
        sum(CASE WHEN has_invoice THEN invoiced_total_usd ELSE metered_usd END) AS spend_usd,
        CASE
            WHEN bool_and(has_invoice) THEN 'invoice'
            WHEN NOT bool_or(has_invoice) THEN 'metered'
            ELSE 'mixed'
        END AS cost_basis
    FROM intermediate.int_api_provider_monthly
    GROUP BY month
),
self_hosted_spend AS (
    SELECT month, 'self_hosted' AS route, sum(amount_usd) AS spend_usd, 'cluster_billing' AS cost_basis
    FROM marts.monthly_self_hosted_cost
    GROUP BY month
),
spend AS (
    SELECT * FROM api_spend
    UNION ALL
    SELECT * FROM self_hosted_spend
),
costed AS (
    SELECT
        r.month,
        r.route,
        coalesce(v.requests, 0) AS requests,
        coalesce(v.tasks, 0) AS tasks,
        coalesce(o.accepted_tasks, 0) AS accepted_tasks,
        coalesce(v.cache_hit_input_tokens, 0) AS cache_hit_input_tokens,
        coalesce(v.cache_miss_input_tokens, 0) AS cache_miss_input_tokens,
        coalesce(v.output_tokens, 0) AS output_tokens,
        coalesce(v.reasoning_tokens, 0) AS reasoning_tokens,
        CAST(coalesce(s.spend_usd, 0) + coalesce(o.review_cost_usd, 0) AS DECIMAL(38, 12)) AS cost_usd,
        coalesce(s.cost_basis, CASE r.route WHEN 'api' THEN 'metered' ELSE 'cluster_billing' END) AS cost_basis,
        v.p50_latency_ms,
        v.p95_latency_ms,
        coalesce(o.latency_violations, 0) AS latency_violations,
        CAST(coalesce(o.review_cost_usd, 0) AS DECIMAL(38, 12)) AS review_cost_usd,
        coalesce(v.unpriced_requests, 0) AS unpriced_requests,
        coalesce(v.latency_unknown, 0) AS latency_unknown,
        coalesce(v.cache_write_5m_input_tokens, 0) AS cache_write_5m_input_tokens,
        coalesce(v.cache_write_1h_input_tokens, 0) AS cache_write_1h_input_tokens,
        coalesce(v.web_search_calls, 0) AS web_search_calls
    FROM routes AS r
    LEFT JOIN volume AS v USING (month, route)
    LEFT JOIN outcomes AS o USING (month, route)
    LEFT JOIN spend AS s USING (month, route)
)
SELECT
    month,
    route,
    requests,
    tasks,
    accepted_tasks,
    cache_hit_input_tokens,
    cache_miss_input_tokens,
    output_tokens,
    reasoning_tokens,
    CASE WHEN cache_hit_input_tokens + cache_miss_input_tokens > 0
        THEN cache_hit_input_tokens / (cache_hit_input_tokens + cache_miss_input_tokens) END AS cache_hit_rate,
    cost_usd,
    cost_basis,
    money_div(cost_usd, accepted_tasks) AS cost_per_accepted_task_usd,
    p50_latency_ms,
    p95_latency_ms,
    latency_violations,
    review_cost_usd,
    unpriced_requests,
    CASE WHEN tasks > 0 THEN accepted_tasks / tasks END AS acceptance_rate,
    CASE WHEN tasks > 0 THEN requests / tasks - 1 END AS retry_rate,
    latency_unknown,
    cache_write_5m_input_tokens,
    cache_write_1h_input_tokens,
    web_search_calls
FROM costed
