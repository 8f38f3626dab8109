-- grain: one row per month x provider that prices the reference model in the month
-- materialized: table
-- unique_key: month, provider
-- description: The reference model's list price of the month, per provider: the standard tier's first context band in force at the month's end (the latest price that took effect before the month ended). One convention for every monthly figure valued at list price (what the cluster's prefix cache saved, the phase costs beside the API's prices, each provider's alternative in the verdict's robustness); a request itself is priced at its own instant (int_requests_priced).
-- settings: reference_api_model, reference_api_provider
-- column month DATE: First day of the month (UTC).
-- column provider VARCHAR: A provider that prices the reference model in the month.
-- column is_reference BOOLEAN: The provider is the reference_api_provider setting.
-- column hit_per_million DECIMAL(38,18): Its cache-hit input price per million tokens (USD).
-- column miss_per_million DECIMAL(38,18): Its cache-miss input price per million tokens (USD).
-- column output_per_million DECIMAL(38,18): Its output price per million tokens (USD; reasoning tokens are billed as output).
WITH settings AS (SELECT * FROM staging.stg_ledger__settings)

SELECT
    m.month,
    p.provider,
    bool_or(p.provider = s.reference_api_provider) AS is_reference,
    arg_max(p.cache_hit_input_per_million, p.valid_from) AS hit_per_million,
    arg_max(p.cache_miss_input_per_million, p.valid_from) AS miss_per_million,
    arg_max(p.output_per_million, p.valid_from) AS output_per_million
FROM intermediate.int_months_spined AS m
CROSS JOIN settings AS s
JOIN intermediate.int_prices_effective AS p
    ON p.model = s.reference_api_model AND p.service_tier = 'standard' AND p.min_input_tokens = 0
    AND p.valid_from < m.month_end AND (p.valid_until IS NULL OR p.valid_until > m.month_start)
GROUP BY m.month, p.provider
