-- grain: one row per month x assumption
-- materialized: table
-- unique_key: month, assumption
-- description: How sure the month's verdict is: break-even, the saving and the verdict recomputed under each named assumption at a low and a high value (the same F / (C - V) as marts.monthly_break_even, with F, C and V moved as intermediate.int_verdict_assumptions_monthly says), and one row 'joint': every assumption at the end that lowers break-even together (its low-value columns) and at the end that raises it together (its high-value columns). Assumptions: api_waste_factor (W at its 95 % interval), hardware_life (x 2/3 and x 4/3), compute_hour_price (node-hour and GPU-hour prices -20 % / +20 %), operating_cost (opex -20 % / +20 %, a setting), review_rate (review on both routes -20 % / +20 %), api_cache_hit_rate (the cluster's requests at the API route's own cache-hit share instead of the cluster's), reference_provider:<provider> (another provider's price of the reference model at the cluster's token mix). Months with a verdict to test only (a self-hosted route and an API price).
-- column month DATE: First day of the month (UTC).
-- column assumption VARCHAR: The named assumption, or 'joint'.
-- column value_low DOUBLE: Its low value: a factor (api_waste_factor: W; hardware_life: x life; compute_hour_price, operating_cost, review_rate: x price or amount), a share (api_cache_hit_rate: the cluster's own) or a price ratio (reference_provider); NULL on the joint row.
-- column value_high DOUBLE: Its high value (api_cache_hit_rate: the API route's share); NULL on the joint row.
-- column break_even_at_low_value DECIMAL(38,12): Break-even accepted tasks with the assumption at its low value (the joint row: every assumption at the end that lowers break-even); NULL when the cluster never breaks even there.
-- column break_even_at_high_value DECIMAL(38,12): Break-even accepted tasks at the high value (the joint row: every assumption at the end that raises it).
-- column saving_at_low_value_usd DECIMAL(38,12): The month's saving with the assumption at its low value.
-- column saving_at_high_value_usd DECIMAL(38,12): The month's saving at the high value.
-- column verdict_at_low_value VARCHAR: The verdict at the low value.
-- column verdict_at_high_value VARCHAR: The verdict at the high value.
-- column flips BOOLEAN: Either verdict differs from the month's.
WITH unnested AS (
    SELECT be.month, unnest(be.verdict_sensitivity) AS s
    FROM marts.monthly_break_even AS be
)
SELECT
    u.month,
    u.s.assumption,
    u.s.value_low,
    u.s.value_high,
    u.s.break_even_at_low_value,
    u.s.break_even_at_high_value,
    u.s.saving_at_low_value_usd,
    u.s.saving_at_high_value_usd,
    u.s.verdict_at_low_value,
    u.s.verdict_at_high_value,
    u.s.flips
FROM unnested AS u
UNION ALL
SELECT
    month,
    'joint',
    NULL,
    NULL,
    break_even_range_low,
    break_even_range_high,
    saving_range_high_usd,
    saving_range_low_usd,
    verdict_at_break_even_range_low,
    verdict_at_break_even_range_high,
    verdict_at_break_even_range_low <> verdict OR verdict_at_break_even_range_high <> verdict
FROM marts.monthly_break_even
WHERE verdict IN ('api_cheaper', 'self_hosting_cheaper', 'never_breaks_even')
