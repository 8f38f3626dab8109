-- grain: one row per month (with a verdict: a self-hosted route and an API price)
-- materialized: table
-- unique_key: month
-- description: How sure the month's verdict is. Each named assumption (intermediate.int_verdict_assumptions_monthly) moves F, C's token part, C's review part and V to its low and its high value, and break-even (break_even_tasks), the saving and the verdict are computed again at each end from marts.monthly_break_even_inputs; the joint range takes, of each assumption, the end that raises break-even most, all together, and the end that lowers it most. The month's break-even mart publishes these figures beside its own.
-- column month DATE: First day of the month (UTC).
-- column verdict_sensitivity STRUCT(assumption VARCHAR, value_low DOUBLE, value_high DOUBLE, break_even_at_low_value DECIMAL(38,12), break_even_at_high_value DECIMAL(38,12), saving_at_low_value_usd DECIMAL(38,12), saving_at_high_value_usd DECIMAL(38,12), verdict_at_low_value VARCHAR, verdict_at_high_value VARCHAR, flips BOOLEAN)[]: Per assumption: its low and high value, break-even, saving and verdict at each, and whether either end flips the verdict.
-- column verdict_flipped_by VARCHAR[]: The assumptions one of whose ends alone flips the verdict.
-- column break_even_range_low DECIMAL(38,12): Break-even with every assumption at the end that lowers it.
-- column break_even_range_high DECIMAL(38,12): Break-even with every assumption at the end that raises it (NULL: never breaks even there).
-- column saving_range_low_usd DECIMAL(38,12): The saving at the joint end that raises break-even.
-- column saving_range_high_usd DECIMAL(38,12): The saving at the joint end that lowers break-even.
-- column joint_verdict_low VARCHAR: The verdict at break_even_range_low.
-- column joint_verdict_high VARCHAR: The verdict at break_even_range_high.
WITH judged AS MATERIALIZED (
    -- the month's own break-even and verdict, from the same inputs and macros as the month's break-even mart
    SELECT
        *,
        break_even_verdict(c_month, v_month, sh_accepted, break_even_accepted_tasks) AS verdict
    FROM (
        SELECT
            month,
            sh_accepted,
            sh_review_usd,
            fixed_cost_usd,
            invoice_unreconciled,
            api_cost_source,
            api_equivalent_cost_per_accepted_task_usd,
            api_cost_per_accepted_task_usd,
            api_review_per_accepted_task_usd,
            self_hosted_variable_cost_per_accepted_task_usd,
            api_cost_per_accepted_task_usd AS c_month,
            self_hosted_variable_cost_per_accepted_task_usd AS v_month,
            break_even_tasks(fixed_cost_usd, api_cost_per_accepted_task_usd,
                self_hosted_variable_cost_per_accepted_task_usd) AS break_even_accepted_tasks
        FROM marts.monthly_break_even_inputs
        WHERE has_self_hosted_route AND api_cost_per_accepted_task_usd IS NOT NULL
    ) AS month_inputs
),
-- the verdict again under each named assumption at its low and high value (int_verdict_assumptions_monthly)
assumed AS MATERIALIZED (
    SELECT
        j.month,
        a.assumption,
        a.value_low,
        a.value_high,
        j.verdict,
        j.sh_accepted,
        a.fixed_delta_low,
        a.fixed_delta_high,
        a.equivalent_factor_low,
        a.equivalent_factor_high,
        a.review_factor_low,
        a.review_factor_high
    FROM judged AS j
    JOIN intermediate.int_verdict_assumptions_monthly AS a USING (month)
    -- U is in doubt only while the invoice does not reconcile
    WHERE a.assumption <> 'invoice_uplift' OR j.invoice_unreconciled
),
-- each assumption's two ends, one row each
ends AS (
    SELECT month, assumption, 'low' AS side, fixed_delta_low AS fixed_delta, equivalent_factor_low AS equivalent_factor,
        review_factor_low AS review_factor
    FROM assumed
    UNION ALL
    SELECT month, assumption, 'high', fixed_delta_high, equivalent_factor_high, review_factor_high
    FROM assumed
),
-- F, C and V at an end: F moved by the end's delta; C's token part (equivalent basis only) and its review part, and V,
-- scaled by the end's factors
moved AS (
    SELECT
        e.*,
        j.sh_accepted,
        j.verdict,
        j.break_even_accepted_tasks AS base_break_even,
        CAST(j.fixed_cost_usd + e.fixed_delta AS DECIMAL(38, 12)) AS f,
        comparator_at(j.api_cost_source, j.api_equivalent_cost_per_accepted_task_usd, j.api_cost_per_accepted_task_usd,
            j.api_review_per_accepted_task_usd, e.equivalent_factor, e.review_factor) AS c,
        money_mul(j.self_hosted_variable_cost_per_accepted_task_usd, e.review_factor) AS v,
        money_mul(j.sh_review_usd, e.review_factor) AS review
    FROM ends AS e
    JOIN judged AS j USING (month)
),
end_figures AS (
    SELECT
        *,
        break_even_tasks(f, c, v) AS break_even,
        break_even_saving(f, c, v, sh_accepted, review) AS saving
    FROM moved
),
end_verdicts AS MATERIALIZED (
    SELECT
        *,
        break_even_verdict(c, v, sh_accepted, break_even) AS end_verdict,
        -- does this end raise break-even (never breaking even is the highest) or lower it, against the month's?
        (break_even IS NULL AND base_break_even IS NOT NULL) OR break_even > base_break_even AS raises,
        (break_even IS NOT NULL AND base_break_even IS NULL) OR break_even < base_break_even AS lowers,
        -- the other providers' prices are alternatives to one another, not separate assumptions: one at a time
        CASE WHEN assumption LIKE 'reference_provider:%' THEN 'reference_provider' ELSE assumption END AS assumption_group
    FROM end_figures
),
sensitivity AS (
    SELECT
        month,
        list(struct_pack(
            assumption := assumption, value_low := value_low, value_high := value_high,
            break_even_at_low_value := break_even_at_low_value, break_even_at_high_value := break_even_at_high_value,
            saving_at_low_value_usd := saving_at_low_value_usd, saving_at_high_value_usd := saving_at_high_value_usd,
            verdict_at_low_value := verdict_at_low_value, verdict_at_high_value := verdict_at_high_value,
            flips := verdict_at_low_value <> verdict OR verdict_at_high_value <> verdict
        ) ORDER BY assumption) AS verdict_sensitivity,
        list(assumption ORDER BY assumption)
            FILTER (WHERE verdict_at_low_value <> verdict OR verdict_at_high_value <> verdict) AS verdict_flipped_by
    FROM (
        SELECT
            a.month,
            a.assumption,
            a.value_low,
            a.value_high,
            a.verdict,
            lo.break_even AS break_even_at_low_value,
            hi.break_even AS break_even_at_high_value,
            lo.saving AS saving_at_low_value_usd,
            hi.saving AS saving_at_high_value_usd,
            lo.end_verdict AS verdict_at_low_value,
            hi.end_verdict AS verdict_at_high_value
        FROM assumed AS a
        JOIN end_verdicts AS lo ON lo.month = a.month AND lo.assumption = a.assumption AND lo.side = 'low'
        JOIN end_verdicts AS hi ON hi.month = a.month AND hi.assumption = a.assumption AND hi.side = 'high'
    ) AS by_assumption
    GROUP BY month
),
-- the joint range: of each assumption, the end that raises break-even most, all together (and the end that lowers
-- it most, all together): F moved by their deltas summed, C and V by their factors multiplied
picked AS (
    SELECT
        month,
        'raising' AS direction,
        arg_max(struct_pack(fixed_delta, equivalent_factor, review_factor), coalesce(CAST(break_even AS DOUBLE), 1e300))
            AS pick
    FROM end_verdicts
    WHERE raises
    GROUP BY month, assumption_group
    UNION ALL
    SELECT
        month,
        'lowering' AS direction,
        arg_min(struct_pack(fixed_delta, equivalent_factor, review_factor), coalesce(CAST(break_even AS DOUBLE), 1e300))
            AS pick
    FROM end_verdicts
    WHERE lowers
    GROUP BY month, assumption_group
),
joint_picks AS (
    SELECT
        p.month,
        p.direction,
        p.pick.fixed_delta,
        p.pick.equivalent_factor,
        p.pick.review_factor
    FROM picked AS p
),
directions AS (SELECT 'raising' AS direction UNION ALL SELECT 'lowering' AS direction),
joint_inputs AS (
    SELECT
        j.month,
        d.direction,
        CAST(j.fixed_cost_usd + coalesce(sum(p.fixed_delta), 0) AS DECIMAL(38, 12)) AS f,
        -- a product of factors near 1, each exact to 1e-12: as DOUBLE (15 significant digits), cast back
        CAST(coalesce(exp(sum(ln(CAST(p.equivalent_factor AS DOUBLE)))), 1) AS DECIMAL(38, 12)) AS equivalent_factor,
        CAST(coalesce(exp(sum(ln(CAST(p.review_factor AS DOUBLE)))), 1) AS DECIMAL(38, 12)) AS review_factor
    FROM judged AS j
    CROSS JOIN directions AS d
    LEFT JOIN joint_picks AS p ON p.month = j.month AND p.direction = d.direction
        AND p.equivalent_factor > 0 AND p.review_factor > 0
    GROUP BY j.month, d.direction, j.fixed_cost_usd
),
joint AS (
    SELECT
        ji.month,
        ji.direction,
        ji.f,
        comparator_at(j.api_cost_source, j.api_equivalent_cost_per_accepted_task_usd, j.api_cost_per_accepted_task_usd,
            j.api_review_per_accepted_task_usd, ji.equivalent_factor, ji.review_factor) AS c,
        money_mul(j.self_hosted_variable_cost_per_accepted_task_usd, ji.review_factor) AS v,
        money_mul(j.sh_review_usd, ji.review_factor) AS review,
        j.sh_accepted
    FROM joint_inputs AS ji
    JOIN judged AS j USING (month)
),
joint_figures AS (
    -- the same break-even, saving and verdict as end_figures and end_verdicts, at the two joint ends
    SELECT
        *,
        break_even_tasks(f, c, v) AS break_even,
        break_even_saving(f, c, v, sh_accepted, review) AS saving
    FROM joint
),
joint_range AS (
    SELECT
        month,
        max(break_even) FILTER (WHERE direction = 'lowering') AS break_even_range_low,
        max(break_even) FILTER (WHERE direction = 'raising') AS break_even_range_high,
        max(saving) FILTER (WHERE direction = 'raising') AS saving_range_low_usd,
        max(saving) FILTER (WHERE direction = 'lowering') AS saving_range_high_usd,
        max(break_even_verdict(c, v, sh_accepted, break_even)) FILTER (WHERE direction = 'lowering')
            AS joint_verdict_low,
        max(break_even_verdict(c, v, sh_accepted, break_even)) FILTER (WHERE direction = 'raising')
            AS joint_verdict_high
    FROM joint_figures
    GROUP BY month
)
SELECT
    r.month,
    s.verdict_sensitivity,
    s.verdict_flipped_by,
    r.break_even_range_low,
    r.break_even_range_high,
    r.saving_range_low_usd,
    r.saving_range_high_usd,
    r.joint_verdict_low,
    r.joint_verdict_high
FROM joint_range AS r
LEFT JOIN sensitivity AS s USING (month)
