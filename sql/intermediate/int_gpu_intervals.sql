-- grain: one row per GPU metric sample after its series' first (cluster x measure x series x instant)
-- materialized: table
-- unique_key: cluster_id, measure, labels, interval_end
-- description: What each GPU's meters say of the interval between two samples of a series (one field of one GPU). The energy counter's rise in kWh (mJ / 3,600,000,000), or, where it fell (the driver reloaded and the counter began again at 0), its value at the later sample: nothing is interpolated across the reload. The power gauge integrated over the interval at the earlier sample's draw (W x seconds / 3,600,000 = kWh), and the engine-active gauge likewise (share, at most 1, x seconds = the seconds the engine was busy). An interval longer than 5 minutes (Prometheus's default staleness) and longer than twice the series' shortest interval (its scrape or export step) is a scrape gap: a gauge says nothing of it (no kWh, no busy seconds), while a counter's rise across it stays exact. Each interval belongs to the month of its later sample.
-- column interval_start: The series' sample before (UTC).
-- column interval_end: This sample (UTC).
-- column month: The month of interval_end (first day).
-- column seconds: Length of the interval.
-- column scrape_gap: More than 5 minutes, and more than twice the series' shortest interval, between the two samples.
-- column counter_reset: The energy counter fell: the driver reloaded within the interval (FALSE for gauges).
-- column energy_kwh: Energy drawn in the interval (the counter's rise, or the power gauge x time; NULL for the engine-active gauge and for a gauge's scrape gap).
-- column active_seconds: Seconds the graphics engine was busy (engine-active gauge x seconds; NULL for other fields and for a scrape gap).
WITH samples AS (
    SELECT
        cluster_id,
        measure,
        labels,
        sampled_at,
        value,
        lag(value) OVER (PARTITION BY cluster_id, metric, labels ORDER BY sampled_at) AS previous_value,
        lag(sampled_at) OVER (PARTITION BY cluster_id, metric, labels ORDER BY sampled_at) AS previous_at
    FROM staging.stg_ledger__gpu_metrics
),
intervals AS (
    SELECT
        *,
        date_diff('second', previous_at, sampled_at) AS seconds
    FROM samples
    WHERE previous_value IS NOT NULL
),
stepped AS (
    SELECT
        *,
        seconds > greatest(300, 2 * min(seconds) OVER (PARTITION BY cluster_id, measure, labels)) AS scrape_gap
    FROM intervals
)

SELECT
    cluster_id,
    measure,
    labels,
    previous_at AS interval_start,
    sampled_at AS interval_end,
    CAST(date_trunc('month', sampled_at) AS DATE) AS month,
    seconds,
    scrape_gap,
    measure = 'energy_mj' AND value < previous_value AS counter_reset,
    CASE
        WHEN measure = 'energy_mj'
            THEN money_div(CASE WHEN value >= previous_value THEN value - previous_value ELSE value END, 3600000000)
        WHEN measure = 'power_w' AND NOT scrape_gap THEN money_div(previous_value * seconds, 3600000)
    END AS energy_kwh,
    CASE WHEN measure = 'engine_active' AND NOT scrape_gap
        THEN CAST(least(previous_value, 1) * seconds AS DECIMAL(38, 6)) END AS active_seconds
FROM stepped
