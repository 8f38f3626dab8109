-- The price in force now for each provider, model, service tier and long-context level: of the current catalogue
-- (each key's latest-loaded row), the row that takes effect last. A LiteLLM price map, which carries no dates, is
-- compared with these: a price it repeats keeps its date, a price it changes takes effect from the file's own date.
WITH catalogue AS (
    SELECT p.*
    FROM raw.prices AS p
    INNER JOIN meta.loaded_files AS f ON p.source_file_hash = f.file_hash
    QUALIFY row_number() OVER (
        PARTITION BY p.provider, p.model, p.service_tier, p.min_input_tokens, p.effective_from
        ORDER BY f.load_seq DESC, p.source_line DESC
    ) = 1
)

SELECT
    provider,
    model,
    service_tier,
    min_input_tokens,
    effective_from,
    cache_hit_input_per_million,
    cache_miss_input_per_million,
    cache_write_5m_per_million,
    cache_write_1h_per_million,
    output_per_million,
    currency
FROM catalogue
QUALIFY row_number() OVER (
    PARTITION BY provider, model, service_tier, min_input_tokens ORDER BY effective_from DESC
) = 1
