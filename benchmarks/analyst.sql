-- The analyst's script: benchmark peer (a') of `costledger benchmark`.
--
-- What a user would write instead of costledger: one DuckDB SQL file that computes the contract marts
-- (route cost, self-hosted cost, utilisation, break-even, reconciliation) straight from the landing files of
-- `costledger sample --format parquet` (requests as Parquet, one file per day; prices, cluster charges,
-- hardware and opex as CSV). No validation, no quarantine, no lake, no crash safety, no incremental state:
-- every run recomputes everything. Settings are costledger's defaults (reference API moonshot / kimi-k3,
-- no latency SLO, no review cost); the benchmark data has no invoices, outcomes or load tests.
--
-- Run:  duckdb peer.duckdb -c "SET VARIABLE landing = '/path/to/landing'" -f benchmarks/analyst.sql
-- (the benchmark runs it through the duckdb Python package; tests/test_benchmark_peers.py checks its
-- marts equal costledger's to the cent).

CREATE OR REPLACE TABLE prices AS
SELECT
    provider,
    model,
    CAST(effective_from AS TIMESTAMP) AS valid_from,
    coalesce(
        lead(CAST(effective_from AS TIMESTAMP)) OVER (PARTITION BY provider, model ORDER BY effective_from),
        TIMESTAMP '9999-12-31'
    ) AS valid_until,
    CAST(cache_hit_input_per_million AS DECIMAL(18, 6)) AS p_hit,
    CAST(cache_miss_input_per_million AS DECIMAL(18, 6)) AS p_miss,
    CAST(output_per_million AS DECIMAL(18, 6)) AS p_out
FROM read_csv(getvariable('landing') || '/prices/*.csv', all_varchar = TRUE);

-- every request priced: api rows at their provider's price, self-hosted rows at the reference API's
CREATE OR REPLACE TABLE priced AS
SELECT
    r.request_id,
    r.task_id,
    r.started_at,
    r.started_at + to_milliseconds(r.latency_ms) AS ended_at,
    CAST(date_trunc('month', r.started_at) AS DATE) AS month,
    r.route,
    r.provider,
    r.cluster_id,
    r.cache_hit_input_tokens AS hit,
    r.cache_miss_input_tokens AS miss,
    r.output_tokens AS output,
    r.reasoning_tokens AS reasoning,
    r.latency_ms,
    r.accepted,
    CAST(
        (r.cache_hit_input_tokens * p.p_hit + r.cache_miss_input_tokens * p.p_miss
            + (r.output_tokens + r.reasoning_tokens) * p.p_out) * CAST(0.000001 AS DECIMAL(7, 6))
        AS DECIMAL(38, 12)
    ) AS cost
FROM read_parquet(getvariable('landing') || '/requests/*.parquet') AS r
LEFT JOIN prices AS p
    ON p.provider = CASE WHEN r.route = 'api' THEN r.provider ELSE 'moonshot' END
    AND p.model = CASE WHEN r.route = 'api' THEN r.model ELSE 'kimi-k3' END
    AND r.started_at >= p.valid_from AND r.started_at < p.valid_until;

-- each task: its last attempt judged accepted (else its last attempt) gives its month and route
CREATE OR REPLACE TABLE tasks AS
SELECT
    task_id,
    arg_max(request_id, (started_at, request_id)) FILTER (WHERE accepted) AS accepted_request_id,
    coalesce(
        arg_max(route, (started_at, request_id)) FILTER (WHERE accepted), arg_max(route, (started_at, request_id))
    ) AS route,
    coalesce(
        arg_max(month, (started_at, request_id)) FILTER (WHERE accepted), arg_max(month, (started_at, request_id))
    ) AS month,
    arg_max(cost, (started_at, request_id)) FILTER (WHERE accepted) AS accepted_cost
FROM priced
GROUP BY task_id;

CREATE OR REPLACE TABLE months AS
WITH activity AS (
    SELECT DISTINCT month AS m FROM priced
    UNION ALL
    SELECT CAST(date_trunc('month', CAST(charge_start AS TIMESTAMP)) AS DATE)
    FROM read_csv(getvariable('landing') || '/cluster-charges/*.csv', all_varchar = TRUE)
    UNION ALL
    SELECT CAST(date_trunc('month', CAST(charge_end AS TIMESTAMP) - INTERVAL 1 MICROSECOND) AS DATE)
    FROM read_csv(getvariable('landing') || '/cluster-charges/*.csv', all_varchar = TRUE)
    UNION ALL
    SELECT CAST(month || '-01' AS DATE) FROM read_csv(getvariable('landing') || '/opex/*.csv', all_varchar = TRUE)
)
SELECT
    CAST(g.s AS DATE) AS month,
    CAST(g.s AS TIMESTAMP) AS month_start,
    CAST(g.s + INTERVAL 1 MONTH AS TIMESTAMP) AS month_end
FROM (SELECT min(m) AS lo, max(m) AS hi FROM activity) AS b
CROSS JOIN generate_series(CAST(b.lo AS TIMESTAMP), CAST(b.hi AS TIMESTAMP), INTERVAL 1 MONTH) AS g (s);

-- self-hosted cost: charges split across months by seconds, straight-line amortisation, operating costs
CREATE OR REPLACE TABLE self_hosted_cost AS
WITH charges AS (
    SELECT
        cluster_id,
        kind,
        CAST(charge_start AS TIMESTAMP) AS s,
        CAST(charge_end AS TIMESTAMP) AS e,
        CAST(amount AS DECIMAL(38, 12)) AS amount
    FROM read_csv(getvariable('landing') || '/cluster-charges/*.csv', all_varchar = TRUE)
),
hardware AS (
    SELECT
        cluster_id,
        CAST(purchase_price AS DECIMAL(38, 12)) AS price,
        CAST(life_months AS INTEGER) AS life,
        CAST(date_trunc('month', CAST(in_service_date AS DATE)) AS DATE) AS first_month
    FROM read_csv(getvariable('landing') || '/hardware/*.csv', all_varchar = TRUE)
)
SELECT
    m.month,
    c.cluster_id,
    CASE c.kind WHEN 'reserved' THEN 'committed' ELSE 'avoidable' END AS cost_class,
    CAST(c.amount * date_diff('second', greatest(c.s, m.month_start), least(c.e, m.month_end))
        / date_diff('second', c.s, c.e) AS DECIMAL(38, 12)) AS amount
FROM charges AS c
JOIN months AS m ON c.s < m.month_end AND c.e > m.month_start
UNION ALL
SELECT m.month, h.cluster_id, 'committed', CAST(h.price / h.life AS DECIMAL(38, 12))
FROM hardware AS h
JOIN months AS m ON m.month >= h.first_month AND date_diff('month', h.first_month, m.month) < h.life
UNION ALL
SELECT CAST(o.month || '-01' AS DATE), o.cluster_id, 'operating', CAST(o.amount AS DECIMAL(38, 12))
FROM read_csv(getvariable('landing') || '/opex/*.csv', all_varchar = TRUE) AS o;

CREATE OR REPLACE TABLE route_cost AS
WITH volume AS (
    SELECT
        month,
        route,
        count(*) AS requests,
        count(DISTINCT task_id) AS tasks,
        sum(hit) AS cache_hit_input_tokens,
        sum(miss) AS cache_miss_input_tokens,
        sum(output) AS output_tokens,
        sum(reasoning) AS reasoning_tokens,
        sum(cost) FILTER (WHERE route = 'api') AS metered_usd,
        quantile_disc(latency_ms, 0.5) AS p50_latency_ms,
        quantile_disc(latency_ms, 0.95) AS p95_latency_ms
    FROM priced
    GROUP BY month, route
),
accepted AS (
    SELECT month, route, count(*) AS accepted_tasks, sum(accepted_cost) AS accepted_cost
    FROM tasks
    WHERE accepted_request_id IS NOT NULL
    GROUP BY month, route
),
spend AS (SELECT month, sum(amount) AS self_hosted_usd FROM self_hosted_cost GROUP BY month)
SELECT
    m.month,
    r.route,
    coalesce(v.requests, 0) AS requests,
    coalesce(v.tasks, 0) AS tasks,
    coalesce(a.accepted_tasks, 0) AS accepted_tasks,
    coalesce(v.cache_hit_input_tokens, 0) AS cache_hit_input_tokens,
    coalesce(v.cache_miss_input_tokens, 0) AS cache_miss_input_tokens,
    coalesce(v.output_tokens, 0) AS output_tokens,
    coalesce(v.reasoning_tokens, 0) AS reasoning_tokens,
    CASE r.route WHEN 'api' THEN coalesce(v.metered_usd, 0) ELSE coalesce(s.self_hosted_usd, 0) END AS cost_usd,
    CASE r.route WHEN 'api' THEN coalesce(v.metered_usd, 0) ELSE coalesce(s.self_hosted_usd, 0) END
    / nullif(a.accepted_tasks, 0) AS cost_per_accepted_task_usd,
    v.p50_latency_ms,
    v.p95_latency_ms,
    a.accepted_cost
FROM months AS m
CROSS JOIN (VALUES ('api'), ('self_hosted')) AS r (route)
LEFT JOIN volume AS v ON v.month = m.month AND v.route = r.route
LEFT JOIN accepted AS a ON a.month = m.month AND a.route = r.route
LEFT JOIN spend AS s ON s.month = m.month;

-- utilisation: provisioned time (charges and hardware in service, overlaps once), busy time (the union of
-- self-hosted request intervals), productive = busy x the accepted attempts' share of request time
CREATE OR REPLACE TABLE utilisation AS
WITH provisioned_intervals AS (
    SELECT cluster_id, CAST(charge_start AS TIMESTAMP) AS s, CAST(charge_end AS TIMESTAMP) AS e
    FROM read_csv(getvariable('landing') || '/cluster-charges/*.csv', all_varchar = TRUE)
    UNION ALL
    SELECT cluster_id, CAST(in_service_date AS TIMESTAMP), TIMESTAMP '9999-12-31'
    FROM read_csv(getvariable('landing') || '/hardware/*.csv', all_varchar = TRUE)
),
busy_intervals AS (
    SELECT cluster_id, started_at AS s, ended_at AS e
    FROM priced
    WHERE route = 'self_hosted' AND latency_ms > 0
),
islands AS (
    SELECT kind, cluster_id, min(s) AS s, max(e) AS e
    FROM (
        SELECT
            *,
            sum(CASE WHEN prev_end IS NULL OR s > prev_end THEN 1 ELSE 0 END)
                OVER (PARTITION BY kind, cluster_id ORDER BY s, e) AS island
        FROM (
            SELECT
                *,
                max(e) OVER (PARTITION BY kind, cluster_id ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
                    AS prev_end
            FROM (
                SELECT 'provisioned' AS kind, * FROM provisioned_intervals
                UNION ALL
                SELECT 'busy', * FROM busy_intervals
            )
        )
    )
    GROUP BY kind, cluster_id, island
),
hours AS (
    SELECT
        m.month,
        i.cluster_id,
        sum(date_diff('millisecond', greatest(i.s, m.month_start), least(i.e, m.month_end)))
            FILTER (WHERE i.kind = 'provisioned') AS provisioned_ms,
        coalesce(sum(date_diff('millisecond', greatest(i.s, m.month_start), least(i.e, m.month_end)))
            FILTER (WHERE i.kind = 'busy'), 0) AS busy_ms
    FROM islands AS i
    JOIN months AS m ON i.s < m.month_end AND i.e > m.month_start
    GROUP BY m.month, i.cluster_id
),
request_time AS (
    SELECT
        p.month,
        p.cluster_id,
        sum(p.latency_ms) AS request_ms,
        coalesce(sum(p.latency_ms) FILTER (WHERE t.task_id IS NOT NULL), 0) AS accepted_ms
    FROM priced AS p
    LEFT JOIN tasks AS t ON t.accepted_request_id = p.request_id
    WHERE p.route = 'self_hosted'
    GROUP BY p.month, p.cluster_id
)
SELECT
    h.month,
    h.cluster_id,
    h.provisioned_ms / 3600000 AS provisioned_hours,
    h.busy_ms / 3600000 AS busy_hours,
    h.busy_ms * coalesce(r.accepted_ms / r.request_ms, 0) / 3600000 AS in_flight_accepted_hours,
    h.busy_ms / h.provisioned_ms AS in_flight_share
FROM hours AS h
LEFT JOIN request_time AS r USING (month, cluster_id);

CREATE OR REPLACE TABLE reconciliation AS
SELECT
    month,
    provider,
    NULL AS invoiced_usd,
    sum(cost) AS metered_usd,
    'missing_invoice' AS status
FROM priced
WHERE route = 'api'
GROUP BY month, provider;

-- break-even: fixed cost F over what each accepted task saves, C - V (no review cost: V = 0)
CREATE OR REPLACE TABLE break_even AS
WITH r AS (
    SELECT
        month,
        max(cost_usd) FILTER (WHERE route = 'self_hosted') AS self_hosted_cost_usd,
        max(accepted_tasks) FILTER (WHERE route = 'self_hosted') AS sh_accepted,
        max(requests) FILTER (WHERE route = 'self_hosted') AS sh_requests,
        max(accepted_cost) FILTER (WHERE route = 'self_hosted') AS sh_accepted_cost,
        max(accepted_tasks) FILTER (WHERE route = 'api') AS api_accepted,
        max(accepted_cost) FILTER (WHERE route = 'api') AS api_accepted_cost,
        max(cost_usd) FILTER (WHERE route = 'api') AS api_run_rate
    FROM route_cost
    GROUP BY month
),
classes AS (
    SELECT
        month,
        sum(amount) FILTER (WHERE cost_class = 'committed') AS committed_cost_usd,
        coalesce(sum(amount) FILTER (WHERE cost_class = 'avoidable'), 0) AS avoidable_cost_usd,
        coalesce(sum(amount) FILTER (WHERE cost_class = 'operating'), 0) AS operating_cost_usd
    FROM self_hosted_cost
    GROUP BY month
),
-- the API's waste factor: the reference provider's (moonshot's) attempts / its accepted attempts, from the month if it
-- has 200 accepted tasks, else pooled with up to 3 months before until it has, else every provider of the month, else 1
ref_attempts AS (
    SELECT month, sum(cost) AS attempts_cost FROM priced WHERE route = 'api' AND provider = 'moonshot' GROUP BY month
),
ref_accepted AS (
    SELECT t.month, count(*) AS n, sum(t.accepted_cost) AS accepted_cost
    FROM tasks AS t
    JOIN priced AS p ON p.request_id = t.accepted_request_id AND p.task_id = t.task_id
    WHERE t.route = 'api' AND p.provider = 'moonshot'
    GROUP BY t.month
),
ref AS (
    SELECT r.month, coalesce(b.n, 0) AS n, a.attempts_cost, b.accepted_cost
    FROM r
    LEFT JOIN ref_attempts AS a USING (month)
    LEFT JOIN ref_accepted AS b USING (month)
),
pooled AS (
    SELECT
        r.month,
        k.back,
        coalesce(sum(p.n), 0) AS n,
        sum(p.attempts_cost) / sum(p.accepted_cost) AS factor
    FROM r
    CROSS JOIN range(4) AS k (back)
    LEFT JOIN ref AS p ON p.month BETWEEN CAST(r.month - to_months(CAST(k.back AS INTEGER)) AS DATE) AND r.month
    GROUP BY r.month, k.back
),
own AS (
    SELECT month, arg_min(factor, back) AS factor FROM pooled WHERE n >= 200 AND factor IS NOT NULL GROUP BY month
),
waste AS (
    SELECT r.month, coalesce(o.factor, CASE WHEN r.api_accepted >= 200 THEN r.api_run_rate / r.api_accepted_cost END)
        AS factor
    FROM r
    LEFT JOIN own AS o USING (month)
),
c AS (
    SELECT
        r.*,
        k.committed_cost_usd,
        k.avoidable_cost_usd,
        k.committed_cost_usd + k.operating_cost_usd + k.avoidable_cost_usd AS fixed_cost_usd,
        coalesce(w.factor, 1) AS api_overhead_factor,
        r.api_run_rate / nullif(r.api_accepted, 0) AS measured
    FROM r
    LEFT JOIN classes AS k USING (month)
    LEFT JOIN waste AS w USING (month)
),
chosen AS (
    SELECT
        *,
        coalesce(sh_accepted_cost / nullif(sh_accepted, 0) * api_overhead_factor, measured) AS api_cost_per_accepted_task_usd,
        CASE WHEN sh_accepted > 0 THEN 'equivalent' WHEN measured IS NOT NULL THEN 'measured' END AS api_cost_source
    FROM c
)
SELECT
    month,
    self_hosted_cost_usd,
    fixed_cost_usd,
    committed_cost_usd,
    avoidable_cost_usd,
    api_cost_per_accepted_task_usd,
    api_cost_source,
    api_overhead_factor,
    fixed_cost_usd / api_cost_per_accepted_task_usd AS break_even_accepted_tasks,
    sh_accepted AS self_hosted_accepted_tasks,
    CASE
        WHEN self_hosted_cost_usd = 0 AND sh_requests = 0 THEN 'no_self_hosted_route'
        WHEN api_cost_per_accepted_task_usd IS NULL THEN 'no_api_price'
        WHEN api_cost_per_accepted_task_usd <= 0 THEN 'never_breaks_even'
        WHEN sh_accepted > 0 AND sh_accepted >= fixed_cost_usd / api_cost_per_accepted_task_usd
            THEN 'self_hosting_cheaper'
        ELSE 'api_cheaper'
    END AS verdict
FROM chosen;
