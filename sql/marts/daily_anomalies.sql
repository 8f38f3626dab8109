-- grain: one row per anomaly: a day's API spend or cache-hit rate of a provider and team far from its trailing 28 days, or an invoice line priced at a price the catalogue does not have
-- materialized: table
-- unique_key: day, kind, provider, team, subject
-- settings: anomalies_threshold, anomalies_min_usd
-- description: What in a day's API spend is out of the ordinary, each row with its cause in words. A day's series is a provider and team (requests without a team: (unassigned)): its spend at the provider's prices (the metered cost; a day without requests spends 0, from the series' first day to the ledger's last day with requests), and its cache-hit rate (cache-hit input tokens over all input tokens, truncated to 1e-12; days with input only). Each day is scored against the same series' trailing 28 days (at least 14 of them; a series younger than that is not scored) with a robust score: (the day's value - the trailing median) / (1.4826 x the trailing median absolute deviation), the modified z-score, which one earlier spike does not move. kind 'spend_spike' or 'spend_drop': the score is at least the anomalies.threshold setting in size (or the trailing days never varied) and the spend differs from the median by at least anomalies.min_usd. kind 'cache_hit_drop': the rate fell by the threshold or more (or below trailing days that never varied) and the fall moved at least anomalies.min_usd of spend: (median rate - the day's rate) x what the day's input would save read wholly from the cache (its input tokens x (cache-miss price - cache-hit price)). kind 'price_not_in_catalog': an invoice line that states a model and a unit price for a token class (cache-hit or cache-miss input, cache write, output) at a price, converted to USD, that no price of the catalogue for that provider and model in force during the line's period has for that class (within 1e-6 USD per million tokens); its day is the line's first, its team '(all)', its subject the invoice and line.
-- column day DATE: The day (UTC).
-- column month DATE: First day of the day's month.
-- column kind VARCHAR: 'spend_spike', 'spend_drop', 'cache_hit_drop' or 'price_not_in_catalog'.
-- column provider VARCHAR: The API provider.
-- column team VARCHAR: The team ('(unassigned)' for requests without one; '(all)' for an invoice line).
-- column subject VARCHAR: What was measured: 'spend' or 'cache-hit rate', or the invoice and line ('invoice <id> line <line_id>').
-- column observed DECIMAL(38,12): The day's value: spend in USD, a cache-hit rate (0-1), or the invoice's unit price in USD per million tokens.
-- column baseline_median DECIMAL(38,12): The trailing 28 days' median (NULL for an invoice line).
-- column baseline_mad DECIMAL(38,12): The trailing 28 days' median absolute deviation (NULL for an invoice line).
-- column baseline_days BIGINT: How many trailing days the baseline has (NULL for an invoice line).
-- column score DECIMAL(38,2): The robust score (NULL where the trailing days never varied, and for an invoice line).
-- column spend_effect_usd DECIMAL(38,12): The spend the anomaly moved: the spend minus its median, the spend the cache-hit drop added, or the invoice line's amount (the spend priced at a price the catalogue lacks).
-- column cause VARCHAR: The anomaly in words.
WITH settings AS (
    SELECT anomalies_threshold, anomalies_min_usd FROM staging.stg_ledger__settings
),
daily AS (
    SELECT
        day,
        provider,
        coalesce(team, '(unassigned)') AS team,
        coalesce(sum(metered_usd), 0) AS spend_usd,
        sum(cache_hit_input_tokens) AS hit_tokens,
        sum(cache_hit_input_tokens + cache_miss_input_tokens) AS input_tokens,
        sum(b_hit_saving_usd) AS all_hit_saving_usd
    FROM intermediate.int_requests_daily
    WHERE route = 'api'
    GROUP BY day, provider, coalesce(team, '(unassigned)')
),
last_day AS (
    SELECT max(day) AS day FROM intermediate.int_requests_daily
),
series AS (
    SELECT provider, team, min(day) AS first_day FROM daily GROUP BY provider, team
),
spine_ts AS (
    SELECT
        s.provider,
        s.team,
        unnest(generate_series(CAST(s.first_day AS TIMESTAMP), CAST(l.day AS TIMESTAMP), INTERVAL 1 DAY)) AS day_start
    FROM series AS s
    CROSS JOIN last_day AS l
),
observed AS (
    SELECT
        'spend' AS measure,
        p.provider,
        p.team,
        CAST(p.day_start AS DATE) AS day,
        CAST(coalesce(d.spend_usd, 0) AS DECIMAL(38, 12)) AS value
    FROM spine_ts AS p
    LEFT JOIN daily AS d ON d.provider = p.provider AND d.team = p.team AND d.day = CAST(p.day_start AS DATE)
    UNION ALL
    SELECT
        'cache-hit rate' AS measure,
        provider,
        team,
        day,
        -- the rate truncated to 1e-12 by whole-number division (exact on both engines for any token count)
        CAST(CAST(hit_tokens AS HUGEINT) * 1000000000000 // CAST(input_tokens AS HUGEINT) AS DECIMAL(38, 0))
        * CAST(0.000000000001 AS DECIMAL(13, 12)) AS value
    FROM daily
    WHERE input_tokens > 0
),
history AS (
    -- each day's trailing 28 days of the same series, ranked by value
    SELECT
        o.measure,
        o.provider,
        o.team,
        o.day,
        t.value,
        row_number() OVER (PARTITION BY o.measure, o.provider, o.team, o.day ORDER BY t.value) AS pos,
        count(*) OVER (PARTITION BY o.measure, o.provider, o.team, o.day) AS n
    FROM observed AS o
    JOIN observed AS t
        ON
            t.measure = o.measure AND t.provider = o.provider AND t.team = o.team
            AND t.day >= o.day - INTERVAL 28 DAY AND t.day < o.day
),
medians AS (
    -- the median: the middle value, or the mean of the middle two (pos x 2 is n, n + 1 or n + 2 only there)
    SELECT
        measure,
        provider,
        team,
        day,
        n,
        (min(value) FILTER (WHERE pos * 2 IN (n, n + 1, n + 2)) + max(value) FILTER (WHERE pos * 2 IN (n, n + 1, n + 2)))
        * 0.5 AS median
    FROM history
    GROUP BY measure, provider, team, day, n
),
deviations AS (
    SELECT
        t.measure,
        t.provider,
        t.team,
        t.day,
        t.n,
        abs(t.value - m.median) AS deviation,
        row_number() OVER (PARTITION BY t.measure, t.provider, t.team, t.day ORDER BY abs(t.value - m.median)) AS pos
    FROM history AS t
    JOIN medians AS m USING (measure, provider, team, day)
),
spreads AS (
    SELECT
        measure,
        provider,
        team,
        day,
        (
            min(deviation) FILTER (WHERE pos * 2 IN (n, n + 1, n + 2))
            + max(deviation) FILTER (WHERE pos * 2 IN (n, n + 1, n + 2))
        ) * 0.5 AS mad
    FROM deviations
    GROUP BY measure, provider, team, day
),
scored AS (
    SELECT
        o.measure,
        o.provider,
        o.team,
        o.day,
        o.value,
        m.n,
        m.median,
        s.mad,
        CAST(CAST(o.value - m.median AS DOUBLE) / nullif(CAST(s.mad * 1.4826 AS DOUBLE), 0) AS DECIMAL(38, 2)) AS score,
        CASE
            WHEN o.measure = 'spend' THEN o.value - m.median
            -- a rate difference (at most 1) x a DECIMAL(38, 12) amount stays within DECIMAL(38, 24)
            ELSE CAST(m.median - o.value AS DECIMAL(20, 12)) * CAST(d.all_hit_saving_usd AS DECIMAL(38, 12))
        END AS effect_usd
    FROM observed AS o
    JOIN medians AS m USING (measure, provider, team, day)
    JOIN spreads AS s USING (measure, provider, team, day)
    LEFT JOIN daily AS d ON d.provider = o.provider AND d.team = o.team AND d.day = o.day
    WHERE m.n >= 14
),
flagged AS (
    SELECT
        c.*,
        CASE
            WHEN c.measure = 'spend' AND c.value > c.median THEN 'spend_spike'
            WHEN c.measure = 'spend' THEN 'spend_drop'
            ELSE 'cache_hit_drop'
        END AS kind
    FROM scored AS c
    CROSS JOIN settings AS s
    WHERE
        (c.measure = 'spend' OR c.value < c.median)
        AND abs(c.effect_usd) >= s.anomalies_min_usd
        AND (c.mad = 0 OR abs(c.score) >= s.anomalies_threshold)
),
invoice_lines AS (
    SELECT DISTINCT
        provider,
        invoice_id,
        line_id,
        line_type,
        model,
        period_start,
        period_end,
        unit_price_usd_per_million AS usd_per_million,
        line_amount_usd
    FROM intermediate.int_invoice_lines_current
    WHERE
        line_type IN ('input_cache_hit', 'input_cache_miss', 'input_cache_write', 'output')
        AND model IS NOT NULL AND unit_price_per_million IS NOT NULL
),
catalogued AS (
    -- the catalogue's prices of the line's class in force during the line's period
    SELECT
        l.provider,
        l.invoice_id,
        l.line_id,
        count(p.price_band) AS prices_in_force,
        count(p.price_band) FILTER (
            WHERE abs(l.usd_per_million - CASE l.line_type
                WHEN 'input_cache_hit' THEN p.cache_hit_input_per_million
                WHEN 'input_cache_miss' THEN p.cache_miss_input_per_million
                WHEN 'output' THEN p.output_per_million
            END) <= 0.000001
            OR (
                l.line_type = 'input_cache_write'
                AND least(
                    abs(l.usd_per_million - p.cache_write_5m_per_million), abs(l.usd_per_million - p.cache_write_1h_per_million)
                ) <= 0.000001
            )
        ) AS matching
    FROM invoice_lines AS l
    LEFT JOIN intermediate.int_prices_effective AS p
        ON
            p.provider = l.provider AND p.model = l.model AND p.valid_from < l.period_end
            AND (p.valid_until IS NULL OR p.valid_until > l.period_start)
    GROUP BY l.provider, l.invoice_id, l.line_id
),
scored_rows AS (
    SELECT
        day,
        kind,
        provider,
        team,
        measure AS subject,
        value AS observed,
        median AS baseline_median,
        mad AS baseline_mad,
        n AS baseline_days,
        score,
        CAST(effect_usd AS DECIMAL(38, 12)) AS spend_effect_usd,
        CASE kind
            WHEN 'cache_hit_drop' THEN format(
                '{} cache-hit rate of team {} fell to {} % on {} from a median of {} % over the {} days before; the input read uncached cost {} USD more',
                provider, team, CAST(CAST(round(value * 100, 1) AS DECIMAL(38, 1)) AS VARCHAR), day, CAST(CAST(round(median * 100, 1) AS DECIMAL(38, 1)) AS VARCHAR),
                n, CAST(CAST(round(effect_usd, 2) AS DECIMAL(38, 2)) AS VARCHAR)
            )
            ELSE format(
                '{} spend of team {} was {} USD on {}, {} the median of {} USD over the {} days before ({})',
                provider, team, CAST(CAST(round(value, 2) AS DECIMAL(38, 2)) AS VARCHAR), day,
                CASE WHEN kind = 'spend_spike' THEN 'above' ELSE 'below' END,
                CAST(CAST(round(median, 2) AS DECIMAL(38, 2)) AS VARCHAR), n,
                CASE
                    WHEN score IS NULL THEN 'those days never varied'
                    ELSE format('robust score {}', CAST(score AS VARCHAR))
                END
            )
        END AS cause
    FROM flagged
),
unknown_prices AS (
    SELECT
        CAST(l.period_start AS DATE) AS day,
        'price_not_in_catalog' AS kind,
        l.provider,
        '(all)' AS team,
        format('invoice {} line {}', l.invoice_id, l.line_id) AS subject,
        l.usd_per_million AS observed,
        CAST(NULL AS DECIMAL(38, 12)) AS baseline_median,
        CAST(NULL AS DECIMAL(38, 12)) AS baseline_mad,
        CAST(NULL AS BIGINT) AS baseline_days,
        CAST(NULL AS DECIMAL(38, 2)) AS score,
        l.line_amount_usd AS spend_effect_usd,
        CASE
            WHEN c.prices_in_force = 0 THEN format(
                '{} invoice {} line {} bills {} of {} at {} USD per million tokens; the price catalogue has no price for {} at {} in that period',
                l.provider, l.invoice_id, l.line_id, replace(l.line_type, '_', ' '), l.model,
                CAST(CAST(round(l.usd_per_million, 6) AS DECIMAL(38, 6)) AS VARCHAR), l.model, l.provider
            )
            ELSE format(
                '{} invoice {} line {} bills {} of {} at {} USD per million tokens, a price the catalogue does not have for it in that period',
                l.provider, l.invoice_id, l.line_id, replace(l.line_type, '_', ' '), l.model,
                CAST(CAST(round(l.usd_per_million, 6) AS DECIMAL(38, 6)) AS VARCHAR)
            )
        END AS cause
    FROM invoice_lines AS l
    JOIN catalogued AS c USING (provider, invoice_id, line_id)
    WHERE c.matching = 0
),
anomalies AS (
    SELECT * FROM scored_rows
    UNION ALL
    SELECT * FROM unknown_prices
)
SELECT
    day,
    CAST(date_trunc('month', day) AS DATE) AS month,
    kind,
    provider,
    team,
    subject,
    observed,
    baseline_median,
    baseline_mad,
    baseline_days,
    score,
    CAST(spend_effect_usd AS DECIMAL(38, 12)) AS spend_effect_usd,
    cause
FROM anomalies
