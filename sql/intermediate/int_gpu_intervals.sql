-- grain: one row per GPU metric sample after its series' first and month of its interval (cluster x measure x series x instant x month)
-- materialized: table
-- unique_key: cluster_id, measure, labels, interval_end, month
-- description: What each GPU's meters say of the interval between two samples of a series (one field of one GPU). The energy counter's rise in kWh (mJ / 3,600,000,000), or, where it fell (the driver reloaded and the counter began again at 0), its value at the later sample: nothing is interpolated across the reload. The power gauge integrated over the interval at the earlier sample's draw (W x seconds / 3,600,000 = kWh), and the engine-active gauge likewise (share, at most 1, x seconds = the seconds the engine was busy), or where the profiling fields are not collected the GPU-utilisation gauge (percentage, at most 100, / 100 x seconds = the seconds a kernel ran). An interval longer than 5 minutes (Prometheus's default staleness) and longer than twice the series' shortest interval (its scrape or export step) is a scrape gap: a gauge says nothing of it (no kWh, no busy seconds), while a counter's rise across it stays exact. An energy counter sample set aside as implausible (intermediate.int_meter_rises_implausible) counts nothing: a spike is left out of its series, and an interval that rises faster than 10 kW is not counted (implausible_rise). An interval belongs to the month it was used in: one that runs across the start of a month is cut there, a counter's rise shared between its pieces by time (to the millisecond; the last piece takes what the others leave, so the pieces add up to the rise exactly) and a gauge integrated over each piece.
-- column cluster_id VARCHAR
-- column measure VARCHAR
-- column labels VARCHAR
-- column interval_start TIMESTAMP: The series' sample before (UTC).
-- column interval_end TIMESTAMP: This sample (UTC).
-- column month DATE: The month of this piece of the interval (first day): the month of interval_start, or a later one for an interval across a month's start.
-- column seconds BIGINT: Length of the interval's piece in the month.
-- column scrape_gap BOOLEAN: More than 5 minutes, and more than twice the series' shortest interval, between the two samples.
-- column counter_reset BOOLEAN: The energy counter fell: the driver reloaded within the interval (FALSE for gauges).
-- column implausible_rise BOOLEAN: The energy counter rose faster than 10 kW (10,000 mJ a millisecond) over the interval: a corrupt sample, not a measurement; its energy is not counted (FALSE for gauges).
-- column energy_kwh DECIMAL(38,12): Energy drawn in the interval's piece (the counter's rise, or the power gauge x time; NULL for the engine-active gauge and for a gauge's scrape gap).
-- column active_seconds DECIMAL(38,12): Seconds the GPU was busy: the engine-active gauge x seconds, or the GPU-utilisation gauge / 100 x seconds (NULL for other fields and for a scrape gap).
WITH samples AS (
    SELECT
        g.cluster_id,
        g.measure,
        g.labels,
        g.sampled_at,
        g.value,
        lag(g.value) OVER (PARTITION BY g.cluster_id, g.metric, g.labels ORDER BY g.sampled_at) AS previous_value,
        lag(g.sampled_at) OVER (PARTITION BY g.cluster_id, g.metric, g.labels ORDER BY g.sampled_at) AS previous_at
    FROM staging.stg_ledger__gpu_metrics AS g
    LEFT JOIN intermediate.int_meter_rises_implausible AS x
        ON
            g.cluster_id = x.cluster_id AND g.metric = x.metric AND g.labels = x.labels
            AND g.sampled_at = x.sampled_at AND x.spike
    WHERE x.sampled_at IS NULL
),
intervals AS (
    SELECT
        *,
        date_diff('second', previous_at, sampled_at) AS whole_seconds,
        date_trunc('month', previous_at) AS first_month,
        date_trunc('month', greatest(previous_at, sampled_at - INTERVAL 1 MICROSECOND)) AS last_month
    FROM samples
    WHERE previous_value IS NOT NULL
),
measured AS (
    SELECT
        cluster_id,
        measure,
        labels,
        previous_at,
        sampled_at,
        previous_value,
        first_month,
        last_month,
        whole_seconds > greatest(300, 2 * min(whole_seconds) OVER (PARTITION BY cluster_id, measure, labels))
            AS scrape_gap,
        measure = 'energy_mj' AND value < previous_value AS counter_reset,
        measure = 'energy_mj' AND rise_mj > 10000 * date_diff('millisecond', previous_at, sampled_at)
            AS implausible_rise,
        CASE WHEN measure = 'energy_mj' AND rise_mj <= 10000 * date_diff('millisecond', previous_at, sampled_at)
            THEN money_div(rise_mj, 3600000000)
        END AS counter_kwh
    FROM (
        SELECT
            *,
            counter_rise(value, previous_value) AS rise_mj
        FROM intervals
    ) AS risen
),
pieces AS (
    -- an interval within one month stays whole; one across the start of a month is cut into its months
    SELECT
        cluster_id, measure, labels, previous_at, sampled_at, previous_value, scrape_gap, counter_reset, implausible_rise,
        counter_kwh,
        first_month AS month_start, previous_at AS piece_start, sampled_at AS piece_end
    FROM measured
    WHERE first_month = last_month
    UNION ALL
    SELECT
        cluster_id, measure, labels, previous_at, sampled_at, previous_value, scrape_gap, counter_reset, implausible_rise,
        counter_kwh,
        month_start,
        greatest(previous_at, month_start) AS piece_start,
        least(sampled_at, month_start + INTERVAL 1 MONTH) AS piece_end
    FROM (
        SELECT
            cluster_id, measure, labels, previous_at, sampled_at, previous_value, scrape_gap, counter_reset, implausible_rise,
        counter_kwh,
            unnest(generate_series(first_month, last_month, INTERVAL 1 MONTH)) AS month_start
        FROM measured
        WHERE first_month < last_month
    ) AS months_of_interval
),
shares AS (
    -- a counter's rise over an interval cut in pieces: each piece but the last its share by time
    SELECT
        *,
        date_diff('second', piece_start, piece_end) AS seconds,
        CASE WHEN piece_end < sampled_at THEN money_count_share(
            counter_kwh, date_diff('millisecond', piece_start, piece_end), date_diff('millisecond', previous_at, sampled_at)
        ) END AS counter_share_kwh
    FROM pieces
)

SELECT
    cluster_id,
    measure,
    labels,
    previous_at AS interval_start,
    sampled_at AS interval_end,
    CAST(month_start AS DATE) AS month,
    seconds,
    scrape_gap,
    counter_reset,
    implausible_rise,
    CASE
        WHEN measure = 'energy_mj' AND piece_end < sampled_at THEN counter_share_kwh
        WHEN measure = 'energy_mj' THEN counter_kwh
            - coalesce(sum(counter_share_kwh) OVER (PARTITION BY cluster_id, measure, labels, sampled_at), 0)
        WHEN measure = 'power_w' AND NOT scrape_gap THEN money_div(previous_value * seconds, 3600000)
    END AS energy_kwh,
    CASE
        WHEN scrape_gap THEN NULL
        WHEN measure = 'engine_active' THEN CAST(least(previous_value, 1) * seconds AS DECIMAL(38, 12))
        WHEN measure = 'gpu_util' THEN money_div(least(previous_value, 100) * seconds, 100)
    END AS active_seconds
FROM shares
