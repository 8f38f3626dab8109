-- grain: one row per GPU metric sample (cluster x metric x series x instant)
-- materialized: view
-- unique_key: cluster_id, metric, labels, sampled_at
-- description: The GPUs' own meters as the DCGM exporter publishes them (raw.gpu_metrics), each sample with what it measures.
-- column cluster_id VARCHAR
-- column metric VARCHAR
-- column labels VARCHAR
-- column sampled_at TIMESTAMP
-- column value DECIMAL(38,6)
-- column measure VARCHAR: engine_active (share of the interval the graphics engine was busy, 0-1, a gauge), gpu_util (percentage of the interval a kernel ran, 0-100, a gauge), energy_mj (energy drawn since the driver loaded, mJ, a counter) or power_w (power drawn, W, a gauge).
SELECT
    cluster_id,
    metric,
    labels,
    sampled_at,
    value,
    CASE metric
        WHEN 'DCGM_FI_PROF_GR_ENGINE_ACTIVE' THEN 'engine_active'
        WHEN 'DCGM_FI_DEV_GPU_UTIL' THEN 'gpu_util'
        WHEN 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION' THEN 'energy_mj'
        ELSE 'power_w'
    END AS measure
FROM raw.gpu_metrics
