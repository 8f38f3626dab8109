-- grain: one row per month x cluster (cluster-months with self-hosted requests or engine token counters)
-- materialized: table
-- unique_key: month, cluster_id
-- description: The tokens the cluster's serving engines counted (vLLM's or SGLang's prompt and generation token counters, summed over every engine of every instance) against the tokens of the cluster's requests in the request log, per month: a log shipper that loses requests shows up here, as a provider's usage export shows up a gateway's lost API logs. Logged prompt tokens are a request's input (cache hits and misses: the engine counts both); logged generation tokens its output and reasoning. The engine's counts are the rises of its counters between samples in the month (intermediate.int_engine_token_increases): the counters should be sampled over the whole month for the comparison to hold.
-- settings: reconciliation_tolerance_pct
-- column month DATE: First day of the month (UTC).
-- column cluster_id VARCHAR: The cluster.
-- column engine_prompt_tokens DECIMAL(38,6): Prompt tokens the engines counted (NULL: no counter samples this month).
-- column engine_generation_tokens DECIMAL(38,6): Generation tokens the engines counted.
-- column engine_tokens DECIMAL(38,6): engine_prompt_tokens + engine_generation_tokens.
-- column logged_prompt_tokens BIGINT: Input tokens of the cluster's requests in the request log (cache hits and misses).
-- column logged_generation_tokens BIGINT: Output and reasoning tokens of the cluster's requests in the request log.
-- column logged_tokens BIGINT: logged_prompt_tokens + logged_generation_tokens.
-- column difference DECIMAL(38,6): logged_tokens - engine_tokens (negative: the log holds fewer tokens than the engines counted).
-- column difference_pct DECIMAL(18,4): difference / engine_tokens x 100, to 4 decimals; NULL when engine_tokens is 0 or NULL.
-- column tolerance_tokens DECIMAL(38,6): The difference within which the two agree: [reconciliation] tolerance_pct of engine_tokens.
-- column status VARCHAR: 'ok' (within the tolerance), 'logs_missing' (the log holds fewer tokens: requests not logged or not loaded), 'logs_extra' (the log holds more) or 'no_metrics' (no engine counter samples this month).
-- column counter_series BIGINT: Counter series (one engine of one instance, one measure) sampled in the month.
-- column counter_resets BIGINT: Intervals in which a counter fell: an engine restarted (what it counted before the restart, since its last sample, is not known).
-- column scrape_gaps BIGINT: Intervals of more than 5 minutes between two samples of a series.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
counted AS (
    SELECT
        month,
        cluster_id,
        sum(CASE WHEN measure = 'prompt_tokens' THEN increase ELSE 0 END) AS engine_prompt_tokens,
        sum(CASE WHEN measure = 'generation_tokens' THEN increase ELSE 0 END) AS engine_generation_tokens,
        count(DISTINCT measure || ' ' || labels) AS counter_series,
        sum(CASE WHEN counter_reset THEN 1 ELSE 0 END) AS counter_resets,
        sum(CASE WHEN scrape_gap THEN 1 ELSE 0 END) AS scrape_gaps
    FROM intermediate.int_engine_token_increases
    WHERE measure IN ('prompt_tokens', 'generation_tokens')
    GROUP BY month, cluster_id
),
logged AS (
    SELECT
        month,
        cluster_id,
        sum(cache_hit_input_tokens + cache_miss_input_tokens) AS logged_prompt_tokens,
        sum(output_tokens + reasoning_tokens) AS logged_generation_tokens
    FROM intermediate.int_requests_monthly
    WHERE route = 'self_hosted' AND cluster_id IS NOT NULL
    GROUP BY month, cluster_id
),
compared AS (
    SELECT
        coalesce(c.month, l.month) AS month,
        coalesce(c.cluster_id, l.cluster_id) AS cluster_id,
        c.engine_prompt_tokens,
        c.engine_generation_tokens,
        c.engine_prompt_tokens + c.engine_generation_tokens AS engine_tokens,
        coalesce(l.logged_prompt_tokens, 0) AS logged_prompt_tokens,
        coalesce(l.logged_generation_tokens, 0) AS logged_generation_tokens,
        coalesce(l.logged_prompt_tokens, 0) + coalesce(l.logged_generation_tokens, 0) AS logged_tokens,
        coalesce(c.counter_series, 0) AS counter_series,
        coalesce(c.counter_resets, 0) AS counter_resets,
        coalesce(c.scrape_gaps, 0) AS scrape_gaps
    FROM counted AS c
    FULL OUTER JOIN logged AS l ON c.month = l.month AND c.cluster_id = l.cluster_id
)

SELECT
    c.month,
    c.cluster_id,
    CAST(c.engine_prompt_tokens AS DECIMAL(38, 6)) AS engine_prompt_tokens,
    CAST(c.engine_generation_tokens AS DECIMAL(38, 6)) AS engine_generation_tokens,
    CAST(c.engine_tokens AS DECIMAL(38, 6)) AS engine_tokens,
    CAST(c.logged_prompt_tokens AS BIGINT) AS logged_prompt_tokens,
    CAST(c.logged_generation_tokens AS BIGINT) AS logged_generation_tokens,
    CAST(c.logged_tokens AS BIGINT) AS logged_tokens,
    CAST(c.logged_tokens - c.engine_tokens AS DECIMAL(38, 6)) AS difference,
    CASE
        WHEN c.engine_tokens > 0
            THEN CAST(round((c.logged_tokens - c.engine_tokens) * 100.0 / c.engine_tokens, 4) AS DECIMAL(18, 4))
    END AS difference_pct,
    CAST(money_count_share(s.reconciliation_tolerance_pct, c.engine_tokens, 100) AS DECIMAL(38, 6)) AS tolerance_tokens,
    CASE
        WHEN c.engine_tokens IS NULL THEN 'no_metrics'
        WHEN abs(c.logged_tokens - c.engine_tokens) * 100 <= c.engine_tokens * s.reconciliation_tolerance_pct THEN 'ok'
        WHEN c.logged_tokens < c.engine_tokens THEN 'logs_missing'
        ELSE 'logs_extra'
    END AS status,
    CAST(c.counter_series AS BIGINT) AS counter_series,
    CAST(c.counter_resets AS BIGINT) AS counter_resets,
    CAST(c.scrape_gaps AS BIGINT) AS scrape_gaps
FROM compared AS c
CROSS JOIN settings AS s
