-- grain: one row per usage line of the latest export of each provider x month
-- materialized: view
-- unique_key: provider, bucket_start, line_id
-- description: Provider usage exports are snapshots of the provider's month: for each (provider, month) only the lines of the most recently loaded file that has that month count (earlier files stay in raw.usage).
-- column provider VARCHAR
-- column month DATE: Month the bucket starts in (first day, UTC).
-- column bucket_start TIMESTAMP
-- column bucket_end TIMESTAMP
-- column line_id VARCHAR
-- column model VARCHAR
-- column token_type VARCHAR
-- column quantity BIGINT
WITH ranked AS (
    SELECT
        u.*,
        CAST(date_trunc('month', u.bucket_start) AS DATE) AS month,
        f.load_seq,
        max(f.load_seq) OVER (PARTITION BY u.provider, date_trunc('month', u.bucket_start)) AS latest_load_seq
    FROM raw.usage AS u
    INNER JOIN meta.loaded_files AS f ON u.source_file_hash = f.file_hash
)

SELECT
    provider,
    month,
    bucket_start,
    bucket_end,
    line_id,
    model,
    token_type,
    quantity
FROM ranked
WHERE load_seq = latest_load_seq
