-- grain: one row per provider x model x effective_from
-- materialized: table
-- unique_key: provider, model, effective_from
-- description: Each price with the instant it stops applying: its effective_to, else the next price's effective_from, else never. A price whose range overlaps an earlier-loaded one of the same provider and model is left out (ingest quarantines such rows; this keeps a ledger loaded before that check buildable), so no request ever matches two prices.
WITH overlapping AS (
    SELECT DISTINCT CASE WHEN a.loaded_seq >= b.loaded_seq THEN a.effective_from ELSE b.effective_from END AS effective_from,
        a.provider, a.model
    FROM staging.stg_ledger__prices AS a
    JOIN staging.stg_ledger__prices AS b
        ON a.provider = b.provider AND a.model = b.model AND a.effective_from < b.effective_from
        AND a.effective_to > b.effective_from
),
kept AS (
    SELECT p.*
    FROM staging.stg_ledger__prices AS p
    ANTI JOIN overlapping USING (provider, model, effective_from)
)
SELECT
    provider,
    model,
    effective_from,
    coalesce(
        effective_to,
        lead(effective_from) OVER (PARTITION BY provider, model ORDER BY effective_from),
        TIMESTAMP '9999-12-31 00:00:00'
    ) AS effective_until,
    cache_hit_input_per_million,
    cache_miss_input_per_million,
    output_per_million
FROM kept
