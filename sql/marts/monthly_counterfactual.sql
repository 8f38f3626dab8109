-- grain: one row per month x horizon x scenario
-- materialized: table
-- unique_key: month, horizon, scenario, nodes
-- description: What the month would have cost had its work been split otherwise (every scenario every month at the horizons where it means something: as_run and all_api at both, nodes_n at renewal, without_on_demand, on_demand_worth_keeping and moves this month; a scenario that changes nothing has as_run's totals and says why in unchanged_because), every scenario priced from the break-even's own inputs (marts.monthly_break_even), so that no two recommendations can disagree. The unit moved between routes is the accepted task: moved to the API, one costs the comparator C (its accepted attempt at the API's price x the API's own attempts per accepted task W x the invoice uplift U, plus the API's review per accepted task); the API route's own work keeps its run-rate and review in every scenario, and the cluster's failed attempts are never priced on the API. Two horizons: 'this_month' (owned hardware and reservations in force are paid whatever happens: their cost stays) and 'at_renewal' (every cost of the cluster can change). Scenarios: 'as_run' (the month as it ran: F + the API's run-rate + review on both routes; the month as billed, with the API's tax and credits, is not a scenario), 'all_api' (every accepted task on the API: at renewal the cluster's whole fixed cost goes, this month its committed cost stays and its operating cost stops with the service), 'without_on_demand' (this month: the on-demand node-hours cancelled; in each hour the cluster served more tokens than its committed nodes' capacity, the tokens above it go to the API as accepted tasks at the cluster's tokens per accepted task), 'on_demand_worth_keeping' (this month: each hour's on-demand node-hours judged alone: kept when the accepted tasks the hour's tokens above the committed nodes carried are worth at least their price at C - V each, cancelled otherwise, their work to the API as in without_on_demand; never dearer than the month as run or than without_on_demand), 'moves' (this month: the API workloads that fit the committed nodes' spare capacity in every hour they have work, marts.monthly_workload_moves' rows that fit, moved onto the cluster: their API cost and review go, the cluster's review per task comes; the month's total falls by their cumulative_saving_usd), 'nodes_n' (at renewal: n nodes kept for the cluster's work, each priced by what it is, cheapest first, each hour's tokens above their capacity sent to the API as accepted tasks at C: the plan rows of marts.monthly_hybrid_plan, n = 0 being all_api). By construction, at renewal all_api - as_run is the break-even's saving (sign and dollars), and this month it is the shutdown question's answer.
-- column month DATE: First day of the month (UTC).
-- column horizon VARCHAR: 'this_month' (commitments sunk) or 'at_renewal' (every cost can change).
-- column scenario VARCHAR: 'as_run', 'all_api', 'without_on_demand', 'on_demand_worth_keeping', 'moves' or 'nodes_n' (see the description).
-- column cluster_cost_usd DECIMAL(38,12): Hardware amortisation and cluster charges the scenario pays (committed + avoidable as run; the committed part alone this month without the cluster; nothing at renewal without it).
-- column operating_cost_usd DECIMAL(38,12): Operating costs (opex, metered energy) the scenario pays: all of them while the service runs, none without it.
-- column api_cost_usd DECIMAL(38,12): The API route's run-rate, plus C's token part (C less the API's review per accepted task) for every accepted task moved to the API.
-- column review_usd DECIMAL(38,12): Human review: the API route's, plus the cluster's for the tasks it keeps, plus the API's review per accepted task for those moved.
-- column total_usd DECIMAL(38,12): cluster_cost_usd + operating_cost_usd + api_cost_usd + review_usd; NULL when the month has no API price (C).
-- column versus_as_run_usd DECIMAL(38,12): total_usd - the as_run total: what the scenario would have cost more (positive) or less (negative) than the month as it ran.
-- column tasks_moved_to_api DECIMAL(38,12): Accepted tasks of the cluster the scenario sends to the API (a fraction where an hour's tokens above capacity are a part of a task); on the moves row, negative: the API's accepted tasks moved onto the cluster.
-- column on_demand_node_hours DECIMAL(38,6): without_on_demand and on_demand_worth_keeping only: the on-demand node-hours the month was billed.
-- column on_demand_node_hours_enabling_nothing DECIMAL(38,6): without_on_demand and on_demand_worth_keeping only: of them, those in hours when the committed nodes could serve every token started (or no request started): they enabled no task, so cancelling them costs nothing.
-- column on_demand_cost_usd DECIMAL(38,12): without_on_demand and on_demand_worth_keeping only: what the on-demand node-hours cost.
-- column caveats VARCHAR[]: What the scenario's figures rest on that the data could not confirm: the break-even's verdict_caveats (the same C, capacity and invoices).
-- column nodes BIGINT: nodes_n only: n, the nodes kept (0 = no cluster); NULL on the other scenarios.
-- column is_cheapest BOOLEAN: nodes_n only: the cheapest n of the month (the fewest nodes among equal totals).
-- column renewal_from DATE: At renewal only: the first month the month's commitments no longer bind (marts.monthly_hybrid_plan.renewal_from); NULL this month and without commitments.
-- column on_demand_node_hours_kept DECIMAL(38,6): on_demand_worth_keeping only: the on-demand node-hours it keeps, those in hours whose enabled work is worth at least their price; the others are cancelled.
-- column unchanged_because VARCHAR: Why a this-month scenario changes nothing of the month as run (its totals are as_run's): no on-demand node-hours billed, every one worth keeping, no API work, or none that fits and saves; NULL when it changes something, and on as_run, all_api and nodes_n.
WITH reviews AS (
    SELECT
        month,
        CAST(coalesce(sum(review_cost_usd) FILTER (WHERE route = 'api'), 0) AS DECIMAL(38, 12)) AS api_review_usd,
        CAST(coalesce(sum(review_cost_usd) FILTER (WHERE route = 'self_hosted'), 0) AS DECIMAL(38, 12)) AS sh_review_usd
    FROM marts.monthly_route_cost
    GROUP BY month
),
inputs AS (
    SELECT
        b.month,
        coalesce(b.committed_cost_usd, 0) AS committed_usd,
        coalesce(b.operating_cost_usd, 0) AS operating_usd,
        coalesce(b.avoidable_cost_usd, 0) AS avoidable_usd,
        b.api_run_rate_usd AS run_rate_usd,
        b.api_cost_per_accepted_task_usd AS c,
        coalesce(b.api_review_per_accepted_task_usd, 0) AS c_review,
        b.self_hosted_variable_cost_per_accepted_task_usd AS v,
        coalesce(b.self_hosted_accepted_tasks, 0) AS n,
        b.verdict_caveats,
        coalesce(r.api_review_usd, 0) AS api_review_usd,
        coalesce(r.sh_review_usd, 0) AS sh_review_usd
    FROM marts.monthly_break_even AS b
    LEFT JOIN reviews AS r USING (month)
),
-- the cluster's accepted tasks on the API: C's token part of them, and the review they move (products taken once
-- here, not inside each share below: every copy of the exact arithmetic lengthens the plan)
all_moved AS (
    SELECT
        *,
        money_mul(c - c_review, n) AS all_api_usd,
        money_mul(c_review - v, n) AS all_review_moved_usd
    FROM inputs
),
-- each hour's tokens above what the committed nodes serve: the work the on-demand nodes enabled (at the capacity a
-- what-if of `costledger plan` gives, when it gives one)
hours AS (
    SELECT
        h.month,
        h.tokens,
        h.on_demand_nodes,
        greatest(h.tokens - coalesce(CAST(floor(CAST(h.committed_nodes AS DOUBLE)
            * CAST(plan_capacity(k.capacity_per_node_tokens_per_second) AS DOUBLE) * 3600) AS HUGEINT), 0), 0)
            AS above_committed,
        plan_capacity(k.capacity_per_node_tokens_per_second) > 0 AS capacity_known
    FROM intermediate.int_cluster_nodes_hourly AS h
    LEFT JOIN intermediate.int_cluster_capacity_monthly AS k USING (cluster_id, month)
),
enabled AS (
    SELECT
        month,
        sum(tokens) AS sh_tokens,
        sum(above_committed) AS enabled_tokens,
        -- of them, those in hours with on-demand nodes: the work cancelling on-demand hours can send to the API
        coalesce(sum(above_committed) FILTER (WHERE on_demand_nodes > 0), 0) AS on_demand_enabled_tokens,
        coalesce(sum(on_demand_nodes) FILTER (WHERE above_committed > 0), 0) AS enabling_node_hours,
        bool_and(coalesce(capacity_known, FALSE)) AS capacity_known
    FROM hours
    GROUP BY month
),
on_demand AS (
    SELECT month, sum(on_demand_node_hours) AS node_hours, sum(on_demand_usd) AS usd
    FROM intermediate.int_cluster_nodes_monthly
    GROUP BY month
),
-- the cluster's accepted tasks those tokens carried, at its tokens per accepted task (every attempt): C's token part
-- and the review they move, x n x enabled tokens / the cluster's tokens
moved AS (
    SELECT
        i.month,
        coalesce(o.node_hours, 0) AS on_demand_node_hours,
        CAST(coalesce(o.usd, 0) AS DECIMAL(38, 12)) AS on_demand_usd,
        coalesce(e.enabling_node_hours, 0) AS enabling_node_hours,
        CASE
            WHEN coalesce(e.enabled_tokens, 0) = 0 OR coalesce(o.node_hours, 0) = 0 THEN CAST(0 AS DECIMAL(38, 12))
            WHEN e.capacity_known THEN money_count_share(i.n, e.enabled_tokens, e.sh_tokens)
        END AS tasks_moved,
        CASE
            WHEN coalesce(e.enabled_tokens, 0) = 0 OR coalesce(o.node_hours, 0) = 0 THEN CAST(0 AS DECIMAL(38, 12))
            WHEN e.capacity_known THEN money_count_share(i.all_api_usd, e.enabled_tokens, e.sh_tokens)
        END AS moved_api_usd,
        CASE
            WHEN coalesce(e.enabled_tokens, 0) = 0 OR coalesce(o.node_hours, 0) = 0 THEN CAST(0 AS DECIMAL(38, 12))
            WHEN e.capacity_known THEN money_count_share(i.all_review_moved_usd, e.enabled_tokens, e.sh_tokens)
        END AS moved_review_usd
    FROM all_moved AS i
    LEFT JOIN enabled AS e USING (month)
    LEFT JOIN on_demand AS o USING (month)
),
-- each hour with on-demand nodes, judged alone: the accepted tasks its tokens above the committed nodes carried
-- (their share of the cluster's, as above) are worth C - V each; the hour's on-demand node-hours cost their share of
-- the month's on-demand charges. An hour whose work is worth less than its price is cancelled
hour_worth AS (
    SELECT
        h.month,
        h.on_demand_nodes,
        money_share(o.usd, h.on_demand_nodes, o.node_hours) AS cost_usd,
        money_count_share(i.n, h.above_committed, e.sh_tokens) AS tasks,
        money_count_share(i.all_api_usd, h.above_committed, e.sh_tokens) AS api_usd,
        money_count_share(i.all_review_moved_usd, h.above_committed, e.sh_tokens) AS review_usd,
        money_mul(i.c - i.v, money_count_share(i.n, h.above_committed, e.sh_tokens)) AS worth_usd
    FROM hours AS h
    JOIN all_moved AS i USING (month)
    JOIN enabled AS e USING (month)
    JOIN on_demand AS o USING (month)
    WHERE h.on_demand_nodes > 0 AND h.above_committed > 0 AND e.capacity_known AND o.node_hours > 0
),
-- the work of every hour with on-demand nodes, at once (one share each, as without_on_demand takes its own)
on_demand_work AS (
    SELECT
        i.month,
        money_count_share(i.n, e.on_demand_enabled_tokens, e.sh_tokens) AS tasks,
        money_count_share(i.all_api_usd, e.on_demand_enabled_tokens, e.sh_tokens) AS api_usd,
        money_count_share(i.all_review_moved_usd, e.on_demand_enabled_tokens, e.sh_tokens) AS review_usd
    FROM all_moved AS i
    JOIN enabled AS e USING (month)
    WHERE e.on_demand_enabled_tokens > 0 AND e.capacity_known
),
-- the hours worth keeping: what they cost, and the work they keep off the API
kept AS (
    SELECT
        month,
        sum(on_demand_nodes) AS node_hours,
        sum(cost_usd) AS cost_usd,
        sum(tasks) AS tasks,
        sum(api_usd) AS api_usd,
        sum(review_usd) AS review_usd
    FROM hour_worth
    WHERE worth_usd >= cost_usd
    GROUP BY month
),
-- the API workloads that fit the committed nodes' spare capacity (marts.monthly_workload_moves): their API cost and
-- review go, the cluster's review per task (V) for each of their accepted tasks comes
moves AS (
    SELECT
        month,
        sum(money_mul(api_cost_per_accepted_task_usd, accepted_tasks) - review_cost_usd) AS api_usd,
        sum(review_cost_usd) AS api_review_usd,
        sum(money_mul(self_hosted_variable_cost_per_accepted_task_usd, accepted_tasks)) AS sh_review_usd,
        sum(accepted_tasks) AS tasks
    FROM marts.monthly_workload_moves
    WHERE fits
    GROUP BY month
),
horizons AS (SELECT 'this_month' AS horizon UNION ALL SELECT 'at_renewal' AS horizon),
scenarios AS (
    SELECT
        i.month,
        hz.horizon,
        'as_run' AS scenario,
        i.committed_usd + i.avoidable_usd AS cluster_cost_usd,
        i.operating_usd AS operating_cost_usd,
        i.run_rate_usd AS api_cost_usd,
        i.api_review_usd + i.sh_review_usd AS review_usd,
        CAST(0 AS DECIMAL(38, 12)) AS tasks_moved_to_api,
        CAST(NULL AS DECIMAL(38, 6)) AS on_demand_node_hours,
        CAST(NULL AS DECIMAL(38, 6)) AS on_demand_node_hours_enabling_nothing,
        CAST(NULL AS DECIMAL(38, 12)) AS on_demand_cost_usd,
        CAST(NULL AS BIGINT) AS nodes,
        CAST(NULL AS BOOLEAN) AS is_cheapest
    FROM inputs AS i
    CROSS JOIN horizons AS hz
    UNION ALL
    -- everything on the API: this month the committed cost stays, at renewal it goes
    SELECT
        i.month,
        hz.horizon,
        'all_api',
        CASE WHEN hz.horizon = 'this_month' THEN i.committed_usd ELSE 0 END,
        0,
        i.run_rate_usd + money_mul(i.c - i.c_review, i.n),
        i.api_review_usd + money_mul(i.c_review, i.n),
        i.n,
        NULL,
        NULL,
        NULL,
        NULL,
        NULL
    FROM inputs AS i
    CROSS JOIN horizons AS hz
    UNION ALL
    SELECT
        i.month,
        'this_month',
        'without_on_demand',
        i.committed_usd + i.avoidable_usd - m.on_demand_usd,
        i.operating_usd,
        i.run_rate_usd + m.moved_api_usd,
        i.api_review_usd + i.sh_review_usd + m.moved_review_usd,
        m.tasks_moved,
        m.on_demand_node_hours,
        greatest(m.on_demand_node_hours - m.enabling_node_hours, 0),
        m.on_demand_usd,
        NULL,
        NULL
    FROM inputs AS i
    JOIN moved AS m USING (month)
    UNION ALL
    -- the on-demand node-hours cancelled one by one: every one but those whose enabled work is worth their price
    SELECT
        i.month,
        'this_month',
        'on_demand_worth_keeping',
        i.committed_usd + i.avoidable_usd - m.on_demand_usd + coalesce(k.cost_usd, 0),
        i.operating_usd,
        i.run_rate_usd + CASE WHEN m.tasks_moved IS NOT NULL THEN coalesce(w.api_usd, 0) - coalesce(k.api_usd, 0) END,
        i.api_review_usd + i.sh_review_usd
        + CASE WHEN m.tasks_moved IS NOT NULL THEN coalesce(w.review_usd, 0) - coalesce(k.review_usd, 0) END,
        CASE WHEN m.tasks_moved IS NOT NULL THEN coalesce(w.tasks, 0) - coalesce(k.tasks, 0) END,
        m.on_demand_node_hours,
        greatest(m.on_demand_node_hours - m.enabling_node_hours, 0),
        m.on_demand_usd,
        NULL,
        NULL
    FROM inputs AS i
    JOIN moved AS m USING (month)
    LEFT JOIN on_demand_work AS w USING (month)
    LEFT JOIN kept AS k USING (month)
    UNION ALL
    SELECT
        i.month,
        'this_month',
        'moves',
        i.committed_usd + i.avoidable_usd,
        i.operating_usd,
        i.run_rate_usd - coalesce(v.api_usd, 0),
        i.api_review_usd - coalesce(v.api_review_usd, 0) + i.sh_review_usd + coalesce(v.sh_review_usd, 0),
        -coalesce(v.tasks, 0),
        NULL,
        NULL,
        NULL,
        NULL,
        NULL
    FROM inputs AS i
    LEFT JOIN moves AS v USING (month)
    UNION ALL
    -- n nodes kept at renewal, priced by what they are: the hybrid plan's rows (its SQL also runs what-ifs)
    SELECT
        p.month,
        'at_renewal',
        'nodes_n',
        p.cluster_cost_usd,
        p.operating_cost_usd,
        p.api_run_rate_usd + p.api_overflow_cost_usd,
        p.review_usd,
        p.tasks_moved_to_api,
        NULL,
        NULL,
        NULL,
        p.nodes,
        p.is_cheapest
    FROM marts.monthly_hybrid_plan AS p
    WHERE p.scenario = 'plan'
),
totals AS (
    SELECT
        s.*,
        CASE WHEN i.c IS NOT NULL OR s.scenario IN ('as_run', 'nodes_n', 'moves')
            THEN s.cluster_cost_usd + s.operating_cost_usd + s.api_cost_usd + s.review_usd END AS total_usd,
        i.verdict_caveats
    FROM scenarios AS s
    JOIN inputs AS i USING (month)
),
as_run AS (SELECT month, horizon, total_usd AS as_run_usd FROM totals WHERE scenario = 'as_run'),
renewals AS (SELECT DISTINCT month, renewal_from FROM marts.monthly_hybrid_plan),
api_workloads AS (SELECT month, count(*) AS workloads FROM marts.monthly_workload_moves GROUP BY month)
SELECT
    t.month,
    t.horizon,
    t.scenario,
    CAST(t.cluster_cost_usd AS DECIMAL(38, 12)) AS cluster_cost_usd,
    CAST(t.operating_cost_usd AS DECIMAL(38, 12)) AS operating_cost_usd,
    CAST(t.api_cost_usd AS DECIMAL(38, 12)) AS api_cost_usd,
    CAST(t.review_usd AS DECIMAL(38, 12)) AS review_usd,
    CAST(t.total_usd AS DECIMAL(38, 12)) AS total_usd,
    CAST(t.total_usd - a.as_run_usd AS DECIMAL(38, 12)) AS versus_as_run_usd,
    CAST(t.tasks_moved_to_api AS DECIMAL(38, 12)) AS tasks_moved_to_api,
    t.on_demand_node_hours,
    t.on_demand_node_hours_enabling_nothing,
    t.on_demand_cost_usd,
    t.verdict_caveats AS caveats,
    t.nodes,
    t.is_cheapest,
    CASE WHEN t.horizon = 'at_renewal' THEN rn.renewal_from END AS renewal_from,
    CAST(CASE WHEN t.scenario = 'on_demand_worth_keeping' THEN coalesce(k.node_hours, 0) END AS DECIMAL(38, 6))
        AS on_demand_node_hours_kept,
    CASE
        WHEN t.scenario IN ('without_on_demand', 'on_demand_worth_keeping') AND t.on_demand_node_hours = 0
            THEN 'no on-demand node-hours were billed this month'
        WHEN t.scenario = 'on_demand_worth_keeping' AND k.node_hours >= t.on_demand_node_hours
            THEN 'every on-demand node-hour enabled work worth its price: none is cancelled'
        WHEN t.scenario = 'moves' AND t.tasks_moved_to_api = 0 AND coalesce(w.workloads, 0) = 0
            THEN 'no accepted API work this month to move onto the cluster'
        WHEN t.scenario = 'moves' AND t.tasks_moved_to_api = 0
            THEN 'no API workload both saves money and fits the committed nodes'' spare capacity '
                || '(marts.monthly_workload_moves says why of each)'
    END AS unchanged_because
FROM totals AS t
JOIN as_run AS a USING (month, horizon)
LEFT JOIN renewals AS rn USING (month)
LEFT JOIN kept AS k USING (month)
LEFT JOIN api_workloads AS w USING (month)
