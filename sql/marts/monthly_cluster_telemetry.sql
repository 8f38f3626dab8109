-- grain: one row per month x cluster with GPU or engine metrics
-- materialized: table
-- unique_key: month, cluster_id
-- description: What each cluster's own meters say of its month beside the request log: how busy its GPUs were by the DCGM exporter (the engine-active share over the provisioned GPU-hours, beside the token utilisation of marts.monthly_utilisation), the energy they drew and what it cost (int_cluster_energy_monthly), and the hours its serving engines queued requests (int_engine_queue_monthly) with whether that happened far below the capacity of its nodes (queue_pressure, which makes the month's sweep_optimistic caveat), and what its engines' prefix cache saved: the share of prompt tokens found in it, beside the API route's cache-hit share, and their worth at the reference API's prices.
-- settings: gpus_per_node
-- column month DATE: First day of the month (UTC).
-- column cluster_id VARCHAR: The cluster.
-- column gpus_metered BIGINT: GPUs with engine-active or GPU-utilisation samples in the month.
-- column provisioned_gpu_hours DECIMAL(38,6): The month's provisioned node-hours x the gpus_per_node setting.
-- column metered_gpu_hours DECIMAL(38,6): GPU-hours covered by the samples engine_active_gpu_hours rests on (scrape gaps left out).
-- column engine_active_gpu_hours DECIMAL(38,6): GPU-hours the GPUs were busy: the DCGM engine-active share x time, or where a GPU has no engine-active field its utilisation / 100 x time (busy_source).
-- column engine_active_share DOUBLE: engine_active_gpu_hours / provisioned_gpu_hours: a second busy measure, from the hardware, beside token_utilisation. NULL without engine-active samples or provisioned hours.
-- column token_utilisation DOUBLE: The month's tokens served / its token capacity (marts.monthly_utilisation).
-- column energy_kwh DECIMAL(38,12): kWh the GPUs drew (NULL: no energy or power samples).
-- column energy_source VARCHAR: counter, power or mixed (see int_cluster_energy_monthly).
-- column energy_usd DECIMAL(38,12): What that energy cost the owned hardware (kWh x energy.pue x energy.usd_per_kwh x the owned share of node-hours).
-- column energy_line VARCHAR: added, opex_row, no_owned_hardware or no_price (see int_cluster_energy_monthly).
-- column waiting_hours BIGINT: Clock hours in which the serving engines reported requests waiting.
-- column least_waiting_hour_tokens_per_second DECIMAL(38,3): The fewest tokens per second served in an hour with requests waiting.
-- column capacity_tokens_per_second DECIMAL(38,3): What the nodes in service serve within the SLO (capacity per node x nodes in service).
-- column queue_pressure BOOLEAN: Requests waited in an hour served under half of capacity_tokens_per_second (see marts.monthly_utilisation).
-- column busy_source VARCHAR: What engine_active_gpu_hours rests on: engine_active (DCGM's profiling field DCGM_FI_PROF_GR_ENGINE_ACTIVE on every GPU), gpu_util (its default DCGM_FI_DEV_GPU_UTIL, the share of time a kernel ran, which counts a GPU busy with one small kernel as fully busy), or mixed (GPUs differ; each GPU's engine-active field where it has one). NULL without either.
-- column prefix_cache_queried_tokens DECIMAL(38,6): Prompt tokens the engines looked up in their prefix cache (vLLM's vllm:prefix_cache_queries_total rises; an SGLang engine's prompt tokens, sglang:prompt_tokens_total, where it counts its cached tokens); NULL without those counters.
-- column prefix_cache_hit_tokens DECIMAL(38,6): Of them, the tokens found in the cache, whose prefill the cluster did not compute again (vllm:prefix_cache_hits_total, sglang:cached_tokens_total over its cache sources).
-- column prefix_cache_hit_share DOUBLE: prefix_cache_hit_tokens / prefix_cache_queried_tokens: the cluster's cache-hit share of prompt tokens.
-- column api_cache_hit_share DOUBLE: The API route's cache-hit share of input tokens in the month (its logged cache-hit input over all its input), beside the cluster's; NULL without API input or without prefix-cache counters.
-- column prefix_cache_saved_usd DECIMAL(38,12): What the cluster's cache hits would have saved on the reference API: prefix_cache_hit_tokens x (its cache-miss - cache-hit input price per million: the reference model's list price of the month, int_reference_prices_monthly) / 1,000,000. A measure of the cache's worth, not a cost line; NULL without the counters or the price.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
per_gpu AS (
    -- a GPU's busy time from its engine-active field where the month has it, else from its utilisation field
    SELECT
        cluster_id,
        month,
        labels,
        bool_or(measure = 'engine_active') AS has_engine_active,
        sum(seconds) FILTER (WHERE measure = 'engine_active' AND active_seconds IS NOT NULL) AS active_metered_s,
        sum(active_seconds) FILTER (WHERE measure = 'engine_active') AS active_s,
        sum(seconds) FILTER (WHERE measure = 'gpu_util' AND active_seconds IS NOT NULL) AS util_metered_s,
        sum(active_seconds) FILTER (WHERE measure = 'gpu_util') AS util_s
    FROM intermediate.int_gpu_intervals
    WHERE measure IN ('engine_active', 'gpu_util')
    GROUP BY cluster_id, month, labels
),
active AS (
    SELECT
        cluster_id,
        month,
        count(*) AS gpus_metered,
        money_div(sum(CASE WHEN has_engine_active THEN active_metered_s ELSE util_metered_s END), 3600)
            AS metered_gpu_hours,
        money_div(sum(CASE WHEN has_engine_active THEN active_s ELSE util_s END), 3600) AS engine_active_gpu_hours,
        CASE WHEN bool_and(has_engine_active) THEN 'engine_active' WHEN bool_or(has_engine_active) THEN 'mixed'
            ELSE 'gpu_util' END AS busy_source
    FROM per_gpu
    GROUP BY cluster_id, month
),
prefix AS (
    -- the prompt tokens the engines' prefix caches were asked for and found: vLLM counts both; SGLang counts those
    -- found (sglang:cached_tokens_total), out of all its prompt tokens
    SELECT
        cluster_id,
        month,
        coalesce(sum(increase) FILTER (WHERE measure = 'prefix_cache_queries'), 0)
        + coalesce(sum(increase) FILTER (WHERE measure = 'prompt_tokens' AND engine = 'sglang'), 0) AS queried,
        sum(increase) FILTER (WHERE measure = 'prefix_cache_hits') AS hits
    FROM intermediate.int_engine_token_increases
    WHERE measure IN ('prefix_cache_queries', 'prefix_cache_hits') OR (measure = 'prompt_tokens' AND engine = 'sglang')
    GROUP BY cluster_id, month
    HAVING bool_or(measure IN ('prefix_cache_queries', 'prefix_cache_hits'))
),
api_hits AS (
    SELECT
        month,
        sum(cache_hit_input_tokens) AS hit_tokens,
        sum(cache_hit_input_tokens + cache_miss_input_tokens) AS input_tokens
    FROM intermediate.int_requests_monthly
    WHERE route = 'api'
    GROUP BY month
),
hit_price AS (
    -- what a cache hit saves per million input tokens at the reference API's list price of the month
    SELECT month, miss_per_million - hit_per_million AS per_million
    FROM intermediate.int_reference_prices_monthly
    WHERE is_reference
),
prefix_worth AS (
    -- the hits times the saving per million, divided by the million in the next step
    SELECT
        x.cluster_id,
        x.month,
        x.queried,
        x.hits,
        money_mul(x.hits, h.per_million) AS hit_usd_millions
    FROM prefix AS x
    LEFT JOIN hit_price AS h ON h.month = x.month
),
keys AS (
    SELECT cluster_id, month FROM active
    UNION
    SELECT cluster_id, month FROM prefix
    UNION
    SELECT cluster_id, month FROM intermediate.int_cluster_energy_monthly
    UNION
    SELECT cluster_id, month FROM intermediate.int_engine_queue_monthly
)
SELECT
    k.month,
    k.cluster_id,
    coalesce(a.gpus_metered, 0) AS gpus_metered,
    CAST(u.provisioned_node_hours * s.gpus_per_node AS DECIMAL(38, 6)) AS provisioned_gpu_hours,
    CAST(a.metered_gpu_hours AS DECIMAL(38, 6)) AS metered_gpu_hours,
    CAST(a.engine_active_gpu_hours AS DECIMAL(38, 6)) AS engine_active_gpu_hours,
    CASE WHEN u.provisioned_node_hours > 0 AND a.engine_active_gpu_hours IS NOT NULL
        THEN CAST(a.engine_active_gpu_hours / (u.provisioned_node_hours * s.gpus_per_node) AS DOUBLE) END
        AS engine_active_share,
    u.token_utilisation,
    e.energy_kwh,
    e.energy_source,
    e.energy_usd,
    e.energy_line,
    coalesce(q.waiting_hours, 0) AS waiting_hours,
    CAST(q.least_waiting_hour_tokens / 3600 AS DECIMAL(38, 3)) AS least_waiting_hour_tokens_per_second,
    CAST(u.capacity_per_node_tokens_per_second * u.nodes_in_service AS DECIMAL(38, 3)) AS capacity_tokens_per_second,
    coalesce(u.queue_pressure, FALSE) AS queue_pressure,
    a.busy_source,
    CAST(x.queried AS DECIMAL(38, 6)) AS prefix_cache_queried_tokens,
    CAST(x.hits AS DECIMAL(38, 6)) AS prefix_cache_hit_tokens,
    CASE WHEN x.queried > 0 THEN CAST(x.hits / x.queried AS DOUBLE) END AS prefix_cache_hit_share,
    CASE WHEN x.queried > 0 AND ah.input_tokens > 0 THEN CAST(ah.hit_tokens / ah.input_tokens AS DOUBLE) END
        AS api_cache_hit_share,
    money_div(x.hit_usd_millions, 1000000) AS prefix_cache_saved_usd
FROM keys AS k
CROSS JOIN settings AS s
LEFT JOIN active AS a ON a.cluster_id = k.cluster_id AND a.month = k.month
LEFT JOIN intermediate.int_cluster_energy_monthly AS e ON e.cluster_id = k.cluster_id AND e.month = k.month
LEFT JOIN intermediate.int_engine_queue_monthly AS q ON q.cluster_id = k.cluster_id AND q.month = k.month
LEFT JOIN marts.monthly_utilisation AS u ON u.cluster_id = k.cluster_id AND u.month = k.month
LEFT JOIN prefix_worth AS x ON x.cluster_id = k.cluster_id AND x.month = k.month
LEFT JOIN api_hits AS ah ON ah.month = k.month
