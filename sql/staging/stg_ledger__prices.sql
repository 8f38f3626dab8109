-- grain: one row per provider x model x service_tier x min_input_tokens x effective_from
-- materialized: view
-- unique_key: provider, model, service_tier, min_input_tokens, effective_from
-- description: The current price catalogue, per million tokens in the row's currency: for each key the latest-loaded row (a later price file restates a row by repeating its key; the earlier row stays in raw.prices). Cache-write prices default to the cache-miss price.
-- column provider VARCHAR
-- column model VARCHAR
-- column service_tier VARCHAR
-- column min_input_tokens BIGINT
-- column effective_from TIMESTAMP
-- column effective_to TIMESTAMP
-- column cache_hit_input_per_million DECIMAL(24,12)
-- column cache_miss_input_per_million DECIMAL(24,12)
-- column cache_write_5m_per_million DECIMAL(24,12)
-- column cache_write_1h_per_million DECIMAL(24,12)
-- column output_per_million DECIMAL(24,12)
-- column web_search_per_call DECIMAL(24,12)
-- column currency VARCHAR
-- column loaded_seq BIGINT: Load order of the file the row came from (meta.loaded_files.load_seq).
SELECT
    p.provider,
    p.model,
    p.service_tier,
    p.min_input_tokens,
    p.effective_from,
    p.effective_to,
    p.cache_hit_input_per_million,
    p.cache_miss_input_per_million,
    coalesce(p.cache_write_5m_per_million, p.cache_miss_input_per_million) AS cache_write_5m_per_million,
    coalesce(p.cache_write_1h_per_million, p.cache_miss_input_per_million) AS cache_write_1h_per_million,
    p.output_per_million,
    p.web_search_per_call,
    p.currency,
    f.load_seq AS loaded_seq
FROM raw.prices AS p
INNER JOIN meta.loaded_files AS f ON p.source_file_hash = f.file_hash
QUALIFY row_number() OVER (
    PARTITION BY p.provider, p.model, p.service_tier, p.min_input_tokens, p.effective_from
    ORDER BY f.load_seq DESC, p.source_line DESC
) = 1
