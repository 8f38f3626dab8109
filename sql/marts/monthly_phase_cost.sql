-- grain: one row per month x cluster x phase (prompt, generation)
-- materialized: table
-- unique_key: month, cluster_id, phase
-- description: The cluster's fixed cost split between the two phases of serving, prompt (prefill: reading the input) and generation (decode: writing the output and reasoning), and what a million tokens of each cost, beside the reference API's list price of the month for the same tokens. The split follows a stated rule (allocation_method): engine_phase_time, the seconds the engines' requests spent in each phase (the sums of vLLM's vllm:request_prefill_time_seconds and vllm:request_decode_time_seconds histograms, rises within the month) when both are metered; else token_share, the phases' tokens in the request log (a million prompt tokens then costs what a million generation tokens does). The two phases' costs add up to the fixed cost to the last digit (generation takes what prompt leaves). No split without tokens or engine time: cost NULL, allocation_method none.
-- column month DATE: First day of the month (UTC).
-- column cluster_id VARCHAR: The self-hosted cluster.
-- column phase VARCHAR: prompt (cache-hit and cache-miss input tokens) or generation (output and reasoning tokens).
-- column tokens BIGINT: The phase's tokens of the cluster's requests in the month (all attempts); the two phases add up to marts.monthly_utilisation.tokens_served.
-- column allocation_method VARCHAR: engine_phase_time, token_share or none (see the description).
-- column phase_seconds DECIMAL(38,6): Seconds the engines' requests spent in the phase in the month (engine_phase_time); NULL otherwise.
-- column allocation_share DOUBLE: The phase's share of the fixed cost: its seconds (or tokens) over both phases'.
-- column cost_usd DECIMAL(38,12): The phase's part of the fixed cost (marts.monthly_utilisation.fixed_cost_usd): the fixed cost x allocation_share, for generation the fixed cost less prompt's; exact (DECIMAL, 12 decimal places).
-- column cost_per_million_tokens DECIMAL(38,12): cost_usd / tokens x 1,000,000: what a million of the phase's tokens cost on the cluster this month; NULL without tokens.
-- column api_list_per_million DECIMAL(38,12): The reference API's list price per million of the same tokens (int_reference_prices_monthly): for prompt, its cache-hit and cache-miss input prices at the cluster's own cache-hit share of input; for generation, its output price. List price, before waste and invoice uplift; NULL without a price.
WITH tokens AS (
    SELECT
        month,
        cluster_id,
        sum(cache_hit_input_tokens + cache_miss_input_tokens) AS prompt_tokens,
        sum(cache_hit_input_tokens) AS hit_tokens,
        sum(output_tokens + reasoning_tokens) AS generation_tokens
    FROM intermediate.int_requests_monthly
    WHERE route = 'self_hosted'
    GROUP BY month, cluster_id
),
phase_time AS (
    SELECT
        cluster_id,
        month,
        sum(increase) FILTER (WHERE measure = 'prefill_seconds') AS prefill_s,
        sum(increase) FILTER (WHERE measure = 'decode_seconds') AS decode_s
    FROM intermediate.int_engine_token_increases
    WHERE measure IN ('prefill_seconds', 'decode_seconds')
    GROUP BY cluster_id, month
),
drivers AS (
    SELECT
        u.month,
        u.cluster_id,
        u.fixed_cost_usd,
        coalesce(t.prompt_tokens, 0) AS prompt_tokens,
        coalesce(t.generation_tokens, 0) AS generation_tokens,
        coalesce(t.hit_tokens, 0) AS hit_tokens,
        p.prefill_s,
        p.decode_s,
        coalesce(p.prefill_s > 0 AND p.decode_s > 0, FALSE) AS timed
    FROM marts.monthly_utilisation AS u
    LEFT JOIN tokens AS t ON t.month = u.month AND t.cluster_id = u.cluster_id
    LEFT JOIN phase_time AS p ON p.month = u.month AND p.cluster_id = u.cluster_id
),
weights AS (
    SELECT
        *,
        CASE WHEN timed THEN 'engine_phase_time' WHEN prompt_tokens + generation_tokens > 0 THEN 'token_share'
            ELSE 'none' END AS allocation_method,
        CAST(CASE WHEN timed THEN prefill_s ELSE prompt_tokens END AS DECIMAL(38, 6)) AS prompt_weight,
        CAST(CASE WHEN timed THEN prefill_s + decode_s ELSE prompt_tokens + generation_tokens END AS DECIMAL(38, 6))
            AS total_weight
    FROM drivers
),
prompt_part AS (
    SELECT
        *,
        CASE WHEN total_weight > 0 THEN money_share(fixed_cost_usd, prompt_weight, total_weight) END AS prompt_usd
    FROM weights
),
phases AS (
    SELECT
        month,
        cluster_id,
        'prompt' AS phase,
        prompt_tokens AS tokens,
        hit_tokens,
        allocation_method,
        CASE WHEN timed THEN prefill_s END AS phase_seconds,
        CASE WHEN total_weight > 0 THEN CAST(prompt_weight / total_weight AS DOUBLE) END AS allocation_share,
        CAST(prompt_usd AS DECIMAL(38, 12)) AS cost_usd
    FROM prompt_part
    UNION ALL
    SELECT
        month,
        cluster_id,
        'generation',
        generation_tokens,
        0,
        allocation_method,
        CASE WHEN timed THEN decode_s END,
        CASE WHEN total_weight > 0 THEN CAST((total_weight - prompt_weight) / total_weight AS DOUBLE) END,
        CAST(fixed_cost_usd - prompt_usd AS DECIMAL(38, 12))
    FROM prompt_part
),
prices AS (
    SELECT month, hit_per_million, miss_per_million, output_per_million
    FROM intermediate.int_reference_prices_monthly
    WHERE is_reference
),
listed AS (
    -- the list cost of a million of the phase's tokens, before the division by the phase's tokens
    SELECT
        x.*,
        CASE
            WHEN x.phase = 'generation' THEN CAST(p.output_per_million AS DECIMAL(38, 12))
            WHEN x.tokens > 0 THEN CAST(
                CAST(x.hit_tokens AS DECIMAL(38, 0)) * p.hit_per_million
                + CAST(x.tokens - x.hit_tokens AS DECIMAL(38, 0)) * p.miss_per_million AS DECIMAL(38, 12))
        END AS list_numerator
    FROM phases AS x
    LEFT JOIN prices AS p ON p.month = x.month
)

SELECT
    month,
    cluster_id,
    phase,
    CAST(tokens AS BIGINT) AS tokens,
    allocation_method,
    CAST(phase_seconds AS DECIMAL(38, 6)) AS phase_seconds,
    allocation_share,
    cost_usd,
    CASE WHEN tokens > 0 THEN money_count_share(cost_usd, 1000000, tokens) END AS cost_per_million_tokens,
    CASE WHEN phase = 'generation' THEN list_numerator WHEN tokens > 0 THEN money_div(list_numerator, tokens) END
        AS api_list_per_million
FROM listed
