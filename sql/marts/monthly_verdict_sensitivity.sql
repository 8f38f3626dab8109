-- grain: one row per month x assumption
-- materialized: table
-- unique_key: month, assumption
-- description: How sure the month's verdict is: break-even and the verdict recomputed under each named assumption at a low and a high value (the same F / (C - V) as marts.monthly_break_even, with F and C moved as intermediate.int_verdict_assumptions_monthly says). Assumptions: api_waste_factor (W at its 95 % interval), hardware_life (x 2/3 and x 4/3), compute_hour_price (node-hour and GPU-hour prices -20 % / +20 %), api_cache_hit_rate (the cluster's requests at the API route's own cache-hit share instead of the cluster's), reference_provider:<provider> (another provider's price of the reference model at the cluster's token mix). Months with a verdict to test only (a self-hosted route and an API price).
-- column month: First day of the month (UTC).
-- column assumption: The named assumption.
-- column value_low: Its low value: a factor (api_waste_factor: W; hardware_life: x life; compute_hour_price: x price), a share (api_cache_hit_rate: the cluster's own) or a price ratio (reference_provider).
-- column value_high: Its high value (api_cache_hit_rate: the API route's share).
-- column break_even_low: Break-even accepted tasks at the low value; NULL when the cluster never breaks even there.
-- column break_even_high: Break-even accepted tasks at the high value.
-- column verdict_low: The verdict at the low value.
-- column verdict_high: The verdict at the high value.
-- column flips: Either verdict differs from the month's.
WITH unnested AS (
    SELECT be.month, unnest(be.verdict_sensitivity) AS s
    FROM marts.monthly_break_even AS be
)
SELECT
    u.month,
    u.s.assumption,
    u.s.value_low,
    u.s.value_high,
    u.s.break_even_low,
    u.s.break_even_high,
    u.s.verdict_low,
    u.s.verdict_high,
    u.s.flips
FROM unnested AS u
