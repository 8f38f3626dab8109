-- grain: one row per month x assumption
-- materialized: table
-- unique_key: month, assumption
-- description: The named assumptions the break-even verdict is recomputed under (marts.monthly_verdict_sensitivity), each at a low and a high value, as what it does to the break-even inputs: fixed_delta_low / _high are added to the fixed cost F; equivalent_factor_low / _high multiply the token part of the API comparator on the equivalent basis (C = equivalent x factor + review); review_factor_low / _high multiply review on both routes (C's review part and the self-hosted variable cost V). Assumptions: operating_cost (operating costs, the opex rows and the metered energy line, down and up by the robustness.operating_cost_share setting, 0.20), review_rate (the review rate -20 % / +20 %, months with review cost), api_waste_factor (W at its 95 % interval: factor W_low / W and W_high / W; months where W was measured), hardware_life (life x 2/3 and x 4/3: straight-line amortisation x 3/2 and x 3/4), compute_hour_price (node-hour and GPU-hour prices -20 % / +20 %: the charges that buy compute time, int_cluster_charge_lines.node_hours), api_cache_hit_rate (the cluster's requests priced at the API route's own cache-hit share of input instead of the cluster's: value_low the cluster's share, value_high the API's), reference_provider:<provider> (each other provider that prices the reference model, at the cluster's token mix, each provider at its own waste factor W and invoice uplift U: its cost of the cluster's tokens x its W x its U / the reference provider's, both at the reference model's list price of the month, int_reference_prices_monthly; a provider with too few accepted tasks for its own W takes the reference's), and invoice_uplift (U at 1 and at the reference provider's invoiced usage / metered cost, when its invoice states no quantities and no usage export says whether what it bills beyond the logs is price or unlogged volume; the break-even mart keeps it only in months whose invoice does not reconcile).
-- settings: reference_api_provider, robustness_operating_cost_share
-- column month DATE
-- column assumption VARCHAR: The assumption: operating_cost, review_rate, api_waste_factor, hardware_life, compute_hour_price, api_cache_hit_rate, reference_provider:<provider> or invoice_uplift.
-- column value_low DOUBLE: The assumption's low value (a factor, a share or a price ratio).
-- column value_high DOUBLE: Its high value.
-- column fixed_delta_low DECIMAL(38,12): What the assumption at its low value adds to the month's fixed cost F (negative: takes away).
-- column fixed_delta_high DECIMAL(38,12): What it adds to F at its high value.
-- column equivalent_factor_low DECIMAL(38,12): What the token part of the API's cost per accepted task is multiplied by at the low value (1: unchanged).
-- column equivalent_factor_high DECIMAL(38,12): The same at the high value.
-- column review_factor_low DECIMAL(38,12): What review cost is multiplied by on both routes at the low value (1: unchanged).
-- column review_factor_high DECIMAL(38,12): The same at the high value.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
months AS (SELECT month FROM intermediate.int_months_spined),
hardware AS (
    SELECT month, sum(amount_usd) AS amortisation_usd FROM intermediate.int_hardware_amortised GROUP BY month
),
operating AS (
    -- the operating costs: the opex rows and the metered energy line (int_cluster_energy_monthly)
    SELECT o.month, sum(o.amount_usd) AS opex_usd
    FROM (
        SELECT month, amount_usd FROM staging.stg_ledger__opex
        UNION ALL
        SELECT month, energy_usd FROM intermediate.int_cluster_energy_monthly WHERE energy_line = 'added'
    ) AS o
    JOIN months USING (month)
    GROUP BY o.month
),
reviewed AS (
    -- months with review cost on either route
    SELECT DISTINCT month FROM intermediate.int_task_outcomes_monthly WHERE review_cost_usd <> 0
),
compute_time AS (
    SELECT s.month, sum(s.amount_usd) AS compute_usd
    FROM intermediate.int_cluster_charges_split AS s
    JOIN intermediate.int_cluster_charge_lines AS l USING (charge_id)
    WHERE l.node_hours IS NOT NULL
    GROUP BY s.month
),
tokens AS (
    SELECT
        month,
        sum(cache_hit_input_tokens) FILTER (WHERE route = 'self_hosted') AS sh_hit,
        sum(cache_miss_input_tokens) FILTER (WHERE route = 'self_hosted') AS sh_miss,
        sum(output_tokens + reasoning_tokens) FILTER (WHERE route = 'self_hosted') AS sh_out,
        sum(a_all_miss_usd) FILTER (WHERE route = 'self_hosted') AS sh_a,
        sum(b_hit_saving_usd) FILTER (WHERE route = 'self_hosted') AS sh_b,
        sum(c_not_read_input_usd) FILTER (WHERE route = 'self_hosted') AS sh_c,
        sum(cache_hit_input_tokens) FILTER (WHERE route = 'api') AS api_hit,
        sum(cache_miss_input_tokens) FILTER (WHERE route = 'api') AS api_miss
    FROM intermediate.int_requests_monthly
    GROUP BY month
),
shares AS (
    SELECT
        *,
        CAST(sh_hit AS DOUBLE) / nullif(sh_hit + sh_miss, 0) AS sh_hit_share,
        CAST(api_hit AS DOUBLE) / nullif(api_hit + api_miss, 0) AS api_hit_share
    FROM tokens
),
-- the cluster's requests priced at a cache-hit share h of their input: A - h x B + C (int_requests_daily's sums)
repriced AS (
    SELECT
        *,
        CAST(sh_a - CAST(sh_hit_share AS DECIMAL(38, 12)) * sh_b + sh_c AS DECIMAL(38, 12)) AS sh_cost_own_share,
        CAST(sh_a - CAST(api_hit_share AS DECIMAL(38, 12)) * sh_b + sh_c AS DECIMAL(38, 12)) AS sh_cost_api_share
    FROM shares
),
-- each provider's price of the reference model of the month (int_reference_prices_monthly)
month_prices AS (
    SELECT
        month,
        provider,
        hit_per_million AS hit_price,
        miss_per_million AS miss_price,
        output_per_million AS output_price
    FROM intermediate.int_reference_prices_monthly
),
-- the cluster's token mix at each provider's price, times that provider's own W (the reference's when it has too few
-- accepted tasks for one) and its own U: what C's token part would be with that provider as the reference
mix_cost AS (
    SELECT
        p.month,
        p.provider,
        p.provider = s.reference_api_provider AS is_reference,
        money_mul(money_mul(
            CAST(t.sh_hit * p.hit_price + t.sh_miss * p.miss_price + t.sh_out * p.output_price AS DECIMAL(38, 12)),
            coalesce(w.api_waste_factor, rw.api_waste_factor, 1)), coalesce(u.api_invoice_uplift, 1)) AS cost
    FROM month_prices AS p
    CROSS JOIN settings AS s
    JOIN tokens AS t USING (month)
    LEFT JOIN intermediate.int_api_waste_monthly AS w ON w.month = p.month AND w.provider = p.provider
    LEFT JOIN intermediate.int_api_waste_monthly AS rw ON rw.month = p.month AND rw.is_break_even_factor
    LEFT JOIN intermediate.int_api_uplift_monthly AS u ON u.month = p.month AND u.provider = p.provider
),
-- the reference provider's uplift when its invoice cannot tell price from unlogged volume
uplift AS (
    SELECT u.month, u.api_invoice_uplift, u.naive_uplift
    FROM intermediate.int_api_uplift_monthly AS u
    JOIN settings AS s ON u.provider = s.reference_api_provider
    WHERE u.uplift_basis = 'logged' AND u.api_invoice_uplift <> 1
),
cases AS (
    SELECT
        w.month,
        'api_waste_factor' AS assumption,
        CAST(w.api_waste_factor_low AS DOUBLE) AS value_low,
        CAST(w.api_waste_factor_high AS DOUBLE) AS value_high,
        CAST(0 AS DECIMAL(38, 12)) AS fixed_delta_low,
        CAST(0 AS DECIMAL(38, 12)) AS fixed_delta_high,
        money_div(w.api_waste_factor_low, w.api_waste_factor) AS equivalent_factor_low,
        money_div(w.api_waste_factor_high, w.api_waste_factor) AS equivalent_factor_high,
        1 AS review_factor_low,
        1 AS review_factor_high
    FROM intermediate.int_api_waste_monthly AS w
    WHERE w.is_break_even_factor
    UNION ALL
    SELECT month, 'hardware_life', 2.0 / 3, 4.0 / 3, money_div(amortisation_usd, 2), -money_div(amortisation_usd, 4), 1, 1, 1, 1
    FROM hardware
    WHERE amortisation_usd <> 0
    UNION ALL
    SELECT month, 'compute_hour_price', 0.8, 1.2, -money_div(compute_usd, 5), money_div(compute_usd, 5), 1, 1, 1, 1
    FROM compute_time
    WHERE compute_usd <> 0
    UNION ALL
    SELECT
        month,
        'api_cache_hit_rate',
        sh_hit_share,
        api_hit_share,
        0,
        0,
        1,
        money_div(sh_cost_api_share, sh_cost_own_share),
        1,
        1
    FROM repriced
    WHERE sh_cost_api_share IS NOT NULL AND sh_cost_own_share > 0
    UNION ALL
    SELECT
        o.month,
        'reference_provider:' || o.provider,
        CAST(o.cost / r.cost AS DOUBLE),
        CAST(o.cost / r.cost AS DOUBLE),
        0,
        0,
        money_div(o.cost, r.cost),
        money_div(o.cost, r.cost),
        1,
        1
    FROM mix_cost AS o
    JOIN mix_cost AS r ON r.month = o.month AND r.is_reference
    WHERE NOT o.is_reference AND r.cost > 0
    UNION ALL
    -- U at 1 (what the invoice bills beyond the logs is unlogged volume) and at invoiced / metered (it is price)
    SELECT
        month,
        'invoice_uplift',
        least(1, CAST(naive_uplift AS DOUBLE)),
        greatest(1, CAST(naive_uplift AS DOUBLE)),
        0,
        0,
        money_div(least(1, naive_uplift), api_invoice_uplift),
        money_div(greatest(1, naive_uplift), api_invoice_uplift),
        1,
        1
    FROM uplift
    UNION ALL
    -- operating costs (opex) down and up by the operating_cost_share setting
    SELECT
        o.month,
        'operating_cost',
        1 - s.robustness_operating_cost_share,
        1 + s.robustness_operating_cost_share,
        -o.opex_usd * s.robustness_operating_cost_share,
        o.opex_usd * s.robustness_operating_cost_share,
        1,
        1,
        1,
        1
    FROM operating AS o
    CROSS JOIN settings AS s
    WHERE o.opex_usd <> 0 AND s.robustness_operating_cost_share > 0
    UNION ALL
    -- the review rate -20 % / +20 %: review on both routes moves together (C's review part and V)
    SELECT r.month, 'review_rate', 0.8, 1.2, 0, 0, 1, 1, 0.8, 1.2
    FROM reviewed AS r
)
SELECT
    month,
    assumption,
    value_low,
    value_high,
    CAST(fixed_delta_low AS DECIMAL(38, 12)) AS fixed_delta_low,
    CAST(fixed_delta_high AS DECIMAL(38, 12)) AS fixed_delta_high,
    CAST(equivalent_factor_low AS DECIMAL(38, 12)) AS equivalent_factor_low,
    CAST(equivalent_factor_high AS DECIMAL(38, 12)) AS equivalent_factor_high,
    CAST(review_factor_low AS DECIMAL(38, 12)) AS review_factor_low,
    CAST(review_factor_high AS DECIMAL(38, 12)) AS review_factor_high
FROM cases
