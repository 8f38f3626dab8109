-- grain: one row per cluster charge x month it overlaps
-- materialized: table
-- unique_key: charge_id, month
-- description: Cluster charges split across months by hours. Each piece is the charge's amount pro rata to seconds, rounded to 1e-12 by telescoping (cumulative share at the piece's end minus cumulative share at its start), so the pieces add up to the charge exactly.
SELECT
    c.charge_id,
    c.cluster_id,
    c.kind,
    m.month,
    date_diff('second', greatest(c.charge_start, m.month_start), least(c.charge_end, m.month_end)) AS seconds_in_month,
    money_div(c.amount_usd * date_diff('second', c.charge_start, least(c.charge_end, m.month_end)), c.charge_seconds)
        - money_div(c.amount_usd * date_diff('second', c.charge_start, greatest(c.charge_start, m.month_start)), c.charge_seconds)
        AS amount_usd
FROM staging.stg_ledger__cluster_charges AS c
JOIN intermediate.int_months_spined AS m
    ON c.charge_start < m.month_end AND c.charge_end > m.month_start
