-- The clusters the ledger knows by their own rows: those its requests were served on, its charges and hardware pay
-- for, its operating costs and load tests name. A metrics series without a cluster label belongs to the only one
-- when there is exactly one (and no [[metrics_clusters]] entry names another).
SELECT DISTINCT cluster_id
FROM (
    SELECT cluster_id FROM raw.requests WHERE route = 'self_hosted'
    UNION ALL
    SELECT cluster_id FROM raw.cluster_charges
    UNION ALL
    SELECT cluster_id FROM raw.hardware
    UNION ALL
    SELECT cluster_id FROM raw.opex
    UNION ALL
    SELECT cluster_id FROM raw.load_tests
) AS named
WHERE coalesce(cluster_id, '') <> ''
ORDER BY cluster_id
