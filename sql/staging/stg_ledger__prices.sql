-- grain: one row per provider x model x effective_from
-- materialized: view
-- unique_key: provider, model, effective_from
-- description: The current price catalogue, USD per million tokens: for each (provider, model, effective_from) the latest-loaded row (a later price file restates a row by repeating its key; the earlier row stays in raw.prices).
-- column loaded_seq: Load order of the file the row came from (meta.loaded_files.load_seq).
SELECT
    p.provider,
    p.model,
    p.effective_from,
    p.effective_to,
    p.cache_hit_input_per_million,
    p.cache_miss_input_per_million,
    p.output_per_million,
    f.load_seq AS loaded_seq
FROM raw.prices AS p
JOIN meta.loaded_files AS f ON f.file_hash = p.source_file_hash
QUALIFY row_number() OVER (PARTITION BY p.provider, p.model, p.effective_from ORDER BY f.load_seq DESC, p.source_line DESC) = 1
