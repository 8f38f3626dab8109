-- grain: one row per month with owned hardware in service or a committed cluster charge running
-- materialized: view
-- unique_key: month
-- description: When the month's commitments end, so that a plan at renewal can start: the month after the last write-off of each owned asset in service in the month (its in-service month is write-off 1 of life_months), and the month after the last month of each committed cluster charge running in the month (its end is exclusive); the latest of them. A month with neither has no row: nothing binds it.
-- column month DATE: First day of the month (UTC).
-- column renewal_from DATE: The first month none of the month's commitments binds any more.
WITH commitments AS (
    SELECT
        a.month,
        CAST(a.month + to_months(CAST(h.life_months - a.month_index + 1 AS INTEGER)) AS DATE) AS ends
    FROM intermediate.int_hardware_amortised AS a
    JOIN staging.stg_ledger__hardware AS h ON a.asset_id = h.asset_id
    UNION ALL
    SELECT
        m.month,
        CAST(date_trunc('month', c.charge_end - INTERVAL 1 MICROSECOND) + INTERVAL 1 MONTH AS DATE) AS ends
    FROM intermediate.int_cluster_charge_lines AS c
    JOIN intermediate.int_months_spined AS m ON c.charge_start < m.month_end AND c.charge_end > m.month_start
    WHERE c.cost_class = 'committed'
)
SELECT
    month,
    max(ends) AS renewal_from
FROM commitments
GROUP BY month
