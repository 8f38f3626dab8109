-- grain: one row per FOCUS billing row of the latest export of each billing account x billing period
-- materialized: table
-- unique_key: source_file_hash, source_line
-- description: FOCUS exports are snapshots of a billing period: per billing account and period only the most recently loaded file counts. Each row is allocated to a cluster by the settings' tag key (Tags JSON) or else by the first ResourceId pattern it matches (patterns in cluster_id order); NULL = unallocated (kept and shown, never dropped). ChargeClass 'correction' rows correct an earlier period: they count in the month of their own charge period, as corrections, not new spend.
-- settings: focus_cluster_tag_key
-- column source_file_hash VARCHAR
-- column source_line BIGINT
-- column billing_account_id VARCHAR
-- column provider_name VARCHAR
-- column billing_period_start TIMESTAMP
-- column charge_period_start TIMESTAMP
-- column charge_period_end TIMESTAMP
-- column charge_seconds BIGINT
-- column charge_category VARCHAR
-- column charge_class VARCHAR
-- column charge_frequency VARCHAR
-- column pricing_category VARCHAR
-- column resource_id VARCHAR
-- column service_name VARCHAR
-- column service_category VARCHAR
-- column consumed_quantity DECIMAL(38,12)
-- column consumed_unit VARCHAR
-- column billed_cost_usd DECIMAL(38,12)
-- column effective_cost_usd DECIMAL(38,12)
-- column tags VARCHAR
-- column cluster_id VARCHAR: The cluster the row is allocated to: the value of its tag named by the setting focus.cluster_tag_key, else the first cluster (by id) whose ResourceId pattern it matches; NULL = unallocated.
-- column is_correction BOOLEAN: Whether the row is a correction of an earlier period (ChargeClass 'correction'): counted in the month of its own charge period, as a correction.
WITH settings AS (SELECT * FROM staging.stg_ledger__settings),
ranked AS (
    SELECT
        c.*,
        f.load_seq,
        max(f.load_seq) OVER (PARTITION BY c.billing_account_id, c.billing_period_start) AS latest_load_seq
    FROM staging.stg_ledger__focus_charges AS c
    JOIN meta.loaded_files AS f ON f.file_hash = c.source_file_hash
),
current_rows AS (
    SELECT * EXCLUDE (load_seq, latest_load_seq) FROM ranked WHERE load_seq = latest_load_seq
),
by_pattern AS (
    SELECT r.source_file_hash, r.source_line, min(a.cluster_id) AS cluster_id
    FROM current_rows AS r
    JOIN staging.stg_ledger__focus_allocation AS a ON regexp_matches(r.resource_id, a.resource_pattern)
    GROUP BY r.source_file_hash, r.source_line
)
SELECT
    r.*,
    coalesce(
        CASE WHEN json_valid(r.tags) THEN json_extract_string(r.tags, '$."' || s.focus_cluster_tag_key || '"') END,
        p.cluster_id
    ) AS cluster_id,
    coalesce(r.charge_class = 'correction', FALSE) AS is_correction
FROM current_rows AS r
CROSS JOIN settings AS s
LEFT JOIN by_pattern AS p USING (source_file_hash, source_line)
