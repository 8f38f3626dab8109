-- grain: one row per counter sample that rose implausibly fast from its series' sample before (cluster x metric x series x instant)
-- materialized: table
-- unique_key: cluster_id, metric, labels, sampled_at
-- description: The meters' counter samples set aside as implausible: a GPU's energy counter that rose faster than 10 kW (10,000 mJ a millisecond; the most power-hungry accelerators draw about 1.4 kW) or an engine's token counter that rose faster than 10 million tokens a second, from the series' sample before to this one (a counter that fell, restarted at 0, rose by its value). Such a rise is a corrupt sample or a misread export, never a measurement: it is not counted. A spike (the sample after it falls back below it) is left out of its series, so the interval around it is measured from its neighbours; a step that stays up leaves its interval's rise uncounted. The nightly and costledger status name each one with its file and line.
-- column cluster_id VARCHAR
-- column metric VARCHAR
-- column labels VARCHAR
-- column sampled_at TIMESTAMP: The sample set aside (UTC).
-- column value DECIMAL(38,6): The counter's value at the sample.
-- column previous_at TIMESTAMP: The series' sample before (UTC).
-- column previous_value DECIMAL(38,6): The counter's value at the sample before.
-- column rise DECIMAL(38,6): What the counter rose by between the two samples (its value where it fell: restarted at 0).
-- column milliseconds BIGINT: Time between the two samples.
-- column spike BOOLEAN: The series' next sample falls back below this one: one corrupt sample, left out of its series.
-- column reason VARCHAR: Why the sample is set aside, in words: the rise, the time it took and the bound it passes.
WITH counters AS (
    SELECT
        cluster_id,
        metric,
        labels,
        sampled_at,
        value,
        'mJ' AS unit,
        10000 AS per_ms,
        '10 kW (10,000 mJ a millisecond) from one GPU' AS bound
    FROM staging.stg_ledger__gpu_metrics
    WHERE measure = 'energy_mj'
    UNION ALL
    SELECT
        cluster_id,
        metric,
        labels,
        sampled_at,
        value,
        'tokens' AS unit,
        10000 AS per_ms,
        '10 million tokens a second from one engine' AS bound
    FROM staging.stg_ledger__engine_metrics
    WHERE measure IN ('prompt_tokens', 'generation_tokens', 'prefix_cache_queries', 'prefix_cache_hits')
),
ordered AS (
    SELECT
        *,
        lag(value) OVER (PARTITION BY cluster_id, metric, labels ORDER BY sampled_at) AS previous_value,
        lag(sampled_at) OVER (PARTITION BY cluster_id, metric, labels ORDER BY sampled_at) AS previous_at,
        lead(value) OVER (PARTITION BY cluster_id, metric, labels ORDER BY sampled_at) AS next_value
    FROM counters
),
-- a sample that rises too fast from the one before and falls back at the one after: one corrupt sample
spikes AS (
    SELECT cluster_id, metric, labels, sampled_at
    FROM ordered
    WHERE
        next_value < value
        AND counter_rise(value, previous_value) > per_ms * date_diff('millisecond', previous_at, sampled_at)
),
-- the series without its spikes, as the interval models measure it: a rise too fast there is a step that stays up
kept AS (
    SELECT
        c.*,
        lag(c.value) OVER (PARTITION BY c.cluster_id, c.metric, c.labels ORDER BY c.sampled_at) AS previous_value,
        lag(c.sampled_at) OVER (PARTITION BY c.cluster_id, c.metric, c.labels ORDER BY c.sampled_at) AS previous_at
    FROM counters AS c
    LEFT JOIN spikes AS s
        ON c.cluster_id = s.cluster_id AND c.metric = s.metric AND c.labels = s.labels AND c.sampled_at = s.sampled_at
    WHERE s.sampled_at IS NULL
),
-- the spikes as their series has them, the steps as the series without its spikes has them
candidates AS (
    SELECT
        o.cluster_id, o.metric, o.labels, o.sampled_at, o.value, o.unit, o.per_ms, o.bound, o.previous_value,
        o.previous_at, TRUE AS spike
    FROM ordered AS o
    INNER JOIN spikes AS s
        ON o.cluster_id = s.cluster_id AND o.metric = s.metric AND o.labels = s.labels AND o.sampled_at = s.sampled_at
    UNION ALL
    SELECT
        cluster_id, metric, labels, sampled_at, value, unit, per_ms, bound, previous_value, previous_at,
        FALSE AS spike
    FROM kept
),
rises AS (
    SELECT
        *,
        CAST(counter_rise(value, previous_value) AS DECIMAL(38, 6)) AS rise,
        date_diff('millisecond', previous_at, sampled_at) AS milliseconds
    FROM candidates
    WHERE previous_value IS NOT NULL
)

SELECT
    cluster_id,
    metric,
    labels,
    sampled_at,
    value,
    previous_at,
    previous_value,
    rise,
    milliseconds,
    spike,
    format(
        '{} rose by {} {} in {} s, faster than {}: not a measurement, not counted {}',
        metric, CAST(CAST(rise AS DECIMAL(38, 0)) AS VARCHAR), unit,
        CAST(CAST(milliseconds / 1000 AS DECIMAL(38, 3)) AS VARCHAR), bound,
        CASE WHEN spike
            THEN '(the next sample falls back: this one is left out, the interval measured around it)'
            ELSE '(the counter stays up: this interval''s rise is left out)'
        END
    ) AS reason
FROM rises
WHERE rise > per_ms * milliseconds
