-- grain: one row per provider x model x effective_from
-- materialized: view
-- unique_key: provider, model, effective_from
-- description: Price catalog as loaded, USD per million tokens.
SELECT
    provider,
    model,
    effective_from,
    effective_to,
    cache_hit_input_per_million,
    cache_miss_input_per_million,
    output_per_million
FROM raw.prices
