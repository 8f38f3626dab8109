-- grain: one row per month
-- materialized: table
-- unique_key: month
-- settings: api_tax_recoverable, business_control_requirements, reference_api_provider
-- description: What the month's break-even is computed from, derived once: the fixed cost F and its classes (committed, operating, avoidable), the API's price per accepted task C on its basis (the cluster's accepted attempts priced at the reference API x the reference provider's waste factor W x its invoice uplift U, plus the API's review per task: 'equivalent'; else the API route's run-rate and review per accepted task: 'measured'), the cluster's variable cost per accepted task V (review), each route's volumes and the clusters' capacity. The month's break-even and its robustness read it; the break-even itself is the macro break_even_tasks(F, C, V).
WITH routes AS (
    SELECT
        month,
        max(cost_usd) FILTER (WHERE route = 'self_hosted') AS self_hosted_cost_usd,
        max(accepted_tasks) FILTER (WHERE route = 'self_hosted') AS sh_accepted,
        max(requests) FILTER (WHERE route = 'self_hosted') AS sh_requests,
        max(review_cost_usd) FILTER (WHERE route = 'self_hosted') AS sh_review_usd,
        max(cache_hit_input_tokens + cache_miss_input_tokens + output_tokens + reasoning_tokens)
            FILTER (WHERE route = 'self_hosted') AS sh_tokens,
        max(accepted_tasks) FILTER (WHERE route = 'api') AS api_accepted,
        max(review_cost_usd) FILTER (WHERE route = 'api') AS api_review_usd,
        max(cache_hit_input_tokens + cache_miss_input_tokens + output_tokens + reasoning_tokens)
            FILTER (WHERE route = 'api') AS api_tokens
    FROM marts.monthly_route_cost
    GROUP BY month
),
classes AS (
    SELECT
        month,
        CAST(coalesce(sum(amount_usd) FILTER (WHERE cost_class = 'committed'), 0) AS DECIMAL(38, 12)) AS committed_cost_usd,
        CAST(coalesce(sum(amount_usd) FILTER (WHERE cost_class = 'avoidable'), 0) AS DECIMAL(38, 12)) AS avoidable_cost_usd,
        CAST(coalesce(sum(amount_usd) FILTER (WHERE cost_class = 'operating'), 0) AS DECIMAL(38, 12)) AS operating_cost_usd
    FROM marts.monthly_self_hosted_cost
    GROUP BY month
),
settings AS (
    -- the three settings read here, not every column of the settings view
    SELECT
        reference_api_provider,
        api_tax_recoverable,
        list_filter(string_split(business_control_requirements, ','), LAMBDA r: r <> '') AS control_requirements
    FROM staging.stg_ledger__settings
),
-- each provider's credits that recur (its invoices carried credit lines the month before too: a committed-use
-- discount, not a one-off) and its tax the team does not recover (api.tax_recoverable = false) are part of what the
-- API costs to run; one-off credits and recovered tax are left out
providers AS (
    SELECT
        p.month,
        CASE WHEN p.has_invoice THEN p.invoiced_usage_usd ELSE p.metered_usd END AS usage_usd,
        coalesce(p.credits_usd, 0) AS credits_usd,
        coalesce(p.tax_usd, 0) AS tax_usd,
        coalesce(p.credits_usd <> 0 AND before.credits_usd <> 0, FALSE) AS credits_recur,
        NOT s.api_tax_recoverable AS tax_borne
    FROM intermediate.int_api_provider_monthly AS p
    CROSS JOIN settings AS s
    LEFT JOIN intermediate.int_api_provider_monthly AS before
        ON p.provider = before.provider AND CAST(before.month + INTERVAL 1 MONTH AS DATE) = p.month
),
api AS (
    SELECT
        month,
        CAST(sum(usage_usd + CASE WHEN credits_recur THEN credits_usd ELSE 0 END
            + CASE WHEN tax_borne THEN tax_usd ELSE 0 END) AS DECIMAL(38, 12)) AS run_rate_usd,
        CAST(coalesce(sum(credits_usd) FILTER (WHERE NOT credits_recur), 0) AS DECIMAL(38, 12)) AS credits_usd,
        CAST(coalesce(sum(tax_usd) FILTER (WHERE NOT tax_borne), 0) AS DECIMAL(38, 12)) AS tax_usd
    FROM providers
    GROUP BY month
),
-- the invoice uplift U: the reference provider's price beyond list (int_api_uplift_monthly)
uplift AS (
    SELECT
        p.month,
        p.api_invoice_uplift,
        p.uplift_basis,
        coalesce(rc.status IN ('mismatch', 'missing_requests'), FALSE) AS invoice_unreconciled
    FROM intermediate.int_api_uplift_monthly AS p
    JOIN settings AS s ON p.provider = s.reference_api_provider
    LEFT JOIN marts.monthly_reconciliation AS rc USING (month, provider)
),
accepted_attempts AS (
    SELECT
        month,
        max(accepted_attempt_api_cost_usd) FILTER (WHERE route = 'self_hosted') AS sh_accepted_equivalent_usd,
        max(accepted_attempts_priced) FILTER (WHERE route = 'self_hosted') AS sh_accepted_priced,
        max(accepted_latency_unknown) FILTER (WHERE route = 'api') AS api_latency_unknown
    FROM intermediate.int_task_outcomes_monthly
    GROUP BY month
),
equivalent AS (
    SELECT month, CAST(sum(api_equivalent_usd) AS DECIMAL(38, 12)) AS api_equivalent_cost_usd
    FROM intermediate.int_requests_monthly
    WHERE route = 'self_hosted'
    GROUP BY month
),
clusters AS (
    SELECT
        month,
        sum(accepted_tokens) AS accepted_tokens_served,
        -- each cluster is sized for its own busiest hour (its nodes serve only it): the sum of their peaks
        sum(peak_hour_tokens_per_second) AS peak_hour_tokens_per_second,
        coalesce(bool_or(capacity_contradiction), FALSE) AS capacity_contradiction,
        CAST(sum(nodes_in_service) AS BIGINT) AS nodes_in_service,
        CASE WHEN bool_and(capacity_tokens_per_second IS NOT NULL OR provisioned_hours = 0)
            THEN sum(capacity_tokens_per_second) END AS capacity_tokens_per_second,
        CASE WHEN count(DISTINCT capacity_source) = 1 THEN min(capacity_source)
            WHEN count(DISTINCT capacity_source) > 1 THEN 'mixed' END AS capacity_source,
        CASE WHEN bool_and(monthly_token_capacity IS NOT NULL OR provisioned_hours = 0)
            THEN sum(monthly_token_capacity) END AS monthly_token_capacity,
        sum(provisioned_node_hours) AS provisioned_node_hours,
        sum(tokens_served) AS tokens_served,
        coalesce(bool_or(capacity_mix_warning), FALSE) AS capacity_mix_warning,
        coalesce(bool_or(sweep_nodes_assumed), FALSE) AS sweep_nodes_assumed,
        coalesce(bool_or(sweep_mix_unknown), FALSE) AS sweep_mix_unknown,
        coalesce(bool_or(capacity_measured_after), FALSE) AS capacity_measured_after,
        coalesce(bool_or(capacity_source IN ('observed', 'mixed')), FALSE) AS capacity_lower_bound,
        coalesce(bool_or(sweep_optimistic), FALSE) AS sweep_optimistic
    FROM marts.monthly_utilisation
    GROUP BY month
),
-- a cluster whose request log lost requests its engines counted
engine_logs AS (
    SELECT
        month,
        bool_or(status = 'logs_missing') AS cluster_logs_incomplete
    FROM marts.monthly_engine_reconciliation
    GROUP BY month
),
-- the waste factor break-even uses: the reference provider's own, else the month's providers pooled
break_even_waste AS (SELECT * FROM intermediate.int_api_waste_monthly WHERE is_break_even_factor),
inputs AS (
    SELECT
        r.*,
        c.committed_cost_usd,
        c.avoidable_cost_usd,
        c.operating_cost_usd,
        CAST(coalesce(c.committed_cost_usd, 0) + coalesce(c.operating_cost_usd, 0) + coalesce(c.avoidable_cost_usd, 0)
            AS DECIMAL(38, 12)) AS fixed_cost_usd,
        coalesce(a.run_rate_usd, 0) AS run_rate_usd,
        coalesce(a.credits_usd, 0) AS credits_usd,
        coalesce(a.tax_usd, 0) AS tax_usd,
        e.api_equivalent_cost_usd,
        x.api_latency_unknown,
        u.accepted_tokens_served,
        u.capacity_contradiction,
        u.nodes_in_service,
        u.peak_hour_tokens_per_second,
        u.capacity_tokens_per_second,
        u.capacity_source,
        u.monthly_token_capacity,
        u.provisioned_node_hours,
        u.tokens_served,
        u.capacity_mix_warning,
        u.sweep_nodes_assumed,
        u.sweep_mix_unknown,
        u.sweep_optimistic,
        u.capacity_measured_after,
        u.capacity_lower_bound,
        coalesce(w.api_waste_factor, CAST(1 AS DECIMAL(38, 12))) AS api_waste_factor,
        coalesce(w.api_waste_basis, 'assumed') AS api_waste_basis,
        coalesce(w.api_waste_factor_low, CAST(1 AS DECIMAL(38, 12))) AS api_waste_factor_low,
        coalesce(w.api_waste_factor_high, CAST(1 AS DECIMAL(38, 12))) AS api_waste_factor_high,
        coalesce(up.api_invoice_uplift, CAST(1 AS DECIMAL(38, 12))) AS api_invoice_uplift,
        coalesce(up.invoice_unreconciled, FALSE) AS invoice_unreconciled,
        coalesce(up.uplift_basis = 'logged' AND up.api_invoice_uplift <> 1, FALSE) AS invoice_volume_unknown,
        coalesce(el.cluster_logs_incomplete, FALSE) AS cluster_logs_incomplete,
        money_mul(coalesce(w.api_waste_factor, 1), coalesce(up.api_invoice_uplift, 1)) AS api_overhead_factor,
        CASE WHEN r.sh_accepted > 0 AND x.sh_accepted_priced = r.sh_accepted
            THEN money_div(x.sh_accepted_equivalent_usd, r.sh_accepted) END AS sh_accepted_equivalent_per_task,
        money_div(r.api_review_usd, r.api_accepted) AS api_review_per_task,
        money_div(r.sh_review_usd, r.sh_accepted) AS sh_review_per_task,
        st.control_requirements
    FROM routes AS r
    CROSS JOIN settings AS st
    LEFT JOIN classes AS c USING (month)
    LEFT JOIN api AS a USING (month)
    LEFT JOIN accepted_attempts AS x USING (month)
    LEFT JOIN equivalent AS e USING (month)
    LEFT JOIN clusters AS u USING (month)
    LEFT JOIN break_even_waste AS w USING (month)
    LEFT JOIN uplift AS up USING (month)
    LEFT JOIN engine_logs AS el USING (month)
),
comparator AS (
    SELECT
        *,
        money_mul(sh_accepted_equivalent_per_task, api_overhead_factor)
            AS api_equivalent_cost_per_accepted_task_usd,
        money_div(run_rate_usd + api_review_usd, api_accepted) AS api_measured_cost_per_accepted_task_usd,
        coalesce(sh_review_per_task, api_review_per_task, CAST(0 AS DECIMAL(38, 12)))
            AS self_hosted_variable_cost_per_accepted_task_usd
    FROM inputs
),
chosen AS (
    SELECT
        *,
        (coalesce(self_hosted_cost_usd, 0) <> 0 OR coalesce(sh_requests, 0) <> 0) AS has_self_hosted_route,
        -- the review part of C: on the equivalent basis the API route's review per task (the cluster's when the API
        -- accepted nothing); on the measured basis the API route's (inside the measured figure)
        CASE
            WHEN api_equivalent_cost_per_accepted_task_usd IS NOT NULL
                THEN coalesce(api_review_per_task, sh_review_per_task, CAST(0 AS DECIMAL(38, 12)))
            WHEN api_measured_cost_per_accepted_task_usd IS NOT NULL THEN api_review_per_task
        END AS api_review_per_accepted_task_usd,
        CASE
            WHEN api_equivalent_cost_per_accepted_task_usd IS NOT NULL
                THEN CAST(api_equivalent_cost_per_accepted_task_usd + api_review_per_accepted_task_usd AS DECIMAL(38, 12))
            ELSE api_measured_cost_per_accepted_task_usd
        END AS api_cost_per_accepted_task_usd,
        CASE
            WHEN api_equivalent_cost_per_accepted_task_usd IS NOT NULL THEN 'equivalent'
            WHEN api_measured_cost_per_accepted_task_usd IS NOT NULL THEN 'measured'
        END AS api_cost_source
    FROM comparator
)
SELECT * FROM chosen
