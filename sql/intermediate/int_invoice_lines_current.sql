-- grain: one row per invoice line (its latest loaded version) x month of the line's period
-- materialized: table
-- unique_key: provider, invoice_id, line_id, month
-- description: An invoice (provider, invoice_id) is the sum of its lines, keyed by line_id: a later file's line with the same provider, invoice_id and line_id restates the earlier one (a re-export), a line with a new line_id adds to the invoice (an invoice split over pages adds up); other invoices of the same provider and month (credit notes, adjustments) add to it. Earlier versions of a line stay in raw.invoices (history is never edited) but are superseded. The same invoice delivered again under another id or format is rejected at ingest. A line whose period spans several months is allocated to them in proportion to the provider's metered cost in each month (prorated by the part of the month the period covers), by time when nothing was metered; each share is rounded to a millionth of a dollar and the last month takes the remainder, so the shares add up to the line exactly.
-- column provider VARCHAR
-- column invoice_id VARCHAR
-- column line_id VARCHAR
-- column month DATE: Month the share is allocated to (first day, UTC).
-- column period_start TIMESTAMP
-- column period_end TIMESTAMP
-- column line_type VARCHAR
-- column model VARCHAR
-- column quantity DECIMAL(38,6)
-- column unit_price_per_million DECIMAL(24,12)
-- column unit_price_usd_per_million DECIMAL(38,12): The line's unit price converted to USD (NULL when it states none).
-- column amount_usd DECIMAL(38,12): This month's share of the line.
-- column line_amount_usd DECIMAL(38,12): The whole line, as invoiced.
-- column line_priced_usd DECIMAL(38,12): The whole line at its own quantity x unit price / 1e6 (USD); NULL when it does not state both.
-- column months_in_period INTEGER: How many months the line's period touches (1 for a monthly invoice).
-- column allocation_basis VARCHAR: 'single_month', 'metered' (by metered cost) or 'time' (nothing metered in the period).
-- column source_file_hash VARCHAR
WITH ranked AS (
    SELECT
        i.*,
        f.load_seq,
        max(f.load_seq) OVER (PARTITION BY i.provider, i.invoice_id, i.line_id) AS latest_load_seq
    FROM staging.stg_ledger__invoices AS i
    JOIN meta.loaded_files AS f ON f.file_hash = i.source_file_hash
),
current_lines AS (
    SELECT * EXCLUDE (load_seq, latest_load_seq, month)
    FROM ranked
    WHERE load_seq = latest_load_seq
),
line_months AS (
    SELECT
        l.*,
        CAST(m.month AS DATE) AS month,
        date_diff('microsecond', greatest(l.period_start, m.month), least(l.period_end, m.month + INTERVAL 1 MONTH))
        / 1000000 AS covered_s,
        date_diff('microsecond', m.month, m.month + INTERVAL 1 MONTH) / 1000000 AS month_s
    FROM current_lines AS l,
        -- the months the period touches: from its first month's start up to its end (a period ends after it starts)
        unnest(generate_series(
            date_trunc('month', l.period_start), l.period_end - INTERVAL 1 MICROSECOND, INTERVAL 1 MONTH
        )) AS m (month)
),
metered AS (
    SELECT month, provider, sum(metered_usd) AS metered_usd
    FROM intermediate.int_requests_monthly
    WHERE route = 'api'
    GROUP BY month, provider
),
weighted AS (
    SELECT
        lm.*,
        CAST(coalesce(me.metered_usd, 0) * (lm.covered_s / lm.month_s) AS DECIMAL(38, 12)) AS metered_weight,
        CAST(lm.covered_s AS DECIMAL(38, 12)) AS time_weight,
        count(*) OVER line_window AS months_in_period,
        row_number() OVER (PARTITION BY lm.provider, lm.invoice_id, lm.line_id ORDER BY lm.month DESC) AS from_last
    FROM line_months AS lm
    LEFT JOIN metered AS me USING (month, provider)
    WINDOW line_window AS (PARTITION BY lm.provider, lm.invoice_id, lm.line_id)
),
shared AS (
    SELECT
        *,
        CASE
            WHEN months_in_period = 1 THEN 'single_month'
            WHEN sum(metered_weight) OVER line_window > 0 THEN 'metered'
            ELSE 'time'
        END AS allocation_basis,
        CASE
            WHEN months_in_period = 1 THEN amount_usd
            WHEN sum(metered_weight) OVER line_window > 0
                THEN CAST(round(amount_usd * money_div(metered_weight, sum(metered_weight) OVER line_window), 6) AS DECIMAL(38, 12))
            ELSE CAST(round(amount_usd * money_div(time_weight, sum(time_weight) OVER line_window), 6) AS DECIMAL(38, 12))
        END AS share_usd
    FROM weighted
    WINDOW line_window AS (PARTITION BY provider, invoice_id, line_id)
)
SELECT
    provider,
    invoice_id,
    line_id,
    month,
    period_start,
    period_end,
    line_type,
    model,
    quantity,
    unit_price_per_million,
    CAST(unit_price_per_million * usd_per_unit AS DECIMAL(38, 12)) AS unit_price_usd_per_million,
    CASE
        WHEN from_last = 1
            THEN amount_usd - coalesce(sum(share_usd) FILTER (WHERE from_last > 1) OVER line_window, 0)
        ELSE share_usd
    END AS amount_usd,
    amount_usd AS line_amount_usd,
    -- quantity x unit price / 1e6, in USD: what the line would be at its own stated price
    CAST(money_div(quantity * unit_price_per_million, 1000000) * usd_per_unit AS DECIMAL(38, 12)) AS line_priced_usd,
    CAST(months_in_period AS INTEGER) AS months_in_period,
    allocation_basis,
    source_file_hash
FROM shared
WINDOW line_window AS (PARTITION BY provider, invoice_id, line_id)
