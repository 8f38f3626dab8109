-- grain: one row per month x scenario x nodes
-- materialized: table
-- unique_key: month, scenario, nodes
-- description: How big a cluster for the work the cluster did this month, at renewal (every node's cost can change): the counterfactual month's 'nodes_n' scenario (marts.monthly_counterfactual reads its plan rows). Plan rows (scenario 'plan') for n = 0 up to the nodes the cluster's busiest hour could use (plus a spare, and at least today's count): n nodes at the month's capacity per node serve each hour's tokens on the cluster (every attempt, by its start hour, as the peak counts them) up to (n - the planning.spare_nodes setting) x capacity x 3,600; the cluster's accepted tasks the tokens above it carried (at its tokens per accepted task) go to the API at the break-even's own price C (the API's price of the accepted attempt x the API's attempts per accepted task W x the invoice uplift U), with the API's review per task in place of the cluster's. The cluster's failed attempts are never priced on the API, and the API route's own work keeps its run-rate and review at every n; so n = 0 is the counterfactual's everything-on-the-API month. Nodes are priced by what they are, the cheapest first (one capacity per node for the month, so the cheapest per token of capacity): owned nodes at their hardware amortisation, reserved nodes at the price in force at the month's end (the committed charges that ran latest into the month: their cost per node-hour x the hours in the month, so a reservation repriced or renewed inside the month counts at its new rate), owned nodes at their cost / their nodes, each kind's nodes its node-hours / hours in the month, rounded up; beyond them, a node at planning.node_month_usd when set, else at the month's on-demand price per node-hour x the hours in the month (a node added for the peak is paid all month: a 13-minute cold start rules out following demand), else at the committed nodes' cost per node; a committed kind dearer than such a node is never kept. Cluster charges that buy no node-hours (storage, network) and operating costs are paid while any node runs. Which API workloads would fill spare nodes is marts.monthly_workload_moves. One more row per month (scenario 'today') is the month as it was: today's nodes, the cluster's actual committed and on-demand cost, the operating cost, the API route's run-rate and review; its total is F + the API run-rate + review (actual_total_usd), the counterfactual's as_run. Months without a capacity per node or a node price have the all-API plan row (n = 0) only. `costledger plan` runs this same SQL with a what-if node price (then every node at that price) or capacity.
-- settings: planning_node_month_usd, planning_spare_nodes
-- column month DATE: First day of the month (UTC).
-- column scenario VARCHAR: 'plan' (a cluster size costed) or 'today' (the month as it was).
-- column nodes BIGINT: n, the cluster size (0 = everything on the API); on the today row, the nodes in service at the month's busiest hour (marts.monthly_break_even.nodes_in_service).
-- column self_hosted_token_share DECIMAL(18,6): The share of the cluster's tokens (every attempt) the n nodes serve within their capacity (today: 1 when the cluster served any).
-- column committed_nodes BIGINT: Of the n nodes, the month's owned and reserved nodes kept (owned_nodes + reserved_nodes); 0 under a what-if node price.
-- column added_nodes BIGINT: Of the n nodes, those beyond the committed ones, priced at node_month_usd.
-- column cluster_cost_usd DECIMAL(38,12): The n nodes' cost, cheapest first, plus (when n > 0) the cluster charges that buy no node-hours (today: the month's committed + on-demand cluster cost as billed).
-- column operating_cost_usd DECIMAL(38,12): The month's operating cost (platform engineering, operations, energy, ...) when n > 0; 0 at n = 0.
-- column api_overflow_cost_usd DECIMAL(38,12): C less the API's review per task, for the cluster's accepted tasks the n nodes cannot serve (tasks_moved_to_api); 0 on the today row.
-- column review_usd DECIMAL(38,12): Human review: the API route's, the cluster's for the tasks it keeps, the API's review per task for those moved.
-- column total_usd DECIMAL(38,12): cluster_cost_usd + operating_cost_usd + api_run_rate_usd + api_overflow_cost_usd + review_usd; NULL when tasks would move and the month has no API price (C).
-- column is_cheapest BOOLEAN: The plan row with the lowest total (the fewest nodes among equal totals).
-- column is_cheapest_with_spare BOOLEAN: The plan row with the lowest total_with_spare_usd: the cheapest size that still serves its plan when one node is lost (N+1).
-- column total_with_spare_usd DECIMAL(38,12): The total when n nodes keep one spare: n - 1 serve, the rest to the API.
-- column actual_total_usd DECIMAL(38,12): The month as it ran: F (committed + on-demand + operating) + the API route's run-rate + review on both routes; the same on every row, to compare each plan with.
-- column on_demand_node_hours_released DECIMAL(38,6): The on-demand node-hours billed this month that this plan does not use (the billed ones less the added nodes x the hours in the month; 0 on the today row).
-- column is_current BOOLEAN: A plan row whose n is today's node count (none when the cluster served work without a billed node-hour: its size is unknown).
-- column current_nodes BIGINT: Today's node count: the nodes in service at the busiest hour (0 without a cluster).
-- column committed_node_month_usd DECIMAL(38,12): The month's owned and reserved nodes' cost / their nodes; NULL without committed nodes.
-- column node_month_usd DECIMAL(38,12): The price of a node beyond the committed ones for the month (of every node under a what-if price).
-- column node_cost_source VARCHAR: Where node_month_usd comes from: 'setting' (planning.node_month_usd), 'on_demand' (the month's on-demand charges per node-hour x the hours in the month), 'committed' (no on-demand hours and no setting: the committed nodes' cost per node) or 'what_if'; NULL without a node price.
-- column capacity_per_node_tokens_per_second DECIMAL(38,3): Tokens per second one node serves within the SLO: the month's (marts.monthly_break_even), or a what-if given to `costledger plan`.
-- column capacity_source VARCHAR: 'sweep', 'observed', 'mixed' or 'observed_above_sweep' (the month's, see marts.monthly_utilisation) or 'what_if'; NULL without a capacity.
-- column overflow_hours BIGINT: Hours whose cluster tokens are above the serving nodes' capacity (some of their tasks go to the API); NULL on the today row.
-- column peak_tokens_per_second DECIMAL(38,3): The cluster's busiest hour's tokens / 3,600.
-- column api_invoice_uplift DECIMAL(38,12): U, the reference provider's price beyond list, inside C (see marts.monthly_break_even; 1 when the month has none).
-- column owned_nodes BIGINT: Of the n nodes, owned ones, each at its hardware amortisation.
-- column reserved_nodes BIGINT: Of the n nodes, reserved ones (committed charges: reserved, FOCUS committed), each at the price in force at the month's end for a whole month.
-- column api_run_rate_usd DECIMAL(38,12): The API route's run-rate (its own work, the same at every n).
-- column tasks_moved_to_api DECIMAL(38,12): The cluster's accepted tasks sent to the API: its accepted tasks x the tokens above the n nodes' capacity / its tokens (a fraction where an hour's overflow is part of a task).
-- column api_cost_usd DECIMAL(38,12): api_run_rate_usd + api_overflow_cost_usd: what the API is paid at this size.
-- column renewal_from DATE: The first month the month's commitments no longer bind: after the last write-off of the owned hardware in service and the last month of a committed charge running in the month (the latest of them); NULL without commitments. A plan at renewal can start then.
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
    -- the cluster's tokens in each clock hour (every attempt, by its start hour), over its clusters
    SELECT month, hour, sum(tokens) AS tokens
    FROM intermediate.int_cluster_nodes_hourly
    GROUP BY month, hour
),
demand AS (
    SELECT month, max(tokens) AS peak_tokens, sum(tokens) AS tokens FROM hours GROUP BY month
),
reviews AS (
    SELECT
        month,
        CAST(coalesce(sum(review_cost_usd) FILTER (WHERE route = 'api'), 0) AS DECIMAL(38, 12)) AS api_review_usd,
        CAST(coalesce(sum(review_cost_usd) FILTER (WHERE route = 'self_hosted'), 0) AS DECIMAL(38, 12)) AS sh_review_usd
    FROM marts.monthly_route_cost
    GROUP BY month
),
kinds_cost AS (
    -- the committed cost by what it buys: owned hardware's amortisation, the other committed charges (reserved)
    SELECT
        month,
        CAST(coalesce(sum(amount_usd) FILTER (WHERE category = 'hardware_amortisation'), 0) AS DECIMAL(38, 12))
            AS owned_usd,
        CAST(coalesce(sum(amount_usd) FILTER (WHERE cost_class = 'committed' AND category <> 'hardware_amortisation'), 0)
            AS DECIMAL(38, 12)) AS reserved_usd
    FROM marts.monthly_self_hosted_cost
    GROUP BY month
),
kinds_hours AS (
    SELECT
        month,
        sum(owned_node_hours) AS owned_node_hours,
        sum(committed_node_hours - owned_node_hours) AS reserved_node_hours,
        sum(on_demand_node_hours) AS on_demand_node_hours,
        sum(on_demand_usd) AS on_demand_usd
    FROM intermediate.int_cluster_nodes_monthly
    GROUP BY month
),
reserved_lines AS (
    -- the committed charges that buy node-hours (reservations; owned hardware is not a charge) of each month, with
    -- how far into it each ran
    SELECT
        sp.month,
        sp.hours_in_month,
        c.amount_usd,
        c.node_hours,
        least(c.charge_end, sp.month_end) AS ran_to
    FROM intermediate.int_months_spined AS sp
    JOIN intermediate.int_cluster_charge_lines AS c
        ON c.cost_class = 'committed' AND c.node_hours > 0 AND c.charge_start < sp.month_end
        AND c.charge_end > sp.month_start
),
reserved_latest AS (
    SELECT month, max(ran_to) AS ran_to FROM reserved_lines GROUP BY month
),
reserved_rates AS (
    -- at renewal a reserved node costs the price in force at the month's end: the price per node-hour of the charges
    -- that ran latest into it x the hours in the month (a reservation repriced or renewed inside the month at its
    -- new rate)
    SELECT l.month, money_count_share(sum(l.amount_usd), max(l.hours_in_month), sum(l.node_hours)) AS reserved_node_usd
    FROM reserved_lines AS l
    JOIN reserved_latest AS latest ON l.month = latest.month AND l.ran_to = latest.ran_to
    GROUP BY l.month
),
counted AS (
    -- each committed kind's whole nodes (node-hours / hours in the month, rounded up); none under a what-if price
    SELECT
        b.*,
        sp.hours_in_month,
        coalesce(b.nodes_in_service, 0) AS current_nodes,
        coalesce(k.on_demand_node_hours, 0) AS on_demand_node_hours,
        CAST(coalesce(k.on_demand_usd, 0) AS DECIMAL(38, 12)) AS on_demand_usd,
        coalesce(c.owned_usd, 0) AS owned_usd,
        coalesce(c.reserved_usd, 0) AS reserved_usd,
        coalesce(CAST(ceil(round(k.owned_node_hours / sp.hours_in_month, 6)) AS BIGINT), 0) AS owned_nodes_billed,
        coalesce(CAST(ceil(round(k.reserved_node_hours / sp.hours_in_month, 6)) AS BIGINT), 0) AS reserved_nodes_billed,
        w.node_month_usd AS what_if_node_usd,
        w.capacity_tps AS what_if_capacity,
        s.node_month_usd AS setting_node_usd,
        s.spare_nodes,
        rn.renewal_from,
        rr.reserved_node_usd AS latest_reserved_node_usd
    FROM marts.monthly_break_even AS b
    JOIN intermediate.int_months_spined AS sp ON b.month = sp.month
    CROSS JOIN what_if AS w
    CROSS JOIN settings AS s
    LEFT JOIN kinds_hours AS k ON b.month = k.month
    LEFT JOIN kinds_cost AS c ON b.month = c.month
    LEFT JOIN intermediate.int_cluster_renewals_monthly AS rn ON b.month = rn.month
    LEFT JOIN reserved_rates AS rr ON b.month = rr.month
),
reserved_priced AS (
    SELECT
        *,
        CASE WHEN reserved_nodes_billed > 0
            THEN coalesce(latest_reserved_node_usd, money_div(reserved_usd, reserved_nodes_billed)) END
            AS reserved_node_usd
    FROM counted
),
priced_kinds AS (
    SELECT
        *,
        CASE WHEN what_if_node_usd IS NULL THEN owned_nodes_billed ELSE 0 END AS owned_count,
        CASE WHEN what_if_node_usd IS NULL THEN reserved_nodes_billed ELSE 0 END AS reserved_count,
        CASE WHEN owned_nodes_billed + reserved_nodes_billed > 0
            THEN money_div(CASE WHEN owned_nodes_billed > 0 THEN owned_usd ELSE 0 END
                + CASE WHEN reserved_nodes_billed > 0 THEN money_mul(reserved_node_usd, reserved_nodes_billed) ELSE 0 END,
                owned_nodes_billed + reserved_nodes_billed)
        END AS committed_node_month_usd,
        CASE WHEN owned_nodes_billed > 0 THEN money_div(owned_usd, owned_nodes_billed) END AS owned_node_usd
    FROM reserved_priced
),
months AS (
    SELECT
        k.*,
        CASE
            WHEN k.what_if_node_usd IS NOT NULL THEN k.what_if_node_usd
            WHEN k.setting_node_usd IS NOT NULL THEN k.setting_node_usd
            WHEN k.on_demand_node_hours > 0
                THEN money_count_share(k.on_demand_usd, k.hours_in_month, k.on_demand_node_hours)
            ELSE k.committed_node_month_usd
        END AS node_month_usd,
        CASE
            WHEN k.what_if_node_usd IS NOT NULL THEN 'what_if'
            WHEN k.setting_node_usd IS NOT NULL THEN 'setting'
            WHEN k.on_demand_node_hours > 0 THEN 'on_demand'
            WHEN k.owned_nodes_billed + k.reserved_nodes_billed > 0 THEN 'committed'
        END AS node_cost_source,
        coalesce(k.what_if_capacity, nullif(k.capacity_per_node_tokens_per_second, 0)) AS capacity_per_node,
        CASE
            WHEN k.what_if_capacity IS NOT NULL THEN 'what_if'
            WHEN k.capacity_per_node_tokens_per_second > 0 THEN k.capacity_source
        END AS plan_capacity_source,
        -- the cluster charges that buy no node-hours (storage, network): paid while any node runs
        CAST(coalesce(k.committed_cost_usd, 0) + coalesce(k.avoidable_cost_usd, 0) - k.on_demand_usd
            - CASE WHEN k.owned_nodes_billed > 0 THEN k.owned_usd ELSE 0 END
            - CASE WHEN k.reserved_nodes_billed > 0 THEN k.reserved_usd ELSE 0 END AS DECIMAL(38, 12)) AS unnoded_usd,
        CAST(coalesce(k.operating_cost_usd, 0) AS DECIMAL(38, 12)) AS operating_usd,
        CAST(coalesce(k.api_run_rate_usd, 0) AS DECIMAL(38, 12)) AS run_rate_usd,
        k.api_cost_per_accepted_task_usd AS c,
        coalesce(k.api_review_per_accepted_task_usd, 0) AS c_review,
        coalesce(k.self_hosted_accepted_tasks, 0) AS accepted,
        coalesce(r.api_review_usd, 0) AS api_review_usd,
        coalesce(r.sh_review_usd, 0) AS sh_review_usd,
        coalesce(d.peak_tokens, 0) AS peak_tokens,
        coalesce(d.tokens, 0) AS cluster_tokens
    FROM priced_kinds AS k
    LEFT JOIN demand AS d ON k.month = d.month
    LEFT JOIN reviews AS r ON k.month = r.month
),
ordered AS (
    -- the cheapest kind first; a committed kind dearer than a node beyond them is never kept
    SELECT
        *,
        CASE WHEN owned_node_usd <= coalesce(node_month_usd, owned_node_usd) THEN owned_count ELSE 0 END AS owned_kept,
        CASE WHEN reserved_node_usd <= coalesce(node_month_usd, reserved_node_usd) THEN reserved_count ELSE 0 END
            AS reserved_kept,
        coalesce(owned_node_usd <= reserved_node_usd, owned_count > 0) AS owned_first,
        coalesce(CAST(ceil(peak_tokens / (capacity_per_node * 3600)) AS BIGINT), 0) AS peak_nodes
    FROM months
),
sizes AS MATERIALIZED (
    -- 0 .. the nodes the busiest hour could use plus the spares, at least today's count, at most 1,000
    SELECT
        m.*,
        unnest(range(0, 1 + CASE
            WHEN m.capacity_per_node > 0 AND m.node_month_usd IS NOT NULL THEN least(1000, greatest(
                m.current_nodes,
                m.peak_nodes + CASE WHEN m.peak_tokens > 0 THEN greatest(m.spare_nodes, 1) ELSE 0 END
            ))
            ELSE 0
        END)) AS nodes
    FROM ordered AS m
),
capacities AS (
    -- the whole tokens k serving nodes handle in an hour
    SELECT DISTINCT
        month,
        nodes AS serving,
        coalesce(CAST(floor(nodes * capacity_per_node * 3600) AS HUGEINT), 0) AS hour_capacity
    FROM sizes
),
overflows AS (
    SELECT
        s.month,
        s.serving,
        sum(greatest(h.tokens - s.hour_capacity, 0)) AS overflow_tokens,
        count(*) FILTER (WHERE h.tokens > s.hour_capacity) AS overflow_hours
    FROM capacities AS s
    JOIN hours AS h ON s.month = h.month
    GROUP BY s.month, s.serving
),
moved AS (
    -- what k serving nodes leave to the API: the cluster's accepted tasks x its tokens above capacity / its tokens,
    -- at C's token part, with the API's review in place of the cluster's; k = 0 moves every accepted task
    SELECT
        m.month,
        m.nodes AS serving,
        coalesce(o.overflow_tokens, 0) AS overflow_tokens,
        coalesce(o.overflow_hours, 0) AS overflow_hours,
        CASE
            WHEN m.nodes = 0 THEN CAST(m.accepted AS DECIMAL(38, 12))
            WHEN coalesce(o.overflow_tokens, 0) = 0 THEN CAST(0 AS DECIMAL(38, 12))
            ELSE money_count_share(m.accepted, o.overflow_tokens, m.cluster_tokens)
        END AS tasks_moved,
        CASE
            WHEN m.nodes = 0 THEN CAST(m.cluster_tokens AS DECIMAL(38, 0))
            ELSE CAST(coalesce(o.overflow_tokens, 0) AS DECIMAL(38, 0))
        END AS moved_tokens,
        -- every accepted task on the API: its token part, and the API's review of it (products taken once here, not
        -- inside each share below: every copy of the exact arithmetic lengthens the plan)
        money_mul(m.c - m.c_review, m.accepted) AS all_moved_usd,
        money_mul(m.c_review, m.accepted) AS all_review_usd
    FROM sizes AS m
    LEFT JOIN overflows AS o ON m.month = o.month AND m.nodes = o.serving
),
priced AS MATERIALIZED (
    SELECT
        v.month,
        v.serving,
        v.overflow_tokens,
        v.overflow_hours,
        v.tasks_moved,
        CASE
            WHEN v.tasks_moved = 0 THEN CAST(0 AS DECIMAL(38, 12))
            WHEN v.serving = 0 THEN v.all_moved_usd
            ELSE money_count_share(v.all_moved_usd, v.moved_tokens, m.cluster_tokens)
        END AS api_moved_usd,
        m.api_review_usd + CASE
            WHEN v.tasks_moved = 0 THEN m.sh_review_usd
            WHEN v.serving = 0 THEN v.all_review_usd
            ELSE m.sh_review_usd - money_count_share(m.sh_review_usd, v.moved_tokens, m.cluster_tokens)
                + money_count_share(v.all_review_usd, v.moved_tokens, m.cluster_tokens)
        END AS review_usd
    FROM moved AS v
    JOIN sizes AS m ON v.month = m.month AND v.serving = m.nodes
),
plans AS (
    SELECT
        s.*,
        CASE WHEN s.owned_first THEN least(s.nodes, s.owned_kept)
            ELSE least(greatest(s.nodes - s.reserved_kept, 0), s.owned_kept) END AS plan_owned,
        CASE WHEN s.owned_first THEN least(greatest(s.nodes - s.owned_kept, 0), s.reserved_kept)
            ELSE least(s.nodes, s.reserved_kept) END AS plan_reserved,
        greatest(s.nodes - s.owned_kept - s.reserved_kept, 0) AS plan_added,
        p.overflow_tokens,
        p.overflow_hours,
        p.tasks_moved,
        p.api_moved_usd,
        p.review_usd AS plan_review_usd,
        spare.api_moved_usd AS spare_api_moved_usd,
        spare.review_usd AS spare_review_usd
    FROM sizes AS s
    -- n nodes serve as n - spare_nodes; with one spare, as n - 1
    JOIN priced AS p ON s.month = p.month AND p.serving = greatest(s.nodes - s.spare_nodes, 0)
    JOIN priced AS spare ON s.month = spare.month AND spare.serving = greatest(s.nodes - 1, 0)
),
costed AS (
    SELECT
        *,
        CAST(coalesce(money_count_share(owned_usd, plan_owned, owned_count), 0)
            + coalesce(money_mul(reserved_node_usd, plan_reserved), 0)
            + coalesce(money_mul(node_month_usd, plan_added), 0)
            + CASE WHEN nodes > 0 THEN unnoded_usd ELSE 0 END AS DECIMAL(38, 12)) AS cluster_cost_usd,
        CASE WHEN nodes > 0 THEN operating_usd ELSE CAST(0 AS DECIMAL(38, 12)) END AS plan_operating_usd
    FROM plans
),
totals AS (
    SELECT
        *,
        CAST(cluster_cost_usd + plan_operating_usd + run_rate_usd + api_moved_usd + plan_review_usd AS DECIMAL(38, 12))
            AS total_usd,
        CAST(cluster_cost_usd + plan_operating_usd + run_rate_usd + spare_api_moved_usd + spare_review_usd
            AS DECIMAL(38, 12)) AS total_with_spare_usd,
        CAST(coalesce(fixed_cost_usd, 0) + run_rate_usd + api_review_usd + sh_review_usd AS DECIMAL(38, 12))
            AS actual_total_usd
    FROM costed
)
SELECT
    month,
    'plan' AS scenario,
    nodes,
    CASE WHEN cluster_tokens > 0
        THEN CAST(CAST(cluster_tokens - overflow_tokens AS DOUBLE) / CAST(cluster_tokens AS DOUBLE) AS DECIMAL(18, 6))
    END AS self_hosted_token_share,
    plan_owned + plan_reserved AS committed_nodes,
    plan_added AS added_nodes,
    cluster_cost_usd,
    plan_operating_usd AS operating_cost_usd,
    CAST(api_moved_usd AS DECIMAL(38, 12)) AS api_overflow_cost_usd,
    CAST(plan_review_usd AS DECIMAL(38, 12)) AS review_usd,
    total_usd,
    total_usd IS NOT NULL AND row_number() OVER (PARTITION BY month ORDER BY total_usd NULLS LAST, nodes) = 1 AS is_cheapest,
    total_with_spare_usd IS NOT NULL
    AND row_number() OVER (PARTITION BY month ORDER BY total_with_spare_usd NULLS LAST, nodes) = 1
    AS is_cheapest_with_spare,
    total_with_spare_usd,
    actual_total_usd,
    CAST(greatest(on_demand_node_hours - plan_added * hours_in_month, 0) AS DECIMAL(38, 6))
        AS on_demand_node_hours_released,
    -- a cluster that served work without a billed node-hour has no known size: none of the plan's is today's
    nodes = current_nodes AND NOT (current_nodes = 0 AND cluster_tokens > 0) AS is_current,
    current_nodes,
    committed_node_month_usd,
    node_month_usd,
    node_cost_source,
    capacity_per_node AS capacity_per_node_tokens_per_second,
    plan_capacity_source AS capacity_source,
    overflow_hours,
    CAST(CAST(peak_tokens AS DOUBLE) / 3600 AS DECIMAL(38, 3)) AS peak_tokens_per_second,
    coalesce(api_invoice_uplift, 1) AS api_invoice_uplift,
    plan_owned AS owned_nodes,
    plan_reserved AS reserved_nodes,
    run_rate_usd AS api_run_rate_usd,
    CAST(tasks_moved AS DECIMAL(38, 12)) AS tasks_moved_to_api,
    CAST(run_rate_usd + api_moved_usd AS DECIMAL(38, 12)) AS api_cost_usd,
    renewal_from
FROM totals
UNION ALL
SELECT
    month,
    'today' AS scenario,
    current_nodes AS nodes,
    CASE WHEN cluster_tokens > 0 THEN CAST(1 AS DECIMAL(18, 6)) END AS self_hosted_token_share,
    least(current_nodes, owned_count + reserved_count) AS committed_nodes,
    greatest(current_nodes - owned_count - reserved_count, 0) AS added_nodes,
    CAST(coalesce(committed_cost_usd, 0) + coalesce(avoidable_cost_usd, 0) AS DECIMAL(38, 12)) AS cluster_cost_usd,
    operating_usd AS operating_cost_usd,
    CAST(0 AS DECIMAL(38, 12)) AS api_overflow_cost_usd,
    CAST(api_review_usd + sh_review_usd AS DECIMAL(38, 12)) AS review_usd,
    CAST(coalesce(fixed_cost_usd, 0) + run_rate_usd + api_review_usd + sh_review_usd AS DECIMAL(38, 12)) AS total_usd,
    FALSE AS is_cheapest,
    FALSE AS is_cheapest_with_spare,
    NULL AS total_with_spare_usd,
    CAST(coalesce(fixed_cost_usd, 0) + run_rate_usd + api_review_usd + sh_review_usd AS DECIMAL(38, 12))
        AS actual_total_usd,
    CAST(0 AS DECIMAL(38, 6)) AS on_demand_node_hours_released,
    FALSE AS is_current,
    current_nodes,
    committed_node_month_usd,
    node_month_usd,
    node_cost_source,
    capacity_per_node AS capacity_per_node_tokens_per_second,
    plan_capacity_source AS capacity_source,
    NULL AS overflow_hours,
    CAST(CAST(peak_tokens AS DOUBLE) / 3600 AS DECIMAL(38, 3)) AS peak_tokens_per_second,
    coalesce(api_invoice_uplift, 1) AS api_invoice_uplift,
    least(current_nodes, owned_count) AS owned_nodes,
    least(greatest(current_nodes - owned_count, 0), reserved_count) AS reserved_nodes,
    run_rate_usd AS api_run_rate_usd,
    CAST(0 AS DECIMAL(38, 12)) AS tasks_moved_to_api,
    run_rate_usd AS api_cost_usd,
    renewal_from
FROM ordered
