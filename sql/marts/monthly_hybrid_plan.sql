-- grain: one row per month x nodes
-- materialized: table
-- unique_key: month, nodes
-- description: How big a cluster for this month's demand, and which traffic where? For n = 0 up to the nodes the month's busiest hour could use (and today's count): n nodes at the month's capacity per node at the SLO serve each hour's demand (intermediate.int_demand_hourly, both routes, every attempt) up to n x capacity x 3,600 tokens; the rest of the hour goes to the API at that hour's price per token, times the API's waste factor W and the reference provider's invoice uplift U. Total = n x the cost of a node-month + the operating cost when n > 0 + the API overflow + human review on both routes. Nothing is served above capacity at the SLO. Months without a capacity per node or a node price have the all-API row (n = 0) only. `costledger plan` runs this same SQL with a what-if node price or capacity.
-- column month: First day of the month (UTC).
-- column nodes: n, the cluster size costed (0 = everything on the API).
-- column self_hosted_token_share: The share of the month's demanded tokens n nodes serve within their capacity.
-- column cluster_cost_usd: n x node_month_usd.
-- column operating_cost_usd: The month's operating cost (platform engineering, operations, ...) when n > 0; 0 at n = 0.
-- column api_overflow_cost_usd: The tokens above n x capacity (whole tokens) in each hour at that hour's API price per token (its priced requests' cost / their tokens; the month's when the hour has none priced), summed over the month, x W x U.
-- column review_usd: Human review on both routes: the same at every n (every accepted task is reviewed wherever it runs).
-- column total_usd: cluster_cost_usd + operating_cost_usd + api_overflow_cost_usd + review_usd; NULL when the month's demand has no API price.
-- column is_cheapest: The n with the lowest total (the fewest nodes among equal totals).
-- column is_current: n is today's node count: the month's provisioned node-hours / its hours, rounded.
-- column current_nodes: Today's node count (0 without a cluster).
-- column node_month_usd: The cost of one node for the month: the month's committed + avoidable cluster cost / its provisioned nodes ('measured'), else the setting planning.node_month_usd ('setting'), or a what-if price given to `costledger plan` ('what_if').
-- column node_cost_source: 'measured', 'setting' or 'what_if'; NULL when there is no node price.
-- column capacity_per_node_tokens_per_second: Tokens per second one node serves within the SLO: the month's (marts.monthly_break_even), or a what-if given to `costledger plan`.
-- column capacity_source: 'sweep', 'observed' or 'mixed' (the month's, see marts.monthly_utilisation) or 'what_if'; NULL without a capacity.
-- column overflow_hours: Hours whose demand is above n x capacity (some of it goes to the API).
-- column peak_tokens_per_second: The month's busiest hour's demanded tokens / 3,600.
-- column api_waste_factor: W used for the overflow (see marts.monthly_break_even; 1 when the month has none).
-- column api_invoice_uplift: U used for the overflow (see marts.monthly_break_even; 1 when the month has none).
WITH settings AS (
    SELECT planning_node_month_usd AS node_month_usd FROM staging.stg_ledger__settings
),
what_if AS (
    -- NULL in the build; `costledger plan` sets them (bound values) to cost the month at another price or capacity
    SELECT
        CAST(getvariable('costledger_plan_node_month_usd') AS DECIMAL(38, 12)) AS node_month_usd,
        CAST(getvariable('costledger_plan_capacity_tps') AS DECIMAL(18, 3)) AS capacity_tps
),
hours AS (
    SELECT
        month,
        hour,
        sum(tokens) AS tokens,
        sum(priced_tokens) AS priced_tokens,
        sum(priced_cost_usd) AS priced_cost_usd
    FROM intermediate.int_demand_hourly
    GROUP BY month, hour
),
demand AS (
    SELECT
        month,
        max(tokens) AS peak_tokens,
        sum(tokens) AS tokens,
        sum(priced_tokens) AS priced_tokens,
        sum(priced_cost_usd) AS priced_cost_usd
    FROM hours
    GROUP BY month
),
review AS (
    SELECT month, sum(review_cost_usd) AS review_usd FROM marts.monthly_route_cost GROUP BY month
),
months AS (
    SELECT
        b.month,
        coalesce(CAST(round(b.provisioned_node_hours / sp.hours_in_month) AS BIGINT), 0) AS current_nodes,
        CASE
            WHEN w.node_month_usd IS NOT NULL THEN w.node_month_usd
            WHEN b.provisioned_node_hours > 0 THEN money_div(
                (coalesce(b.committed_cost_usd, 0) + coalesce(b.avoidable_cost_usd, 0)) * sp.hours_in_month,
                b.provisioned_node_hours
            )
            ELSE s.node_month_usd
        END AS node_month_usd,
        CASE
            WHEN w.node_month_usd IS NOT NULL THEN 'what_if'
            WHEN b.provisioned_node_hours > 0 THEN 'measured'
            WHEN s.node_month_usd IS NOT NULL THEN 'setting'
        END AS node_cost_source,
        coalesce(w.capacity_tps, nullif(b.capacity_per_node_tokens_per_second, 0)) AS capacity_per_node,
        CASE
            WHEN w.capacity_tps IS NOT NULL THEN 'what_if'
            WHEN b.capacity_per_node_tokens_per_second > 0 THEN b.capacity_source
        END AS capacity_source,
        CAST(coalesce(b.operating_cost_usd, 0) AS DECIMAL(38, 12)) AS operating_cost_usd,
        CAST(coalesce(r.review_usd, 0) AS DECIMAL(38, 12)) AS review_usd,
        coalesce(b.api_waste_factor, 1) AS api_waste_factor,
        coalesce(b.api_invoice_uplift, 1) AS api_invoice_uplift,
        CAST(coalesce(b.api_waste_factor, 1) * coalesce(b.api_invoice_uplift, 1) AS DECIMAL(38, 12)) AS overhead_factor,
        coalesce(d.peak_tokens, 0) AS peak_tokens,
        d.priced_tokens AS month_priced_tokens,
        d.priced_cost_usd AS month_priced_cost_usd
    FROM marts.monthly_break_even AS b
    JOIN intermediate.int_months_spined AS sp ON b.month = sp.month
    CROSS JOIN what_if AS w
    CROSS JOIN settings AS s
    LEFT JOIN demand AS d ON b.month = d.month
    LEFT JOIN review AS r ON b.month = r.month
),
sizes AS (
    -- 0 .. the nodes the busiest hour could use (at least today's count), at most 1,000
    SELECT
        m.*,
        unnest(range(0, 1 + CASE
            WHEN m.capacity_per_node > 0 AND m.node_month_usd IS NOT NULL THEN least(1000, greatest(
                m.current_nodes, CAST(ceil(m.peak_tokens / (m.capacity_per_node * 3600)) AS BIGINT)
            ))
            ELSE 0
        END)) AS nodes
    FROM months AS m
),
capacities AS (
    -- the whole tokens n nodes serve in an hour
    SELECT
        *,
        coalesce(CAST(floor(nodes * capacity_per_node * 3600) AS HUGEINT), 0) AS hour_capacity
    FROM sizes
),
hourly AS (
    -- each hour's tokens within and above n x capacity
    SELECT
        s.month,
        s.nodes,
        h.tokens,
        least(h.tokens, s.hour_capacity) AS served,
        greatest(h.tokens - s.hour_capacity, 0) AS overflow,
        -- the hour's price per token as cost / tokens: its priced requests', else the month's
        CASE WHEN h.priced_tokens > 0 THEN h.priced_cost_usd ELSE s.month_priced_cost_usd END AS price_cost_usd,
        CASE WHEN h.priced_tokens > 0 THEN h.priced_tokens ELSE s.month_priced_tokens END AS price_tokens
    FROM capacities AS s
    JOIN hours AS h ON s.month = h.month
),
costed AS (
    SELECT
        month,
        nodes,
        sum(served) AS served_tokens,
        sum(tokens) AS demanded_tokens,
        count(*) FILTER (WHERE overflow > 0) AS overflow_hours,
        -- one rounding per hour at 1e-12 dollars; NULL when an overflowing hour has no price at all. Beyond what
        -- DECIMAL(38, 12) holds (tokens x dollars above 1e25), at the hour's price per token rounded to 1e-12 dollars
        sum(CASE
            WHEN overflow = 0 THEN CAST(0 AS DECIMAL(38, 12))
            WHEN CAST(overflow AS DOUBLE) * CAST(price_cost_usd AS DOUBLE) < 1e25
                THEN money_div(CAST(overflow AS DECIMAL(38, 0)) * price_cost_usd, price_tokens)
            ELSE CAST(money_div(price_cost_usd, price_tokens) * CAST(overflow AS DECIMAL(38, 0)) AS DECIMAL(38, 12))
        END) AS overflow_at_price_usd,
        bool_or(overflow > 0 AND NOT price_tokens > 0) AS overflow_unpriced
    FROM hourly
    GROUP BY month, nodes
),
totals AS (
    SELECT
        s.*,
        c.served_tokens,
        c.demanded_tokens,
        coalesce(c.overflow_hours, 0) AS overflow_hours,
        CAST(s.nodes * coalesce(s.node_month_usd, 0) AS DECIMAL(38, 12)) AS cluster_cost_usd,
        CASE WHEN s.nodes > 0 THEN s.operating_cost_usd ELSE CAST(0 AS DECIMAL(38, 12)) END AS plan_operating_usd,
        CASE
            WHEN c.demanded_tokens IS NULL THEN CAST(0 AS DECIMAL(38, 12))
            WHEN NOT c.overflow_unpriced THEN CAST(c.overflow_at_price_usd * s.overhead_factor AS DECIMAL(38, 12))
        END AS api_overflow_cost_usd
    FROM sizes AS s
    LEFT JOIN costed AS c ON s.month = c.month AND s.nodes = c.nodes
)
SELECT
    month,
    nodes,
    CASE WHEN demanded_tokens > 0
        THEN CAST(CAST(served_tokens AS DOUBLE) / CAST(demanded_tokens AS DOUBLE) AS DECIMAL(18, 6))
    END AS self_hosted_token_share,
    cluster_cost_usd,
    plan_operating_usd AS operating_cost_usd,
    api_overflow_cost_usd,
    review_usd,
    CAST(cluster_cost_usd + plan_operating_usd + api_overflow_cost_usd + review_usd AS DECIMAL(38, 12)) AS total_usd,
    api_overflow_cost_usd IS NOT NULL AND row_number() OVER (
        PARTITION BY month ORDER BY cluster_cost_usd + plan_operating_usd + api_overflow_cost_usd + review_usd, nodes
    ) = 1 AS is_cheapest,
    nodes = current_nodes AS is_current,
    current_nodes,
    node_month_usd,
    node_cost_source,
    capacity_per_node AS capacity_per_node_tokens_per_second,
    capacity_source,
    overflow_hours,
    CAST(CAST(peak_tokens AS DOUBLE) / 3600 AS DECIMAL(18, 3)) AS peak_tokens_per_second,
    api_waste_factor,
    api_invoice_uplift
FROM totals
