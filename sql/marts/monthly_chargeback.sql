-- grain: one row per month x route x team x cost class (with spend)
-- materialized: table
-- unique_key: month, route, team, cost_class
-- description: Who spent what: the month's whole spend on both routes (marts.monthly_route_cost.cost_usd) allocated to the teams that caused it. The API route's cash cost per provider (its invoiced total where the invoice is loaded, else its metered cost) is spread over the teams by their metered cost of that provider, so the invoice's difference from metered (uplift, tax, credits) falls in proportion; a provider's spend with no metered requests is (unassigned). Each cluster's fixed cost (marts.monthly_utilisation.fixed_cost_usd, by cost class: its own costs' classes, its share of the shared costs by theirs) is spread by each team's share of the node-hours the cluster's capacity provides: the team's tokens over the cost basis (the month's token capacity, or the tokens served when more); what no team used is the row (idle), or, with the chargeback.share_idle setting, is spread by the teams' tokens instead. Self-hosted cost of no cluster with capacity is (unallocated). Review is charged at the review rate to the task's team on the task's route. Requests without a team are (unassigned). Every exact amount is rounded to a 1e-12 share, one row per allocation taking what the rounding leaves, so the month's rows add up to its spend exactly; amount_usd then rounds them to cents by largest remainders, so the cents add up to the month's spend rounded to the cent.
-- settings: chargeback_share_idle
-- column month DATE: First day of the month (UTC).
-- column route VARCHAR: 'api' or 'self_hosted'.
-- column team VARCHAR: The team ((unassigned): requests without a team; (idle): capacity no team used; (unallocated): self-hosted cost of no cluster with capacity).
-- column cost_class VARCHAR: usage (API tokens, invoice difference included), review (human review), or the cluster's committed, operating or avoidable cost.
-- column exact_usd DECIMAL(38,12): The allocation, exact to 1e-12.
-- column amount_usd DECIMAL(38,2): exact_usd rounded to cents by largest remainders, so that each route's rows add up to the route's cost rounded to the cent (marts.monthly_route_cost.cost_usd as the report shows it); the month's rows add up to the sum of its routes' rounded costs.
-- column share_of_month DOUBLE: exact_usd / the month's spend (NULL when the month's spend is 0).
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
api_teams AS (
    SELECT
        month,
        provider,
        coalesce(team, '(none)') AS team,
        sum(metered_usd) AS metered_usd
    FROM intermediate.int_requests_monthly
    WHERE route = 'api'
    GROUP BY month, provider, coalesce(team, '(none)')
),
api_cash AS (
    SELECT
        month,
        provider,
        CASE WHEN has_invoice THEN invoiced_total_usd ELSE metered_usd END AS cash_usd,
        metered_usd
    FROM intermediate.int_api_provider_monthly
),
api_shares AS (
    -- each team's share of a provider's cash; the team with the most metered cost takes what rounding leaves
    SELECT
        c.month,
        coalesce(t.team, '(unassigned)') AS team,
        c.cash_usd,
        CASE WHEN c.metered_usd > 0 THEN money_share(c.cash_usd, t.metered_usd, c.metered_usd) ELSE c.cash_usd END
            AS share_usd,
        row_number() OVER (PARTITION BY c.month, c.provider ORDER BY t.metered_usd DESC NULLS LAST, t.team ASC) AS n,
        c.provider
    FROM api_cash AS c
    LEFT JOIN api_teams AS t ON t.month = c.month AND t.provider = c.provider AND c.metered_usd > 0
),
api_rows AS (
    SELECT
        month,
        'api' AS route,
        team,
        'usage' AS cost_class,
        CASE WHEN n = 1
            THEN cash_usd - coalesce(sum(share_usd) OVER (PARTITION BY month, provider), 0) + share_usd
            ELSE share_usd
        END AS exact_usd
    FROM api_shares
),
own_classes AS (
    SELECT month, cluster_id, cost_class, sum(amount_usd) AS amount_usd
    FROM marts.monthly_self_hosted_cost
    WHERE cluster_id IS NOT NULL
    GROUP BY month, cluster_id, cost_class
),
own_totals AS (
    SELECT month, cluster_id, sum(amount_usd) AS amount_usd FROM own_classes GROUP BY month, cluster_id
),
shared_classes AS (
    SELECT month, cost_class, sum(amount_usd) AS amount_usd
    FROM marts.monthly_self_hosted_cost
    WHERE cluster_id IS NULL
    GROUP BY month, cost_class
),
shared_totals AS (
    SELECT month, sum(amount_usd) AS amount_usd FROM shared_classes GROUP BY month
),
cluster_classes AS (
    -- each cluster's fixed cost by class: its own costs, and the rest of fixed_cost_usd (its share of the costs booked
    -- to no cluster) by the classes of those
    SELECT
        u.month,
        u.cluster_id,
        k.cost_class,
        coalesce(own.amount_usd, 0) + CASE WHEN st.amount_usd <> 0
            THEN money_share(u.fixed_cost_usd - coalesce(ot.amount_usd, 0), coalesce(sh.amount_usd, 0), st.amount_usd)
            ELSE 0 END AS class_usd,
        u.fixed_cost_usd,
        k.position = max(k.position) OVER (PARTITION BY u.month, u.cluster_id) AS takes_remainder
    FROM marts.monthly_utilisation AS u
    CROSS JOIN staging.stg_ledger__cost_classes AS k
    LEFT JOIN own_classes AS own ON own.month = u.month AND own.cluster_id = u.cluster_id AND own.cost_class = k.cost_class
    LEFT JOIN own_totals AS ot ON ot.month = u.month AND ot.cluster_id = u.cluster_id
    LEFT JOIN shared_classes AS sh ON sh.month = u.month AND sh.cost_class = k.cost_class
    LEFT JOIN shared_totals AS st ON st.month = u.month
),
cluster_classes_exact AS (
    -- the last class takes what rounding the shared part leaves, so the classes add up to fixed_cost_usd
    SELECT
        month,
        cluster_id,
        cost_class,
        CASE WHEN takes_remainder
            THEN fixed_cost_usd - sum(class_usd) OVER (PARTITION BY month, cluster_id) + class_usd
            ELSE class_usd
        END AS class_usd
    FROM cluster_classes
),
cluster_teams AS (
    SELECT
        month,
        cluster_id,
        coalesce(team, '(none)') AS team,
        sum(cache_hit_input_tokens + cache_miss_input_tokens + output_tokens + reasoning_tokens) AS tokens
    FROM intermediate.int_requests_monthly
    WHERE route = 'self_hosted' AND cluster_id IS NOT NULL
    GROUP BY month, cluster_id, coalesce(team, '(none)')
),
cluster_basis AS (
    -- what the class is spread over: the cost basis (capacity, or the tokens served when more), or with share_idle
    -- the tokens served; NULL: nothing to spread it over
    SELECT
        u.month,
        u.cluster_id,
        CASE
            WHEN s.chargeback_share_idle THEN nullif(u.tokens_served, 0)
            WHEN u.monthly_token_capacity > 0 THEN greatest(u.monthly_token_capacity, u.tokens_served)
            ELSE nullif(u.tokens_served, 0)
        END AS basis_tokens
    FROM marts.monthly_utilisation AS u
    CROSS JOIN settings AS s
),
cluster_shares AS (
    SELECT
        c.month,
        c.cluster_id,
        c.cost_class,
        c.class_usd,
        t.team,
        money_count_share(c.class_usd, t.tokens, b.basis_tokens) AS share_usd,
        row_number() OVER (PARTITION BY c.month, c.cluster_id, c.cost_class ORDER BY t.tokens DESC, t.team ASC) AS n,
        b.basis_tokens,
        s.chargeback_share_idle AS share_idle
    FROM cluster_classes_exact AS c
    JOIN cluster_basis AS b ON b.month = c.month AND b.cluster_id = c.cluster_id
    CROSS JOIN settings AS s
    LEFT JOIN cluster_teams AS t ON t.month = c.month AND t.cluster_id = c.cluster_id AND b.basis_tokens IS NOT NULL
),
cluster_rows AS (
    -- the teams' shares; (idle) takes the rest, or with share_idle the largest team does (the shares add up to the
    -- class but for rounding)
    SELECT month, 'self_hosted' AS route, team, cost_class,
        CASE WHEN share_idle AND n = 1
            THEN class_usd - sum(share_usd) OVER (PARTITION BY month, cluster_id, cost_class) + share_usd
            ELSE share_usd
        END AS exact_usd
    FROM cluster_shares
    WHERE team IS NOT NULL
    UNION ALL
    SELECT month, 'self_hosted', '(idle)', cost_class, class_usd - coalesce(sum(share_usd), 0)
    FROM cluster_shares
    WHERE NOT share_idle OR team IS NULL
    GROUP BY month, cluster_id, cost_class, class_usd
),
hosted_classes AS (
    SELECT month, cost_class, sum(amount_usd) AS amount_usd
    FROM marts.monthly_self_hosted_cost
    GROUP BY month, cost_class
),
allocated_classes AS (
    SELECT month, cost_class, sum(class_usd) AS class_usd FROM cluster_classes_exact GROUP BY month, cost_class
),
unallocated AS (
    -- self-hosted cost that no cluster with capacity carries (shared costs of a month without one, say)
    SELECT
        h.month,
        'self_hosted' AS route,
        '(unallocated)' AS team,
        h.cost_class,
        h.amount_usd - coalesce(c.class_usd, 0) AS exact_usd
    FROM hosted_classes AS h
    LEFT JOIN allocated_classes AS c ON c.month = h.month AND c.cost_class = h.cost_class
),
review_rows AS (
    SELECT month, route, team, 'review' AS cost_class, sum(review_cost_usd) AS exact_usd
    FROM intermediate.int_tasks_resolved
    WHERE review_cost_usd <> 0
    GROUP BY month, route, team
),
pieces AS (
    SELECT * FROM api_rows
    UNION ALL
    SELECT * FROM cluster_rows
    UNION ALL
    SELECT * FROM unallocated
    UNION ALL
    SELECT * FROM review_rows
),
allocated AS (
    SELECT
        month,
        route,
        CASE WHEN team = '(none)' THEN '(unassigned)' ELSE team END AS team,
        cost_class,
        CAST(sum(exact_usd) AS DECIMAL(38, 12)) AS exact_usd
    FROM pieces
    GROUP BY ALL
    HAVING sum(exact_usd) <> 0
),
-- whole cents: each route's cost rounded to the cent (as the route's own figures show it), its rows by largest
-- remainders so that they add up to it; the month is the sum of its routes
route_cents AS (
    SELECT
        month,
        route,
        CAST(round(sum(exact_usd) * 100) AS HUGEINT) AS route_cents,
        sum(sum(exact_usd)) OVER (PARTITION BY month) AS month_usd
    FROM allocated
    GROUP BY month, route
),
cents AS (
    SELECT
        a.*,
        r.route_cents,
        r.month_usd,
        CAST(floor(a.exact_usd * 100) AS HUGEINT) AS floor_cents,
        a.exact_usd * 100 - floor(a.exact_usd * 100) AS remainder
    FROM allocated AS a
    JOIN route_cents AS r USING (month, route)
),
ranked AS (
    SELECT
        *,
        route_cents - sum(floor_cents) OVER (PARTITION BY month, route) AS cents_left,
        row_number() OVER (PARTITION BY month, route ORDER BY remainder DESC, team ASC, cost_class ASC) AS remainder_rank
    FROM cents
)
SELECT
    month,
    route,
    team,
    cost_class,
    exact_usd,
    -- whole cents, as DECIMAL (a division would be DOUBLE)
    CAST(CAST(floor_cents + CASE WHEN remainder_rank <= cents_left THEN 1 ELSE 0 END AS DECIMAL(36, 0)) * 0.01
        AS DECIMAL(38, 2)) AS amount_usd,
    CASE WHEN month_usd <> 0 THEN CAST(exact_usd / month_usd AS DOUBLE) END AS share_of_month
FROM ranked
