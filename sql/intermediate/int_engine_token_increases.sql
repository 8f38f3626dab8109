-- grain: one row per token counter sample after its series' first (cluster x measure x series x instant)
-- materialized: table
-- unique_key: cluster_id, measure, labels, interval_end
-- description: What each engine's token counters counted between two samples of a series (one engine of one instance): the rise of the counter, or, where it fell (the engine restarted and its counter began again at 0), its value at the later sample. Nothing is interpolated: the tokens an engine counted between its last sample before a restart and the restart are not known and not added. An interval longer than 5 minutes (Prometheus's default staleness) and longer than twice the series' shortest interval (its scrape or export step: a query_range export at one sample an hour has no gap every hour) is marked a scrape gap: its counter rise is exact, but a restart inside it loses what the engine counted before it. Each interval belongs to the month of its later sample.
-- column interval_start: The series' sample before (UTC).
-- column interval_end: This sample (UTC).
-- column month: The month of interval_end (first day).
-- column counter_reset: The counter fell: the engine restarted within the interval.
-- column scrape_gap: More than 5 minutes, and more than twice the series' shortest interval, between the two samples.
-- column increase: Tokens the engine counted in the interval (see the description).
WITH counters AS (
    SELECT
        cluster_id,
        measure,
        labels,
        sampled_at,
        value,
        lag(value) OVER (PARTITION BY cluster_id, metric, labels ORDER BY sampled_at) AS previous_value,
        lag(sampled_at) OVER (PARTITION BY cluster_id, metric, labels ORDER BY sampled_at) AS previous_at
    FROM staging.stg_ledger__engine_metrics
    WHERE measure IN ('prompt_tokens', 'generation_tokens')
),
intervals AS (
    SELECT
        *,
        date_diff('second', previous_at, sampled_at) AS seconds
    FROM counters
    WHERE previous_value IS NOT NULL
),
stepped AS (
    SELECT
        *,
        min(seconds) OVER (PARTITION BY cluster_id, measure, labels) AS step_seconds
    FROM intervals
)

SELECT
    cluster_id,
    measure,
    labels,
    previous_at AS interval_start,
    sampled_at AS interval_end,
    CAST(date_trunc('month', sampled_at) AS DATE) AS month,
    value < previous_value AS counter_reset,
    seconds > greatest(300, 2 * step_seconds) AS scrape_gap,
    CAST(CASE WHEN value >= previous_value THEN value - previous_value ELSE value END AS DECIMAL(38, 6)) AS increase
FROM stepped
