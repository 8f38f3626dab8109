-- grain: one row per invoice line of the latest export of each provider x month
-- materialized: table
-- unique_key: provider, invoice_id, line_id
-- description: Invoice exports are snapshots of a billing period: for each provider and month only the lines of the most recently loaded file covering it count. Earlier exports stay in raw.invoices (history is never edited) but are superseded.
WITH ranked AS (
    SELECT
        i.*,
        f.load_seq,
        max(f.load_seq) OVER (PARTITION BY i.provider, i.month) AS latest_load_seq
    FROM staging.stg_ledger__invoices AS i
    JOIN meta.loaded_files AS f ON f.file_hash = i.source_file_hash
)
SELECT * EXCLUDE (load_seq, latest_load_seq)
FROM ranked
WHERE load_seq = latest_load_seq
