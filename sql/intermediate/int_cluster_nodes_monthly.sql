-- grain: one row per month x cluster (with provisioned compute)
-- materialized: table
-- unique_key: month, cluster_id
-- description: What each cluster's node-hours of the month were: committed (owned hardware in service and charges of cost class 'committed': reserved, FOCUS committed) or on demand (every other charge that buys node-hours), and what the on-demand ones cost (each charge's amount / its node-hours, for the hours of it inside the month). Each source runs at an even rate over its period, as in int_cluster_capacity_monthly. marts.monthly_hybrid_plan prices nodes by what they are from it. owned_node_hours: the committed node-hours of owned hardware in service (the energy of those the ledger counts itself; a cloud node's energy is in its price).
-- column month DATE
-- column cluster_id VARCHAR: The cluster.
-- column committed_node_hours DECIMAL(38,6): Node-hours of the month paid whether used or not: owned hardware in service and committed (reserved) charges.
-- column on_demand_node_hours DECIMAL(38,6): Node-hours of the month bought by every other charge that buys compute.
-- column owned_node_hours DECIMAL(38,6): The part of committed_node_hours that is owned hardware in service.
-- column on_demand_usd DECIMAL(38,12): What the on-demand node-hours of the month cost (each charge's amount in proportion to its seconds inside the month).
WITH sources AS (
    -- node-hours bought over a period (and, for a charge, their cost): each at an even rate over it
    SELECT
        cluster_id,
        charge_start AS rate_start,
        charge_end AS rate_end,
        cost_class = 'committed' AS committed,
        FALSE AS owned,
        node_hours,
        amount_usd,
        charge_seconds AS seconds
    FROM intermediate.int_cluster_charge_lines
    WHERE node_hours > 0 AND charge_seconds > 0
),
pieces AS (
    -- the part of each charge inside each month, in proportion to its seconds there
    SELECT
        r.cluster_id,
        m.month,
        r.committed,
        r.owned,
        money_div(r.node_hours * date_diff('second', greatest(m.month_start, r.rate_start), least(m.month_end, r.rate_end)),
                  r.seconds) AS node_hours,
        money_div(r.amount_usd * date_diff('second', greatest(m.month_start, r.rate_start), least(m.month_end, r.rate_end)),
                  r.seconds) AS amount_usd
    FROM sources AS r
    JOIN intermediate.int_months_spined AS m ON r.rate_start < m.month_end AND r.rate_end > m.month_start
    UNION ALL
    -- owned hardware: its nodes over the hours it is in service
    SELECT
        h.cluster_id,
        m.month,
        TRUE,
        TRUE,
        money_div(h.nodes * date_diff('second', greatest(m.month_start, CAST(h.in_service_date AS TIMESTAMP)),
                                      least(m.month_end, coalesce(CAST(h.retired_date AS TIMESTAMP), m.month_end))), 3600),
        NULL
    FROM staging.stg_ledger__hardware AS h
    JOIN intermediate.int_months_spined AS m
        ON CAST(h.in_service_date AS TIMESTAMP) < m.month_end
        AND coalesce(CAST(h.retired_date AS TIMESTAMP), m.month_end) > m.month_start
)
SELECT
    month,
    cluster_id,
    CAST(coalesce(sum(node_hours) FILTER (WHERE committed), 0) AS DECIMAL(38, 6)) AS committed_node_hours,
    CAST(coalesce(sum(node_hours) FILTER (WHERE NOT committed), 0) AS DECIMAL(38, 6)) AS on_demand_node_hours,
    CAST(coalesce(sum(node_hours) FILTER (WHERE owned), 0) AS DECIMAL(38, 6)) AS owned_node_hours,
    CAST(coalesce(sum(amount_usd) FILTER (WHERE NOT committed), 0) AS DECIMAL(38, 12)) AS on_demand_usd
FROM pieces
GROUP BY month, cluster_id
