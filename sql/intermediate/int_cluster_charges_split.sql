-- grain: one row per cluster charge x month it overlaps
-- materialized: table
-- unique_key: charge_id, month
-- description: Cluster charges (canonical and allocated FOCUS rows) split across months by hours. Each piece is the charge's amount pro rata to seconds, rounded to 1e-12 by telescoping (cumulative share at the piece's end minus cumulative share at its start), so the pieces add up to the charge exactly. A charge with an empty period falls in the month it starts.
-- column charge_id VARCHAR
-- column cluster_id VARCHAR
-- column category VARCHAR: The charge's cost category (int_cluster_charge_lines.category).
-- column cost_class VARCHAR: The charge's cost class: committed or avoidable.
-- column month DATE: The month this piece of the charge falls in (its first day, UTC).
-- column seconds_in_month BIGINT: Seconds of the charge's period inside the month.
-- column amount_usd DECIMAL(38,12): The part of the charge's amount that falls in the month, in proportion to its seconds there (the pieces of a charge add up to it exactly).
SELECT
    c.charge_id,
    c.cluster_id,
    c.category,
    c.cost_class,
    m.month,
    date_diff('second', greatest(c.charge_start, m.month_start), least(c.charge_end, m.month_end)) AS seconds_in_month,
    CASE WHEN c.charge_seconds > 0 THEN
        money_div(c.amount_usd * date_diff('second', c.charge_start, least(c.charge_end, m.month_end)), c.charge_seconds)
        - money_div(c.amount_usd * date_diff('second', c.charge_start, greatest(c.charge_start, m.month_start)), c.charge_seconds)
    ELSE c.amount_usd END AS amount_usd
FROM intermediate.int_cluster_charge_lines AS c
JOIN intermediate.int_months_spined AS m
    ON (c.charge_start < m.month_end AND c.charge_end > m.month_start)
    OR (c.charge_seconds = 0 AND c.charge_start >= m.month_start AND c.charge_start < m.month_end)
