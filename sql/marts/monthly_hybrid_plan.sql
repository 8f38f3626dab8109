-- grain: one row per month x scenario x nodes
-- materialized: table
-- unique_key: month, scenario, nodes
-- description: How big a cluster for this month's demand, and which traffic where? Plan rows (scenario 'plan') for n = 0 up to the nodes the month's busiest hour could use plus a spare (and today's count): n nodes at the month's capacity per node at the SLO serve each hour's demand (intermediate.int_demand_hourly, both routes, every attempt) up to (n - the planning.spare_nodes setting) x capacity x 3,600 tokens; the rest of the hour goes to the API, every attempt priced once at that hour's price per token (the cluster's attempts at the reference API's price, the API route's at their own provider's) x the reference provider's invoice uplift U. No waste factor: the demand already holds every attempt, retries included. Nodes are priced by what they are: the month's committed nodes (owned and reserved) first, at their committed cost per node; nodes beyond them at planning.node_month_usd when set, else at the month's on-demand price per node-hour x the hours in the month (a node added for the peak is paid all month: a 13-minute cold start rules out following demand), else like the committed ones. Fewer nodes than committed release their committed cost per node: the long-run view. Total = cluster cost + the operating cost when n > 0 + the API overflow + human review on both routes. One more row per month (scenario 'today') is the month as it was: today's nodes, the cluster's actual committed and on-demand cost, the operating cost, the API route's run-rate and review; its total is the month's real spend (actual_total_usd = F + the API run-rate + review), the same figure marts.monthly_break_even rests on. Months without a capacity per node or a node price have the all-API plan row (n = 0) only. `costledger plan` runs this same SQL with a what-if node price (then every node at that price) or capacity.
-- settings: planning_node_month_usd, planning_spare_nodes
-- column month: First day of the month (UTC).
-- column scenario: 'plan' (a cluster size costed) or 'today' (the month as it was).
-- column nodes: n, the cluster size (0 = everything on the API); on the today row, the nodes in service at the month's busiest hour (marts.monthly_break_even.nodes_in_service).
-- column self_hosted_token_share: The share of the month's demanded tokens the n nodes serve within their capacity (today: the tokens the cluster did serve).
-- column committed_nodes: Of the n nodes, those priced as the month's committed nodes (owned hardware and reserved capacity: committed node-hours / the hours in the month, rounded up); 0 under a what-if node price.
-- column added_nodes: Of the n nodes, those beyond the committed ones, priced at node_month_usd.
-- column cluster_cost_usd: committed_nodes x committed_node_month_usd + added_nodes x node_month_usd (today: the month's committed + on-demand cluster cost as billed).
-- column operating_cost_usd: The month's operating cost (platform engineering, operations, ...) when n > 0; 0 at n = 0.
-- column api_overflow_cost_usd: The tokens above the serving nodes' capacity (whole tokens) in each hour at that hour's API price per token (its priced requests' cost / their tokens; the month's when the hour has none priced), summed over the month, x U (today: the API route's run-rate).
-- column review_usd: Human review on both routes: the same at every n (every accepted task is reviewed wherever it runs).
-- column total_usd: cluster_cost_usd + operating_cost_usd + api_overflow_cost_usd + review_usd; NULL when the month's demand has no API price.
-- column is_cheapest: The plan row with the lowest total (the fewest nodes among equal totals).
-- column is_cheapest_with_spare: The plan row with the lowest total_with_spare_usd: the cheapest size that still serves its plan when one node is lost (N+1).
-- column total_with_spare_usd: The total when n nodes keep one spare: n - 1 serve, the rest to the API.
-- column actual_total_usd: The month's real spend: F (committed + on-demand + operating) + the API route's run-rate + review on both routes; the same on every row, to compare each plan with.
-- column on_demand_node_hours_released: The on-demand node-hours billed this month that this plan does not use (the billed ones less the added nodes x the hours in the month; 0 on the today row).
-- column is_current: A plan row whose n is today's node count.
-- column current_nodes: Today's node count: the nodes in service at the busiest hour (0 without a cluster).
-- column committed_node_month_usd: The month's committed cost (hardware amortisation, reserved charges) / its committed nodes; NULL without committed nodes.
-- column node_month_usd: The price of a node beyond the committed ones for the month (of every node under a what-if price).
-- column node_cost_source: Where node_month_usd comes from: 'setting' (planning.node_month_usd), 'on_demand' (the month's on-demand charges per node-hour x the hours in the month), 'committed' (no on-demand hours and no setting: like the committed nodes) or 'what_if'; NULL without a node price.
-- column capacity_per_node_tokens_per_second: Tokens per second one node serves within the SLO: the month's (marts.monthly_break_even), or a what-if given to `costledger plan`.
-- column capacity_source: 'sweep', 'observed', 'mixed' or 'observed_above_sweep' (the month's, see marts.monthly_utilisation) or 'what_if'; NULL without a capacity.
-- column overflow_hours: Hours whose demand is above the serving nodes' capacity (some of it goes to the API); NULL on the today row.
-- column peak_tokens_per_second: The month's busiest hour's demanded tokens / 3,600.
-- column api_invoice_uplift: U used for the overflow (see marts.monthly_break_even; 1 when the month has none).
WITH settings AS (
    SELECT planning_node_month_usd AS node_month_usd, planning_spare_nodes AS spare_nodes
    FROM staging.stg_ledger__settings
),
what_if AS (
    -- NULL in the build; `costledger plan` sets them (bound values) to cost the month at another price or capacity
    SELECT
        CAST(getvariable('costledger_plan_node_month_usd') AS DECIMAL(38, 12)) AS node_month_usd,
        CAST(getvariable('costledger_plan_capacity_tps') AS DECIMAL(38, 3)) AS capacity_tps
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
served_today AS (
    SELECT month, sum(tokens) AS tokens FROM intermediate.int_demand_hourly WHERE route = 'self_hosted' GROUP BY month
),
review AS (
    SELECT month, sum(review_cost_usd) AS review_usd FROM marts.monthly_route_cost GROUP BY month
),
node_kinds AS (
    SELECT
        month,
        sum(committed_node_hours) AS committed_node_hours,
        sum(on_demand_node_hours) AS on_demand_node_hours,
        sum(on_demand_usd) AS on_demand_usd
    FROM intermediate.int_cluster_nodes_monthly
    GROUP BY month
),
month_nodes AS (
    SELECT
        b.*,
        sp.hours_in_month,
        -- the nodes in service at the busiest hour (marts.monthly_break_even)
        coalesce(b.nodes_in_service, 0) AS current_nodes,
        coalesce(CAST(ceil(round(k.committed_node_hours / sp.hours_in_month, 6)) AS BIGINT), 0) AS month_committed_nodes,
        coalesce(k.on_demand_node_hours, 0) AS on_demand_node_hours,
        coalesce(k.on_demand_usd, 0) AS on_demand_usd
    FROM marts.monthly_break_even AS b
    JOIN intermediate.int_months_spined AS sp ON b.month = sp.month
    LEFT JOIN node_kinds AS k ON b.month = k.month
),
committed_price AS (
    -- the month's committed cost per committed node: what the plan pays for each of them (and for a node beyond them
    -- when nothing else prices one)
    SELECT
        *,
        CASE WHEN month_committed_nodes > 0
            THEN money_div(coalesce(committed_cost_usd, 0), month_committed_nodes) END AS committed_node_month_usd
    FROM month_nodes
),
months AS (
    SELECT
        b.month,
        b.hours_in_month,
        b.current_nodes,
        b.month_committed_nodes,
        b.on_demand_node_hours,
        s.spare_nodes,
        -- a what-if price prices every node: none counts as committed
        CASE WHEN w.node_month_usd IS NULL THEN b.month_committed_nodes ELSE 0 END AS committed_nodes,
        b.committed_node_month_usd,
        CASE
            WHEN w.node_month_usd IS NOT NULL THEN w.node_month_usd
            WHEN s.node_month_usd IS NOT NULL THEN s.node_month_usd
            WHEN b.on_demand_node_hours > 0 THEN money_count_share(b.on_demand_usd, b.hours_in_month, b.on_demand_node_hours)
            ELSE b.committed_node_month_usd
        END AS node_month_usd,
        CASE
            WHEN w.node_month_usd IS NOT NULL THEN 'what_if'
            WHEN s.node_month_usd IS NOT NULL THEN 'setting'
            WHEN b.on_demand_node_hours > 0 THEN 'on_demand'
            WHEN b.month_committed_nodes > 0 THEN 'committed'
        END AS node_cost_source,
        coalesce(w.capacity_tps, nullif(b.capacity_per_node_tokens_per_second, 0)) AS capacity_per_node,
        CASE
            WHEN w.capacity_tps IS NOT NULL THEN 'what_if'
            WHEN b.capacity_per_node_tokens_per_second > 0 THEN b.capacity_source
        END AS capacity_source,
        CAST(coalesce(b.operating_cost_usd, 0) AS DECIMAL(38, 12)) AS operating_cost_usd,
        CAST(coalesce(r.review_usd, 0) AS DECIMAL(38, 12)) AS review_usd,
        coalesce(b.api_invoice_uplift, 1) AS api_invoice_uplift,
        coalesce(d.peak_tokens, 0) AS peak_tokens,
        d.priced_tokens AS month_priced_tokens,
        d.priced_cost_usd AS month_priced_cost_usd,
        -- the month as it was
        CAST(coalesce(b.committed_cost_usd, 0) + coalesce(b.avoidable_cost_usd, 0) AS DECIMAL(38, 12)) AS actual_cluster_usd,
        CAST(coalesce(b.api_run_rate_usd, 0) AS DECIMAL(38, 12)) AS actual_api_usd,
        CAST(coalesce(b.fixed_cost_usd, 0) + coalesce(b.api_run_rate_usd, 0) + coalesce(r.review_usd, 0)
            AS DECIMAL(38, 12)) AS actual_total_usd,
        CASE WHEN d.tokens > 0
            THEN CAST(CAST(coalesce(t.tokens, 0) AS DOUBLE) / CAST(d.tokens AS DOUBLE) AS DECIMAL(18, 6))
        END AS served_share_today
    FROM committed_price AS b
    CROSS JOIN what_if AS w
    CROSS JOIN settings AS s
    LEFT JOIN demand AS d ON b.month = d.month
    LEFT JOIN served_today AS t ON b.month = t.month
    LEFT JOIN review AS r ON b.month = r.month
),
sizes AS (
    -- 0 .. the nodes the busiest hour could use plus the spares (at least one), at least today's count, at most 1,000
    SELECT
        m.*,
        unnest(range(0, 1 + CASE
            WHEN m.capacity_per_node > 0 AND m.node_month_usd IS NOT NULL THEN least(1000, greatest(
                m.current_nodes,
                CAST(ceil(m.peak_tokens / (m.capacity_per_node * 3600)) AS BIGINT) + greatest(m.spare_nodes, 1)
            ))
            ELSE 0
        END)) AS nodes
    FROM months AS m
),
capacities AS (
    -- the whole tokens k serving nodes handle in an hour
    SELECT
        month,
        nodes AS serving,
        coalesce(CAST(floor(nodes * capacity_per_node * 3600) AS HUGEINT), 0) AS hour_capacity,
        month_priced_cost_usd,
        month_priced_tokens
    FROM sizes
),
hourly AS (
    -- each hour's tokens within and above k x capacity
    SELECT
        s.month,
        s.serving,
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
    -- what k serving nodes leave to the API: one rounding per hour at 1e-12 dollars; NULL when an overflowing hour has
    -- no price at all. Beyond what DECIMAL(38, 12) holds (tokens x dollars above 1e25), at the hour's price per token
    -- rounded to 1e-12 dollars
    SELECT
        month,
        serving,
        sum(served) AS served_tokens,
        sum(tokens) AS demanded_tokens,
        count(*) FILTER (WHERE overflow > 0) AS overflow_hours,
        sum(CASE
            WHEN overflow = 0 THEN CAST(0 AS DECIMAL(38, 12))
            WHEN CAST(overflow AS DOUBLE) * CAST(price_cost_usd AS DOUBLE) < 1e25
                THEN money_count_share(price_cost_usd, overflow, price_tokens)
            ELSE CAST(money_div(price_cost_usd, price_tokens) * CAST(overflow AS DECIMAL(38, 0)) AS DECIMAL(38, 12))
        END) AS overflow_at_price_usd,
        bool_or(overflow > 0 AND NOT price_tokens > 0) AS overflow_unpriced
    FROM hourly
    GROUP BY month, serving
),
priced AS (
    -- what k serving nodes leave to the API, x U; 0 without demand, NULL when some of it has no price
    SELECT
        s.month,
        s.nodes AS serving,
        c.served_tokens,
        c.demanded_tokens,
        coalesce(c.overflow_hours, 0) AS overflow_hours,
        CASE
            WHEN c.demanded_tokens IS NULL THEN CAST(0 AS DECIMAL(38, 12))
            WHEN NOT c.overflow_unpriced THEN money_mul(c.overflow_at_price_usd, s.api_invoice_uplift)
        END AS api_usd
    FROM sizes AS s
    LEFT JOIN costed AS c ON s.month = c.month AND s.nodes = c.serving
),
plans AS (
    SELECT
        s.*,
        least(s.nodes, s.committed_nodes) AS plan_committed_nodes,
        greatest(s.nodes - s.committed_nodes, 0) AS plan_added_nodes,
        CAST(least(s.nodes, s.committed_nodes) * coalesce(s.committed_node_month_usd, 0)
            + greatest(s.nodes - s.committed_nodes, 0) * coalesce(s.node_month_usd, 0) AS DECIMAL(38, 12))
            AS cluster_cost_usd,
        CASE WHEN s.nodes > 0 THEN s.operating_cost_usd ELSE CAST(0 AS DECIMAL(38, 12)) END AS plan_operating_usd,
        p.served_tokens,
        p.demanded_tokens,
        p.overflow_hours,
        p.api_usd AS api_overflow_cost_usd,
        spare.api_usd AS api_with_spare_usd
    FROM sizes AS s
    -- n nodes serve as n - spare_nodes; with one spare, as n - 1
    JOIN priced AS p ON s.month = p.month AND p.serving = greatest(s.nodes - s.spare_nodes, 0)
    JOIN priced AS spare ON s.month = spare.month AND spare.serving = greatest(s.nodes - 1, 0)
),
totals AS (
    SELECT
        *,
        CAST(cluster_cost_usd + plan_operating_usd + api_overflow_cost_usd + review_usd AS DECIMAL(38, 12)) AS total_usd,
        CAST(cluster_cost_usd + plan_operating_usd + api_with_spare_usd + review_usd AS DECIMAL(38, 12))
            AS total_with_spare_usd
    FROM plans
)
SELECT
    month,
    'plan' AS scenario,
    nodes,
    CASE WHEN demanded_tokens > 0
        THEN CAST(CAST(served_tokens AS DOUBLE) / CAST(demanded_tokens AS DOUBLE) AS DECIMAL(18, 6))
    END AS self_hosted_token_share,
    plan_committed_nodes AS committed_nodes,
    plan_added_nodes AS added_nodes,
    cluster_cost_usd,
    plan_operating_usd AS operating_cost_usd,
    api_overflow_cost_usd,
    review_usd,
    total_usd,
    total_usd IS NOT NULL AND row_number() OVER (PARTITION BY month ORDER BY total_usd NULLS LAST, nodes) = 1 AS is_cheapest,
    total_with_spare_usd IS NOT NULL
    AND row_number() OVER (PARTITION BY month ORDER BY total_with_spare_usd NULLS LAST, nodes) = 1
    AS is_cheapest_with_spare,
    total_with_spare_usd,
    actual_total_usd,
    CAST(greatest(on_demand_node_hours - plan_added_nodes * hours_in_month, 0) AS DECIMAL(38, 6))
        AS on_demand_node_hours_released,
    nodes = current_nodes AS is_current,
    current_nodes,
    committed_node_month_usd,
    node_month_usd,
    node_cost_source,
    capacity_per_node AS capacity_per_node_tokens_per_second,
    capacity_source,
    overflow_hours,
    CAST(CAST(peak_tokens AS DOUBLE) / 3600 AS DECIMAL(38, 3)) AS peak_tokens_per_second,
    api_invoice_uplift
FROM totals
UNION ALL
SELECT
    month,
    'today' AS scenario,
    current_nodes AS nodes,
    served_share_today AS self_hosted_token_share,
    month_committed_nodes AS committed_nodes,
    greatest(current_nodes - month_committed_nodes, 0) AS added_nodes,
    actual_cluster_usd AS cluster_cost_usd,
    operating_cost_usd,
    actual_api_usd AS api_overflow_cost_usd,
    review_usd,
    actual_total_usd AS total_usd,
    FALSE AS is_cheapest,
    FALSE AS is_cheapest_with_spare,
    NULL AS total_with_spare_usd,
    actual_total_usd,
    CAST(0 AS DECIMAL(38, 6)) AS on_demand_node_hours_released,
    FALSE AS is_current,
    current_nodes,
    committed_node_month_usd,
    node_month_usd,
    node_cost_source,
    capacity_per_node AS capacity_per_node_tokens_per_second,
    capacity_source,
    NULL AS overflow_hours,
    CAST(CAST(peak_tokens AS DOUBLE) / 3600 AS DECIMAL(38, 3)) AS peak_tokens_per_second,
    api_invoice_uplift
FROM months
