-- grain: one row per provider x model x effective_from
-- materialized: table
-- unique_key: provider, model, effective_from
-- description: Each price with the instant it stops applying: its effective_to, else the next price's effective_from, else never.
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
FROM staging.stg_ledger__prices
