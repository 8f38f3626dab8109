-- grain: one row per (cluster, ResourceId pattern) allocation rule
-- materialized: view
-- unique_key: cluster_id
-- description: The settings' [focus.resource_patterns]: FOCUS rows whose ResourceId matches the pattern belong to the cluster.
-- column cluster_id VARCHAR: The cluster the FOCUS rows matching the pattern belong to.
-- column resource_pattern VARCHAR: A regular expression a FOCUS ResourceId matches (anywhere in it) to belong to the cluster, from the settings' [focus.resource_patterns].
SELECT
    substr(key, length('focus_resource_pattern.') + 1) AS cluster_id,
    value AS resource_pattern
FROM meta.settings
WHERE key LIKE 'focus_resource_pattern.%'
