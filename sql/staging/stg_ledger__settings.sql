-- grain: one row (the settings of the build)
-- materialized: view
-- description: The settings the SQL models use, typed (from meta.settings, written by `costledger build`).
-- column reference_api_provider VARCHAR
-- column reference_api_model VARCHAR
-- column slo_ms_api BIGINT
-- column slo_ms_self_hosted BIGINT
-- column reconciliation_tolerance_pct DECIMAL(18,6)
-- column reconciliation_tolerance_usd DECIMAL(38,12)
-- column review_rate_per_hour_usd DECIMAL(38,12)
-- column focus_cluster_tag_key VARCHAR
-- column min_tasks_for_factor BIGINT
-- column bootstrap_random_state BIGINT
-- column gpus_per_node BIGINT
-- column robustness_operating_cost_share DECIMAL(18,6)
-- column clusters_idle_warning DECIMAL(18,6)
-- column capacity_latency_headroom DECIMAL(18,6)
-- column business_model_as_a_service BOOLEAN
-- column api_tax_recoverable BOOLEAN
-- column business_control_requirements VARCHAR
-- column planning_node_month_usd DECIMAL(38,12)
-- column planning_spare_nodes BIGINT
-- column planning_bursty_ratio DECIMAL(18,6)
-- column gate_min_cases BIGINT
-- column gate_min_hosted_days BIGINT
-- column gate_acceptance_margin DECIMAL(18,6)
-- column gate_mix_tolerance DECIMAL(18,6)
-- column gate_max_recovery_minutes DECIMAL(18,4)
-- column gate_required_drills VARCHAR
-- column energy_usd_per_kwh DECIMAL(18,6)
-- column energy_pue DECIMAL(18,6)
-- column chargeback_share_idle BOOLEAN
-- column anomalies_threshold DECIMAL(18,6)
-- column anomalies_min_usd DECIMAL(38,12)
SELECT
    max(value) FILTER (WHERE key = 'reference_api_provider') AS reference_api_provider,
    max(value) FILTER (WHERE key = 'reference_api_model') AS reference_api_model,
    CAST(nullif(max(value) FILTER (WHERE key = 'slo_ms_api'), '') AS BIGINT) AS slo_ms_api,
    CAST(nullif(max(value) FILTER (WHERE key = 'slo_ms_self_hosted'), '') AS BIGINT) AS slo_ms_self_hosted,
    CAST(max(value) FILTER (WHERE key = 'reconciliation_tolerance_pct') AS DECIMAL(18, 6)) AS reconciliation_tolerance_pct,
    CAST(max(value) FILTER (WHERE key = 'reconciliation_tolerance_usd') AS DECIMAL(38, 12)) AS reconciliation_tolerance_usd,
    CAST(max(value) FILTER (WHERE key = 'review_rate_per_hour_usd') AS DECIMAL(38, 12)) AS review_rate_per_hour_usd,
    coalesce(max(value) FILTER (WHERE key = 'focus_cluster_tag_key'), 'cluster') AS focus_cluster_tag_key,
    CAST(max(value) FILTER (WHERE key = 'min_tasks_for_factor') AS BIGINT) AS min_tasks_for_factor,
    CAST(max(value) FILTER (WHERE key = 'bootstrap_random_state') AS BIGINT) AS bootstrap_random_state,
    CAST(max(value) FILTER (WHERE key = 'gpus_per_node') AS BIGINT) AS gpus_per_node,
    CAST(coalesce(max(value) FILTER (WHERE key = 'robustness_operating_cost_share'), '0.20') AS DECIMAL(18, 6))
        AS robustness_operating_cost_share,
    CAST(coalesce(max(value) FILTER (WHERE key = 'clusters_idle_warning'), '0.05') AS DECIMAL(18, 6))
        AS clusters_idle_warning,
    CAST(coalesce(max(value) FILTER (WHERE key = 'capacity_latency_headroom'), '0.90') AS DECIMAL(18, 6))
        AS capacity_latency_headroom,
    coalesce(lower(max(value) FILTER (WHERE key = 'business_model_as_a_service')) = 'true', FALSE)
        AS business_model_as_a_service,
    coalesce(lower(max(value) FILTER (WHERE key = 'api_tax_recoverable')) <> 'false', TRUE) AS api_tax_recoverable,
    coalesce(max(value) FILTER (WHERE key = 'business_control_requirements'), '') AS business_control_requirements,
    CAST(nullif(max(value) FILTER (WHERE key = 'planning_node_month_usd'), '') AS DECIMAL(38, 12)) AS planning_node_month_usd,
    CAST(coalesce(max(value) FILTER (WHERE key = 'planning_spare_nodes'), '0') AS BIGINT) AS planning_spare_nodes,
    CAST(coalesce(max(value) FILTER (WHERE key = 'planning_bursty_ratio'), '2.0') AS DECIMAL(18, 6)) AS planning_bursty_ratio,
    CAST(max(value) FILTER (WHERE key = 'gate_min_cases') AS BIGINT) AS gate_min_cases,
    CAST(max(value) FILTER (WHERE key = 'gate_min_hosted_days') AS BIGINT) AS gate_min_hosted_days,
    CAST(coalesce(max(value) FILTER (WHERE key = 'gate_acceptance_margin'), '0.10') AS DECIMAL(18, 6))
        AS gate_acceptance_margin,
    CAST(coalesce(max(value) FILTER (WHERE key = 'gate_mix_tolerance'), '0.15') AS DECIMAL(18, 6)) AS gate_mix_tolerance,
    CAST(nullif(max(value) FILTER (WHERE key = 'gate_max_recovery_minutes'), '') AS DECIMAL(18, 4))
        AS gate_max_recovery_minutes,
    max(value) FILTER (WHERE key = 'gate_required_drills') AS gate_required_drills,
    CAST(nullif(max(value) FILTER (WHERE key = 'energy_usd_per_kwh'), '') AS DECIMAL(18, 6)) AS energy_usd_per_kwh,
    CAST(coalesce(max(value) FILTER (WHERE key = 'energy_pue'), '1') AS DECIMAL(18, 6)) AS energy_pue,
    coalesce(lower(max(value) FILTER (WHERE key = 'chargeback_share_idle')) = 'true', FALSE) AS chargeback_share_idle,
    CAST(coalesce(max(value) FILTER (WHERE key = 'anomalies_threshold'), '3.5') AS DECIMAL(18, 6)) AS anomalies_threshold,
    CAST(coalesce(max(value) FILTER (WHERE key = 'anomalies_min_usd'), '25') AS DECIMAL(38, 12)) AS anomalies_min_usd
FROM meta.settings
