-- grain: one row per month
-- materialized: table
-- unique_key: month
-- description: Does self-hosting pay that month? Break-even accepted tasks = F / (C - V): the fixed self-hosted cost F (committed + operating + avoidable) over what each accepted task saves, the API cost per accepted equivalent task C less the self-hosted variable cost per accepted task V (human review, paid on both routes). C is like-for-like when the cluster accepted tasks (its own accepted attempts priced at the reference API, times the reference provider's waste factor W (its spend on failures and retries per dollar of accepted work) and the reference provider's invoice uplift U, plus the API route's review per task: 'equivalent'), else the API route's run-rate (invoiced usage without credits and tax, or metered) plus review per accepted task ('measured'). The capacity columns say whether break-even fits the cluster's measured capacity at the SLO.
-- column month DATE: First day of the month (UTC).
-- column self_hosted_cost_usd DECIMAL(38,12): The self_hosted route's cost_usd, fully loaded: fixed cost F + human review.
-- column fixed_cost_usd DECIMAL(38,12): F = committed_cost_usd + operating_cost_usd + avoidable_cost_usd: self-hosted cost that does not grow with tasks (review excluded).
-- column committed_cost_usd DECIMAL(38,12): Hardware amortisation, reserved charges and FOCUS PricingCategory 'committed' rows: paid whether or not the cluster serves anything.
-- column avoidable_cost_usd DECIMAL(38,12): On-demand and other cluster charges: capacity the team can stop paying for within the month.
-- column api_cost_per_accepted_task_usd DECIMAL(38,12): The comparator C: what one accepted task costs on the API, review included (see api_cost_source); NULL when there is no API price for the month.
-- column api_cost_source VARCHAR: 'equivalent' (the cluster's own accepted attempts priced at the reference API x W x U + the API route's review per accepted task) or 'measured' (the API route's run-rate + review / its accepted tasks); NULL when neither exists.
-- column api_measured_cost_per_accepted_task_usd DECIMAL(38,12): The API route's run-rate + review / its accepted tasks (always shown beside C); NULL when the API accepted nothing.
-- column api_equivalent_cost_per_accepted_task_usd DECIMAL(38,12): C less review on the equivalent basis: the cluster's accepted attempts at the reference API price per accepted task x W x U; NULL when the cluster accepted nothing or an accepted attempt has no reference price.
-- column api_overhead_factor DECIMAL(38,12): api_waste_factor x api_invoice_uplift: what C multiplies the cluster's accepted attempts at the reference price by. Kept for one version for older queries; read the two factors instead.
-- column self_hosted_variable_cost_per_accepted_task_usd DECIMAL(38,12): V = self-hosted review cost / self-hosted accepted tasks (the API route's review per task when the cluster accepted nothing; 0 with neither).
-- column break_even_accepted_tasks DECIMAL(38,12): F / (C - V): accepted tasks a month at which the cluster costs no more than the API; NULL when C <= V or C is unknown.
-- column self_hosted_accepted_tasks BIGINT: Accepted tasks the self-hosted route delivered.
-- column verdict VARCHAR: 'no_self_hosted_route' (no self-hosted cost and no self-hosted requests), 'no_api_price' (C unknown), 'never_breaks_even' (C <= V), 'self_hosting_cheaper' (accepted tasks >= break-even, and at least one), else 'api_cheaper'.
-- column self_hosting_cheaper BOOLEAN: verdict = 'self_hosting_cheaper'; NULL for no_self_hosted_route and no_api_price; never true without accepted tasks.
-- column productive_utilisation DOUBLE: The clusters' accepted attempts' tokens / monthly_token_capacity (= productive node-hours / provisioned node-hours, summed over clusters): the share of the capacity paid for that went to accepted work; above 1 published as computed (caveat capacity_contradiction); NULL when a capacity is unknown.
-- column capacity_tokens_per_second DECIMAL(38,3): Sum of the clusters' capacity at the SLO (tokens per second); NULL when a provisioned cluster's capacity is unknown.
-- column capacity_source VARCHAR: 'sweep', 'observed' or 'mixed' (clusters differ).
-- column monthly_token_capacity DECIMAL(38,3): Tokens all clusters could serve in the month at the SLO (provisioned node-hours x capacity per node x 3,600, summed).
-- column break_even_share_of_capacity DOUBLE: break_even_accepted_tasks x tokens per accepted task (all attempts, on the comparator's route) / monthly_token_capacity; NULL when either is unknown.
-- column break_even_reachable BOOLEAN: break_even_nodes_at_peak <= nodes_in_service: the nodes in service can carry the break-even volume at the month's busiest hour (no autoscaling: a cluster is sized for its peak); NULL when either is unknown.
-- column self_hosted_cost_per_million_tokens_at_capacity DECIMAL(38,12): F / monthly token capacity x 1e6: what a million tokens would cost if the clusters ran at full capacity all month (not what they cost: see self_hosted_cost_per_million_tokens_served).
-- column api_cost_per_million_tokens_at_mix DECIMAL(38,12): The API's price per million tokens at the cluster's own token mix: the API-equivalent cost of all its requests x W x U / their tokens (equivalent basis); the API route's run-rate / its tokens (measured basis).
-- column api_credits_usd DECIMAL(38,12): Credit lines of the month's API invoices (negative) that are one-off, left out of the run-rate (a provider's credits recur, and count in its run-rate, when its invoices carried credit lines the month before too).
-- column api_tax_usd DECIMAL(38,12): Tax lines of the month's API invoices left out of the run-rate: recovered (api.tax_recoverable, true by default; false puts the tax in the run-rate).
-- column api_comparator_gap_usd DECIMAL(38,12): api_cost_per_accepted_task_usd - api_measured_cost_per_accepted_task_usd: how far the like-for-like comparator is from the API route's own figure (a different task mix); NULL when either is.
-- column api_review_per_accepted_task_usd DECIMAL(38,12): The review part of C (C less it is the comparator's token cost).
-- column tokens_per_accepted_task DOUBLE: Tokens (all four columns, every attempt) per accepted task on the comparator's route: the self-hosted route on the equivalent basis, the API route on the measured one.
-- column api_run_rate_usd DECIMAL(38,12): The API route's run-rate: invoiced usage (lines other than credit and tax) where an invoice is loaded, else metered; plus credits that recur and tax that is not recovered.
-- column operating_cost_usd DECIMAL(38,12): Operating costs (opex: platform engineering, operations, networking, ...), a cost class of its own within F: they stop when the service is shut down, though not at once.
-- column infrastructure_cost_usd DECIMAL(38,12): F less operating costs: hardware and cluster charges only.
-- column infrastructure_break_even_accepted_tasks DECIMAL(38,12): (F - operating costs) / (C - V): break-even with operating costs left out, as published planning tables do.
-- column self_hosted_cost_per_accepted_task_usd DECIMAL(38,12): self_hosted_cost_usd / self_hosted_accepted_tasks; NULL without accepted tasks.
-- column api_equivalent_cost_usd DECIMAL(38,12): All self-hosted requests (every attempt) priced at the reference API price.
-- column api_would_have_cost_usd DECIMAL(38,12): C x self_hosted_accepted_tasks: what the API would have charged for the cluster's accepted tasks (review included).
-- column saving_usd DECIMAL(38,12): api_would_have_cost_usd - (F + V x self_hosted_accepted_tasks; with none accepted, the review of what the cluster rejected): the dollars self-hosting saved that month (positive) or cost (negative) against sending the same accepted work to the API; NULL when C is unknown or there is no self-hosted route.
-- column verdict_margin DOUBLE: (self_hosted_accepted_tasks - break_even_accepted_tasks) / break_even_accepted_tasks: how far the month's volume is above (positive) or below (negative) break-even, as a share of it; NULL when break-even is unknown or zero.
-- column verdict_caveats VARCHAR[]: What the verdict rests on that the data could not confirm, in their declared order: caveats of staging.stg_ledger__caveats, which says when each is raised and what it means (an audit holds every one to a declared caveat).
-- column api_latency_unknown_share DOUBLE: Of the API route's accepted tasks, the share whose accepted attempt has no latency (API response bodies carry none): the SLO could not be checked for them, so they are judged by their outcome alone. NULL when the API accepted nothing.
-- column shutdown_break_even_accepted_tasks DECIMAL(38,12): (avoidable_cost_usd + operating_cost_usd) / (C - V): the answer to "with the hardware and reservations committed either way, does running the service pay?"; NULL when break_even_accepted_tasks is.
-- column api_waste_factor DECIMAL(38,12): W: the metered cost of all the reference provider's attempts / that of its accepted attempts (at its own prices): what the API spends on failures, retries and rejected tasks per dollar of accepted work; another provider's retries never enter it. From the month when the reference provider has at least min_tasks_for_factor accepted tasks (a setting), else pooled with up to 3 months before until it has, else every API provider of the month pooled, else 1 (see api_waste_basis; marts.monthly_api_waste has each provider's).
-- column api_waste_basis VARCHAR: 'month' (the reference provider's month alone), 'pooled' (with months before it), 'pooled_providers' (every API provider of the month) or 'assumed' (too few accepted API tasks even pooled: W = 1).
-- column api_waste_factor_low DECIMAL(38,12): Low end of W's 95 % interval: the 2.5th percentile of a reproducible Poisson bootstrap (500 replicates) over up to 1,000 hash groups of the API's tasks per month (int_api_task_groups_monthly); 1 when W is assumed.
-- column api_waste_factor_high DECIMAL(38,12): High end of W's 95 % interval (the 97.5th percentile); 1 when W is assumed.
-- column api_invoice_uplift DECIMAL(38,12): U: what the reference provider's invoices charge beyond list price for the same tokens (intermediate.int_api_uplift_monthly: its invoiced usage over the invoice's own quantities at list, else over its usage export's, else over the metered cost of the logged requests, caveat invoice_volume_unknown); 1 without an invoice, and 1 when the invoice states no usage (caveat invoice_untyped). Tokens billed but never logged are volume, not price: they do not raise U.
-- column self_hosted_cost_per_million_tokens_served DECIMAL(38,12): F / the tokens the clusters served x 1e6: what the month's tokens actually cost; compare it with api_cost_per_million_tokens_at_mix. NULL without tokens, or without any cluster cost loaded (F = 0: the caveat cluster_cost_missing).
-- column token_utilisation DOUBLE: Tokens served / monthly_token_capacity: the duty cycle, every attempt's share of the token capacity (productive_utilisation is the accepted attempts' share).
-- column provisioned_node_hours DECIMAL(38,6): Node-hours provisioned over all clusters (see marts.monthly_utilisation).
-- column capacity_per_node_tokens_per_second DECIMAL(38,3): Tokens per second per node within the SLO over all clusters: monthly_token_capacity / (provisioned_node_hours x 3,600).
-- column capacity_mix_warning BOOLEAN: A sweep in force had a token mix more than 10 points of input share away from production's.
-- column verdict_confidence VARCHAR: 'robust' when the verdict holds across the joint range, 'marginal' when only the joint range turns it (every assumption at its worst end together), 'fragile' when a single named assumption at its low or high value turns it (verdict_flipped_by names them; marts.monthly_verdict_sensitivity has the figures); NULL without a verdict to test.
-- column verdict_flipped_by VARCHAR[]: The assumptions that flip the verdict (see int_verdict_assumptions_monthly for each); [] when none does.
-- column verdict_sensitivity STRUCT(assumption VARCHAR, value_low DOUBLE, value_high DOUBLE, break_even_at_low_value DECIMAL(38,12), break_even_at_high_value DECIMAL(38,12), saving_at_low_value_usd DECIMAL(38,12), saving_at_high_value_usd DECIMAL(38,12), verdict_at_low_value VARCHAR, verdict_at_high_value VARCHAR, flips BOOLEAN)[]: Break-even, the saving and the verdict under each named assumption at its low and high value (one struct per assumption; marts.monthly_verdict_sensitivity has them as rows).
-- column break_even_nodes_at_peak BIGINT: ceil(peak_hour_tokens_per_second x break_even_accepted_tasks / self_hosted_accepted_tasks / capacity per node): the nodes the month's hourly profile, scaled to the break-even volume, needs at its busiest hour; NULL without self-hosted accepted tasks, capacity or break-even.
-- column nodes_in_service BIGINT: The nodes each cluster had provisioned during its busiest clock hour (committed and on demand present then), rounded up, summed.
-- column accepted_work_usd DECIMAL(38,12): F x accepted attempts' tokens / monthly_token_capacity: the fixed cost that bought accepted work (over tokens served instead when they exceed the capacity); NULL without capacity.
-- column failed_work_usd DECIMAL(38,12): F x the other attempts' tokens / monthly_token_capacity: failed, retried, rejected and too-slow attempts; NULL without capacity.
-- column idle_cost_usd DECIMAL(38,12): F - accepted_work_usd - failed_work_usd: capacity paid for and left unused (the rounding remainder included, so the three add up to F exactly); NULL without capacity.
-- column peak_hour_tokens_per_second DECIMAL(38,3): The clusters' busiest clock hours of the month, summed (each cluster is sized for its own): the tokens of every attempt started in that hour (input + output + reasoning) / 3,600.
-- column break_even_range_low DECIMAL(38,12): Break-even with every named assumption at the end that lowers it, together (of the other providers' prices, the one that lowers it most); NULL when the cluster would never break even there.
-- column break_even_range_high DECIMAL(38,12): Break-even with every named assumption at the end that raises it, together; NULL when the cluster would never break even there.
-- column saving_range_low_usd DECIMAL(38,12): The saving with every assumption at the end that raises break-even, together: the low end of the saving's range.
-- column saving_range_high_usd DECIMAL(38,12): The saving with every assumption at the end that lowers break-even, together: the high end of the saving's range.
-- column verdict_at_break_even_range_low VARCHAR: The verdict with every named assumption at the end that lowers break-even.
-- column verdict_at_break_even_range_high VARCHAR: The verdict with every named assumption at the end that raises break-even.
-- column control_requirements VARCHAR[]: The business.control_requirements setting: why the team must run the model itself whatever the cost (data_residency, isolation, fine_tuning, latency_floor, guaranteed_capacity, version_control); empty when none. The verdict weighs cost alone.
-- column verdict_stated VARCHAR: The verdict as the report and `costledger plan` state it: 'too_close_to_call' when one named assumption alone turns the verdict (verdict_confidence 'fragile') and the saving's range (saving_range_low_usd to saving_range_high_usd) runs from a cost to a saving; else the verdict. Declared with the verdicts in staging.stg_ledger__verdicts; the report's code never judges it again.
WITH broken_even AS (
    SELECT
        *,
        CAST(api_cost_per_accepted_task_usd - self_hosted_variable_cost_per_accepted_task_usd AS DECIMAL(38, 12))
            AS saving_per_task,
        CASE WHEN has_self_hosted_route THEN break_even_tasks(fixed_cost_usd, api_cost_per_accepted_task_usd,
            self_hosted_variable_cost_per_accepted_task_usd) END AS break_even_accepted_tasks,
        CASE WHEN has_self_hosted_route THEN break_even_tasks(avoidable_cost_usd + operating_cost_usd,
            api_cost_per_accepted_task_usd, self_hosted_variable_cost_per_accepted_task_usd) END
            AS shutdown_break_even_accepted_tasks,
        CASE WHEN has_self_hosted_route THEN break_even_tasks(fixed_cost_usd - operating_cost_usd,
            api_cost_per_accepted_task_usd, self_hosted_variable_cost_per_accepted_task_usd) END
            AS infrastructure_break_even_accepted_tasks,
        -- tokens per accepted task on the comparator's route (all its attempts)
        CASE api_cost_source
            WHEN 'equivalent' THEN CAST(sh_tokens AS DOUBLE) / sh_accepted
            WHEN 'measured' THEN CAST(api_tokens AS DOUBLE) / api_accepted
        END AS tokens_per_accepted_task
    FROM marts.monthly_break_even_inputs
),
judged AS (
    SELECT
        *,
        CASE
            WHEN NOT has_self_hosted_route THEN 'no_self_hosted_route'
            WHEN api_cost_per_accepted_task_usd IS NULL THEN 'no_api_price'
            ELSE break_even_verdict(api_cost_per_accepted_task_usd, self_hosted_variable_cost_per_accepted_task_usd,
                                    sh_accepted, break_even_accepted_tasks)
        END AS verdict,
        CASE WHEN monthly_token_capacity > 0 AND break_even_accepted_tasks IS NOT NULL
            THEN CAST(break_even_accepted_tasks AS DOUBLE) * tokens_per_accepted_task / CAST(monthly_token_capacity AS DOUBLE)
        END AS break_even_share_of_capacity
    FROM broken_even
),
final AS (
    SELECT
        j.*,
        r.verdict_sensitivity,
        coalesce(r.verdict_flipped_by, []) AS verdict_flipped_by,
        r.break_even_range_low,
        r.break_even_range_high,
        r.saving_range_low_usd,
        r.saving_range_high_usd,
        r.joint_verdict_low,
        r.joint_verdict_high,
        -- the nodes the break-even volume needs at the busiest hour: the month's hourly profile scaled to it
        CASE WHEN j.sh_accepted > 0 AND j.provisioned_node_hours > 0 AND j.monthly_token_capacity > 0
            AND j.break_even_accepted_tasks IS NOT NULL
            THEN CAST(ceil(CAST(j.peak_hour_tokens_per_second AS DOUBLE) * CAST(j.break_even_accepted_tasks AS DOUBLE)
                / j.sh_accepted
                / (CAST(j.monthly_token_capacity AS DOUBLE) / (CAST(j.provisioned_node_hours AS DOUBLE) * 3600))) AS BIGINT)
        END AS break_even_nodes_at_peak,
        -- the fixed cost over the capacity (or what was served, when more): accepted work, failed work, idle
        money_count_share(j.fixed_cost_usd, j.accepted_tokens_served, greatest(j.monthly_token_capacity, j.tokens_served))
            AS accepted_work_usd,
        -- at or above the capacity nothing is idle: failed work takes the rest, so no rounding makes idle negative
        CASE WHEN j.tokens_served >= j.monthly_token_capacity
            THEN CAST(j.fixed_cost_usd - money_count_share(j.fixed_cost_usd, j.accepted_tokens_served, j.tokens_served)
                AS DECIMAL(38, 12))
        ELSE money_count_share(j.fixed_cost_usd, (j.tokens_served - j.accepted_tokens_served), j.monthly_token_capacity)
        END AS failed_work_usd,
        CASE WHEN j.monthly_token_capacity > 0 THEN greatest(j.monthly_token_capacity, j.tokens_served) END
            AS cost_basis_tokens
    FROM judged AS j
    LEFT JOIN marts.monthly_break_even_robustness AS r USING (month)
)
SELECT
    month,
    self_hosted_cost_usd,
    fixed_cost_usd,
    committed_cost_usd,
    avoidable_cost_usd,
    api_cost_per_accepted_task_usd,
    api_cost_source,
    api_measured_cost_per_accepted_task_usd,
    api_equivalent_cost_per_accepted_task_usd,
    api_overhead_factor,
    self_hosted_variable_cost_per_accepted_task_usd,
    break_even_accepted_tasks,
    sh_accepted AS self_hosted_accepted_tasks,
    verdict,
    CASE WHEN verdict IN ('no_self_hosted_route', 'no_api_price') THEN NULL ELSE verdict = 'self_hosting_cheaper' END
        AS self_hosting_cheaper,
    CASE WHEN monthly_token_capacity > 0 THEN CAST(accepted_tokens_served / monthly_token_capacity AS DOUBLE) END
        AS productive_utilisation,
    capacity_tokens_per_second,
    capacity_source,
    monthly_token_capacity,
    break_even_share_of_capacity,
    break_even_nodes_at_peak <= nodes_in_service AS break_even_reachable,
    CASE WHEN monthly_token_capacity > 0 THEN money_div(fixed_cost_usd,
        CAST(per_million(monthly_token_capacity) AS DECIMAL(38, 12))) END
        AS self_hosted_cost_per_million_tokens_at_capacity,
    -- one division, its two sides chosen by the basis of C (each copy of the exact arithmetic lengthens the plan)
    money_div(
        CASE api_cost_source
            WHEN 'equivalent' THEN CAST(api_equivalent_cost_usd * api_overhead_factor AS DECIMAL(38, 12))
            WHEN 'measured' THEN CAST(run_rate_usd AS DECIMAL(38, 12))
        END,
        CAST(per_million(CAST(CASE api_cost_source WHEN 'equivalent' THEN sh_tokens WHEN 'measured' THEN api_tokens END
            AS DECIMAL(38, 6))) AS DECIMAL(38, 12))
    ) AS api_cost_per_million_tokens_at_mix,
    credits_usd AS api_credits_usd,
    tax_usd AS api_tax_usd,
    CAST(api_cost_per_accepted_task_usd - api_measured_cost_per_accepted_task_usd AS DECIMAL(38, 12)) AS api_comparator_gap_usd,
    api_review_per_accepted_task_usd,
    tokens_per_accepted_task,
    run_rate_usd AS api_run_rate_usd,
    operating_cost_usd,
    CAST(fixed_cost_usd - operating_cost_usd AS DECIMAL(38, 12)) AS infrastructure_cost_usd,
    infrastructure_break_even_accepted_tasks,
    money_div(self_hosted_cost_usd, sh_accepted) AS self_hosted_cost_per_accepted_task_usd,
    api_equivalent_cost_usd,
    CASE WHEN has_self_hosted_route THEN CAST(api_cost_per_accepted_task_usd * sh_accepted AS DECIMAL(38, 12)) END
        AS api_would_have_cost_usd,
    CASE WHEN has_self_hosted_route THEN break_even_saving(fixed_cost_usd, api_cost_per_accepted_task_usd,
        self_hosted_variable_cost_per_accepted_task_usd, sh_accepted, sh_review_usd) END AS saving_usd,
    CASE WHEN break_even_accepted_tasks > 0
        THEN (CAST(sh_accepted AS DOUBLE) - CAST(break_even_accepted_tasks AS DOUBLE)) / CAST(break_even_accepted_tasks AS DOUBLE)
    END AS verdict_margin,
    -- what the verdict rests on that the data could not confirm
    list_filter([
        CASE WHEN invoice_unreconciled THEN 'invoice_unreconciled' END,
        CASE WHEN invoice_volume_unknown AND api_cost_source = 'equivalent' THEN 'invoice_volume_unknown' END,
        CASE WHEN api_waste_basis = 'assumed' AND api_cost_source = 'equivalent' THEN 'api_waste_assumed' END,
        CASE WHEN capacity_mix_warning THEN 'capacity_mix_warning' END,
        CASE WHEN sweep_nodes_assumed THEN 'sweep_nodes_assumed' END,
        CASE WHEN capacity_contradiction THEN 'capacity_contradiction' END,
        CASE WHEN sweep_mix_unknown THEN 'sweep_mix_unknown' END,
        CASE WHEN sweep_optimistic THEN 'sweep_optimistic' END,
        CASE WHEN cluster_logs_incomplete THEN 'cluster_logs_incomplete' END,
        CASE WHEN capacity_measured_after THEN 'capacity_measured_after' END,
        CASE WHEN capacity_lower_bound THEN 'capacity_lower_bound' END,
        CASE WHEN run_rate_unpriced AND api_cost_source = 'measured' THEN 'api_unpriced' END,
        CASE WHEN coalesce(sh_requests, 0) > 0 AND coalesce(fixed_cost_usd, 0) = 0 THEN 'cluster_cost_missing' END,
        CASE WHEN invoice_untyped AND api_cost_source = 'equivalent' THEN 'invoice_untyped' END
    ], LAMBDA x: x IS NOT NULL) AS verdict_caveats,
    CASE WHEN api_accepted > 0 THEN coalesce(api_latency_unknown, 0) / api_accepted END AS api_latency_unknown_share,
    shutdown_break_even_accepted_tasks,
    api_waste_factor,
    api_waste_basis,
    api_waste_factor_low,
    api_waste_factor_high,
    api_invoice_uplift,
    -- no cost loaded for a cluster that served (cluster_cost_missing) is an unknown cost, not a free token
    CASE WHEN tokens_served > 0 AND coalesce(fixed_cost_usd, 0) <> 0 THEN money_div(fixed_cost_usd,
        CAST(per_million(CAST(tokens_served AS DECIMAL(38, 6))) AS DECIMAL(38, 12))) END
        AS self_hosted_cost_per_million_tokens_served,
    CASE WHEN monthly_token_capacity > 0 THEN CAST(tokens_served AS DOUBLE) / CAST(monthly_token_capacity AS DOUBLE) END
        AS token_utilisation,
    provisioned_node_hours,
    CASE WHEN provisioned_node_hours > 0
        THEN CAST(CAST(monthly_token_capacity AS DOUBLE) / (CAST(provisioned_node_hours AS DOUBLE) * 3600) AS DECIMAL(38, 3))
    END AS capacity_per_node_tokens_per_second,
    capacity_mix_warning,
    CASE WHEN verdict IN ('api_cheaper', 'self_hosting_cheaper', 'never_breaks_even')
        THEN CASE
            WHEN array_length(verdict_flipped_by) > 0 THEN 'fragile'
            WHEN joint_verdict_low <> verdict OR joint_verdict_high <> verdict THEN 'marginal'
            ELSE 'robust'
        END END AS verdict_confidence,
    CASE WHEN verdict IN ('api_cheaper', 'self_hosting_cheaper', 'never_breaks_even') THEN verdict_flipped_by END
        AS verdict_flipped_by,
    coalesce(verdict_sensitivity, []) AS verdict_sensitivity,
    break_even_nodes_at_peak,
    nodes_in_service,
    accepted_work_usd,
    failed_work_usd,
    CASE WHEN cost_basis_tokens IS NOT NULL
        THEN CAST(fixed_cost_usd - accepted_work_usd - failed_work_usd AS DECIMAL(38, 12)) END AS idle_cost_usd,
    peak_hour_tokens_per_second,
    break_even_range_low,
    break_even_range_high,
    saving_range_low_usd,
    saving_range_high_usd,
    joint_verdict_low AS verdict_at_break_even_range_low,
    joint_verdict_high AS verdict_at_break_even_range_high,
    control_requirements,
    -- one named assumption alone turns the verdict and the saving's range runs from a cost to a saving: no verdict is
    -- stated as a fact
    CASE
        WHEN verdict IN ('api_cheaper', 'self_hosting_cheaper', 'never_breaks_even')
            AND array_length(verdict_flipped_by) > 0
            AND saving_range_low_usd < 0 AND saving_range_high_usd > 0
            THEN 'too_close_to_call'
        ELSE verdict
    END AS verdict_stated
FROM final
