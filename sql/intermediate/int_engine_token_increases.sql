-- grain: one row per token counter sample after its series' first and month of its interval (cluster x measure x series x instant x month)
-- materialized: table
-- unique_key: cluster_id, measure, labels, interval_end, month
-- description: What each engine's counters (prompt and generation tokens, the prompt tokens its prefix cache was asked for and found, and the seconds its requests spent in the prefill and decode phases) counted between two samples of a series (one engine of one instance): the rise of the counter, or, where it fell (the engine restarted and its counter began again at 0), its value at the later sample. Nothing is interpolated: the tokens an engine counted between its last sample before a restart and the restart are not known and not added. An interval longer than 5 minutes (Prometheus's default staleness) and longer than twice the series' shortest interval (its scrape or export step: a query_range export at one sample an hour has no gap every hour) is marked a scrape gap: its counter rise is exact, but a restart inside it loses what the engine counted before it. A token counter sample set aside as implausible (intermediate.int_meter_rises_implausible) counts nothing: a spike is left out of its series, and an interval that rises faster than 10 million tokens a second is not counted (implausible_rise). An interval belongs to the month it was used in: one that runs across the start of a month is cut there, its rise shared between the pieces by time (to the millisecond, each piece to 1e-6 tokens; the last piece takes what the others leave, so the pieces add up to the rise exactly).
-- column cluster_id VARCHAR
-- column measure VARCHAR
-- column labels VARCHAR
-- column interval_start TIMESTAMP: The series' sample before (UTC).
-- column interval_end TIMESTAMP: This sample (UTC).
-- column month DATE: The month of this piece of the interval (first day): the month of interval_start, or a later one for an interval across a month's start.
-- column counter_reset BOOLEAN: The counter fell: the engine restarted within the interval.
-- column scrape_gap BOOLEAN: More than 5 minutes, and more than twice the series' shortest interval, between the two samples.
-- column implausible_rise BOOLEAN: A token counter rose faster than 10 million tokens a second over the interval: a corrupt sample, not a measurement; its increase is not counted (NULL).
-- column increase DECIMAL(38,6): Tokens the engine counted in the interval's piece (see the description); seconds for prefill_seconds and decode_seconds.
-- column engine VARCHAR: vllm or sglang.
WITH counters AS (
    SELECT
        cluster_id,
        measure,
        engine,
        labels,
        sampled_at,
        value,
        lag(value) OVER (PARTITION BY cluster_id, metric, labels ORDER BY sampled_at) AS previous_value,
        lag(sampled_at) OVER (PARTITION BY cluster_id, metric, labels ORDER BY sampled_at) AS previous_at
    FROM (
        SELECT e.*
        FROM staging.stg_ledger__engine_metrics AS e
        LEFT JOIN intermediate.int_meter_rises_implausible AS x
            ON
                e.cluster_id = x.cluster_id AND e.metric = x.metric AND e.labels = x.labels
                AND e.sampled_at = x.sampled_at AND x.spike
        WHERE x.sampled_at IS NULL
    ) AS kept
    WHERE measure IN (
        'prompt_tokens', 'generation_tokens', 'prefix_cache_queries', 'prefix_cache_hits', 'prefill_seconds',
        'decode_seconds'
    )
),
risen AS (
    SELECT
        *,
        counter_rise(value, previous_value) AS whole_rise,
        coalesce(
            measure NOT IN ('prefill_seconds', 'decode_seconds')
            AND counter_rise(value, previous_value) > 10000 * date_diff('millisecond', previous_at, sampled_at),
            FALSE
        ) AS implausible_rise
    FROM counters
),
intervals AS (
    SELECT
        cluster_id,
        measure,
        engine,
        labels,
        previous_at,
        sampled_at,
        implausible_rise,
        value < previous_value AS counter_reset,
        CAST(CASE WHEN NOT implausible_rise THEN whole_rise END AS DECIMAL(38, 6)) AS rise,
        date_diff('second', previous_at, sampled_at) AS seconds,
        date_trunc('month', previous_at) AS first_month,
        date_trunc('month', greatest(previous_at, sampled_at - INTERVAL 1 MICROSECOND)) AS last_month
    FROM risen
    WHERE previous_value IS NOT NULL
),
stepped AS (
    SELECT
        *,
        seconds > greatest(300, 2 * min(seconds) OVER (PARTITION BY cluster_id, measure, labels)) AS scrape_gap
    FROM intervals
),
pieces AS (
    -- an interval within one month stays whole; one across the start of a month is cut into its months
    SELECT
        cluster_id, measure, engine, labels, previous_at, sampled_at, counter_reset, scrape_gap, implausible_rise, rise,
        first_month AS month_start, sampled_at AS piece_end, CAST(NULL AS DECIMAL(38, 6)) AS share
    FROM stepped
    WHERE first_month = last_month
    UNION ALL
    SELECT
        cluster_id, measure, engine, labels, previous_at, sampled_at, counter_reset, scrape_gap, implausible_rise, rise,
        month_start,
        least(sampled_at, month_start + INTERVAL 1 MONTH) AS piece_end,
        CASE WHEN month_start + INTERVAL 1 MONTH < sampled_at THEN CAST(money_count_share(
            rise,
            date_diff('millisecond', greatest(previous_at, month_start), month_start + INTERVAL 1 MONTH),
            date_diff('millisecond', previous_at, sampled_at)
        ) AS DECIMAL(38, 6)) END AS share
    FROM (
        SELECT
            cluster_id, measure, engine, labels, previous_at, sampled_at, counter_reset, scrape_gap, implausible_rise, rise,
            unnest(generate_series(first_month, last_month, INTERVAL 1 MONTH)) AS month_start
        FROM stepped
        WHERE first_month < last_month
    ) AS months_of_interval
)

SELECT
    cluster_id,
    measure,
    labels,
    previous_at AS interval_start,
    sampled_at AS interval_end,
    CAST(month_start AS DATE) AS month,
    counter_reset,
    scrape_gap,
    implausible_rise,
    CAST(CASE WHEN piece_end < sampled_at THEN share
        ELSE rise - coalesce(sum(share) OVER (PARTITION BY cluster_id, measure, labels, sampled_at), 0)
    END AS DECIMAL(38, 6)) AS increase,
    engine
FROM pieces
