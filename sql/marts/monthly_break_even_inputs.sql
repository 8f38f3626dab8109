-- grain: one row per month
-- materialized: table
-- unique_key: month
-- settings: api_tax_recoverable, business_control_requirements, reference_api_provider
-- description: What the month's break-even is computed from, derived once: the fixed cost F and its classes (committed, operating, avoidable), the API's price per accepted task C on its basis (the cluster's accepted attempts priced at the reference API x the reference provider's waste factor W x its invoice uplift U, plus the API's review per task: 'equivalent'; else the API route's run-rate and review per accepted task: 'measured'), the cluster's variable cost per accepted task V (review), each route's volumes and the clusters' capacity. The month's break-even and its robustness read it; the break-even itself is the macro break_even_tasks(F, C, V).
-- column month DATE
-- column self_hosted_cost_usd DECIMAL(38,12): The self-hosted route's cost of the month (marts.monthly_route_cost, route self_hosted).
-- column sh_accepted BIGINT: Tasks accepted on the cluster in the month.
-- column sh_requests BIGINT: Requests the cluster served in the month (all attempts).
-- column sh_review_usd DECIMAL(38,12): Human review of the cluster's tasks in the month, at [review] rate_per_hour_usd.
-- column sh_tokens HUGEINT: Tokens the cluster served in the month: cache-hit and cache-miss input, output and reasoning.
-- column api_accepted BIGINT: Tasks accepted on the API in the month.
-- column api_review_usd DECIMAL(38,12): Human review of the API's tasks in the month.
-- column api_tokens HUGEINT: Tokens the API served in the month: cache-hit and cache-miss input, output and reasoning.
-- column committed_cost_usd DECIMAL(38,12): The month's committed self-hosted cost: reserved and owned capacity, paid whether used or not (F's committed class).
-- column avoidable_cost_usd DECIMAL(38,12): The month's avoidable self-hosted cost: on-demand capacity, which stopping the cluster ends (F's avoidable class).
-- column operating_cost_usd DECIMAL(38,12): The month's operating cost of the cluster: staff, energy, colocation and the like (F's operating class).
-- column fixed_cost_usd DECIMAL(38,12): The cluster's fixed cost of the month F: committed + operating + avoidable.
-- column run_rate_usd DECIMAL(38,12): What the API cost to run in the month: invoiced usage (metered where no invoice), plus credits that recur and tax the team does not recover.
-- column credits_usd DECIMAL(38,12): One-off credits on the month's API invoices, left out of the run rate.
-- column tax_usd DECIMAL(38,12): Tax on the month's API invoices that the team recovers, left out of the run rate.
-- column run_rate_unpriced BOOLEAN: Some API requests of the month have no price and no invoice of their provider covers the month: the run rate leaves their cost out, so the measured C is understated (caveat api_unpriced).
-- column run_rate_unmeasured BOOLEAN: No API request of the month has a price and no invoice of its provider covers the month: the run rate measures nothing, and there is no measured C.
-- column api_equivalent_cost_usd DECIMAL(38,12): The cluster's requests of the month priced at the reference API's list prices (all attempts).
-- column api_latency_unknown BIGINT: The API's accepted tasks whose accepted attempt has no latency (judged by outcome alone).
-- column accepted_tokens_served HUGEINT: Tokens of the clusters' accepted attempts in the month, all clusters.
-- column capacity_contradiction BOOLEAN: Some cluster served more than its load test says it can.
-- column nodes_in_service BIGINT: Nodes in service at the month's peak, all clusters.
-- column peak_hour_tokens_per_second DECIMAL(38,3): Each cluster's busiest hour, in tokens per second, added over the clusters (each cluster is sized for its own).
-- column capacity_tokens_per_second DECIMAL(38,3): The clusters' capacity in tokens per second, added over the clusters; NULL when a provisioned cluster has none.
-- column capacity_source VARCHAR: Where the capacity comes from: the clusters' one source, or mixed.
-- column monthly_token_capacity DECIMAL(38,3): Tokens the clusters could serve in the month at capacity, added over the clusters.
-- column provisioned_node_hours DECIMAL(38,6): Node-hours provisioned in the month, all clusters.
-- column tokens_served HUGEINT: Tokens the clusters served in the month, all attempts.
-- column capacity_mix_warning BOOLEAN: Some cluster's load test ran at a token mix unlike production's.
-- column sweep_nodes_assumed BOOLEAN: Some cluster's load test did not say how many nodes it ran on.
-- column sweep_mix_unknown BOOLEAN: Some cluster's load test did not state its token mix.
-- column sweep_optimistic BOOLEAN: Some cluster's load test overstates what it serves in production.
-- column capacity_measured_after BOOLEAN: Some cluster's capacity was measured after the month.
-- column capacity_lower_bound BOOLEAN: Some cluster's capacity is what it was seen to serve (observed or mixed), a lower bound (not a cluster without a capacity: no node-hours to divide by).
-- column api_waste_factor DECIMAL(38,12): W, the reference provider's waste factor the break-even uses (intermediate.int_api_waste_monthly's is_break_even_factor row: its own, else every provider of the month pooled); 1 when neither has enough accepted tasks.
-- column api_waste_basis VARCHAR: 'month', 'pooled' (with months before it), 'pooled_providers' (every API provider of the month) or 'assumed' (W = 1).
-- column api_waste_factor_low DECIMAL(38,12): Low end of W's 95 % interval (the bootstrap's 2.5th percentile); 1 when W is assumed.
-- column api_waste_factor_high DECIMAL(38,12): High end of W's 95 % interval (the bootstrap's 97.5th percentile); 1 when W is assumed.
-- column api_invoice_uplift DECIMAL(38,12): U, the reference provider's invoice uplift of the month (intermediate.int_api_uplift_monthly); 1 without a row.
-- column invoice_unreconciled BOOLEAN: The reference provider's invoice for the month does not reconcile with the request log.
-- column invoice_volume_unknown BOOLEAN: The invoice uplift U rests on logged volume alone (the invoice states none) and is not 1.
-- column invoice_untyped BOOLEAN: The reference provider's invoices of the month have no usage line (only fees, or one total entered by hand as a line of type other) while requests were logged: U is taken as 1.
-- column cluster_logs_incomplete BOOLEAN: Some cluster's engines counted tokens its request log lacks (engine reconciliation logs_missing).
-- column api_overhead_factor DECIMAL(38,12): W x U: the reference provider's waste factor times its invoice uplift.
-- column sh_accepted_equivalent_per_task DECIMAL(38,12): The cluster's accepted attempts priced at the reference API, per accepted task; NULL unless every one is priced.
-- column api_review_per_task DECIMAL(38,12): The API's review cost per accepted API task.
-- column sh_review_per_task DECIMAL(38,12): The cluster's review cost per accepted self-hosted task.
-- column control_requirements VARCHAR[]: The controls the business requires of the self-hosted route ([business] control_requirements).
-- column api_equivalent_cost_per_accepted_task_usd DECIMAL(38,12): The cluster's accepted task priced at the reference API x W x U, before review.
-- column api_measured_cost_per_accepted_task_usd DECIMAL(38,12): The API route's run rate plus its review, per accepted API task; NULL when no API request of the month has a price or an invoice (run_rate_unmeasured).
-- column self_hosted_variable_cost_per_accepted_task_usd DECIMAL(38,12): V: what one more accepted task costs on the cluster beyond F: its review.
-- column has_self_hosted_route BOOLEAN: The month has a self-hosted cost or self-hosted requests.
-- column api_review_per_accepted_task_usd DECIMAL(38,12): The review part of C: the API's review per task on the equivalent basis (the cluster's when the API accepted nothing); the API's on the measured basis.
-- column api_cost_per_accepted_task_usd DECIMAL(38,12): C, what an accepted task costs on the API: equivalent cost + review per task on the equivalent basis, else the measured cost.
-- column api_cost_source VARCHAR: equivalent or measured: the basis of C (see the description).
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
        NOT s.api_tax_recoverable AS tax_borne,
        -- metered usage leaves out the requests without a price; an invoice bills them
        NOT coalesce(p.has_invoice, FALSE) AND coalesce(p.unpriced_requests, 0) > 0 AS usage_unpriced,
        coalesce(p.has_invoice, FALSE)
        OR NOT (coalesce(p.unpriced_requests, 0) > 0 AND p.unpriced_requests >= coalesce(p.requests, 0)) AS usage_priced
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
        CAST(coalesce(sum(tax_usd) FILTER (WHERE NOT tax_borne), 0) AS DECIMAL(38, 12)) AS tax_usd,
        bool_or(usage_unpriced) AS run_rate_unpriced,
        NOT bool_or(usage_priced) AS run_rate_unmeasured
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
        -- a capacity seen in the log bounds it from below; a cluster without node-hours has none to bound
        coalesce(bool_or(capacity_source IN ('observed', 'mixed') AND capacity_tokens_per_second IS NOT NULL), FALSE)
            AS capacity_lower_bound,
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
        coalesce(a.run_rate_unpriced, FALSE) AS run_rate_unpriced,
        coalesce(a.run_rate_unmeasured, FALSE) AS run_rate_unmeasured,
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
        coalesce(up.uplift_basis = 'untyped', FALSE) AS invoice_untyped,
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
        -- a run rate of requests none of which has a price measures nothing: no measured C
        CASE WHEN NOT run_rate_unmeasured THEN money_div(run_rate_usd + api_review_usd, api_accepted) END
            AS api_measured_cost_per_accepted_task_usd,
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
