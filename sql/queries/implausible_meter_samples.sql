-- The meters' counter samples set aside as implausible (intermediate.int_meter_rises_implausible), each with the
-- landing file and line it came from: what the nightly warns of and costledger status lists.
WITH sources AS (
    SELECT cluster_id, metric, labels, sampled_at, source_file_hash, source_line FROM raw.gpu_metrics
    UNION ALL
    SELECT cluster_id, metric, labels, sampled_at, source_file_hash, source_line FROM raw.engine_metrics
)

SELECT
    coalesce(f.path, s.source_file_hash) AS path,
    s.source_line AS line,
    x.cluster_id,
    x.reason
FROM intermediate.int_meter_rises_implausible AS x
INNER JOIN sources AS s
    ON x.cluster_id = s.cluster_id AND x.metric = s.metric AND x.labels = s.labels AND x.sampled_at = s.sampled_at
LEFT JOIN meta.loaded_files AS f ON s.source_file_hash = f.file_hash
ORDER BY x.cluster_id, x.sampled_at, x.metric
