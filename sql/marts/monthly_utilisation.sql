-- grain: one row per month x cluster
-- materialized: table
-- unique_key: month, cluster_id
-- description: How much of each cluster's provisioned time went to accepted work. Busy hours are the union of request intervals (overlaps count once); productive hours are busy hours x the share of request time that belongs to attempts of accepted tasks.
-- column month: First day of the month (UTC).
-- column cluster_id: The self-hosted cluster.
-- column provisioned_hours: Hours in the month the cluster was billed (cluster charges) or in service (owned hardware), overlaps counted once.
-- column busy_hours: Hours in the month with at least one request running on the cluster.
-- column productive_hours: busy_hours x (request time of attempts of accepted tasks / all request time).
-- column productive_utilisation: productive_hours / provisioned_hours; NULL when nothing was provisioned.
-- column peak_to_average: Requests in the busiest hour / mean requests per provisioned hour; NULL without requests or provisioned hours.
-- column requests: Self-hosted requests started on the cluster in the month.
-- column peak_hour_requests: Requests started in the busiest clock hour of the month.
WITH h AS (
    SELECT
        *,
        CAST(provisioned_ms / 3600000.0 AS DECIMAL(18, 6)) AS provisioned_hours,
        CAST(busy_ms / 3600000.0 AS DECIMAL(18, 6)) AS busy_hours,
        CAST(CASE WHEN request_ms > 0 THEN busy_ms * (accepted_task_request_ms / request_ms) ELSE 0 END / 3600000.0 AS DECIMAL(18, 6))
            AS productive_hours
    FROM intermediate.int_cluster_hours_monthly
)
SELECT
    month,
    cluster_id,
    provisioned_hours,
    busy_hours,
    productive_hours,
    CASE WHEN provisioned_ms > 0
        THEN CAST(busy_ms * (CASE WHEN request_ms > 0 THEN accepted_task_request_ms / request_ms ELSE 0 END) / provisioned_ms AS DOUBLE)
    END AS productive_utilisation,
    CASE WHEN requests > 0 AND provisioned_ms > 0
        THEN peak_hour_requests / (requests / (provisioned_ms / 3600000.0))
    END AS peak_to_average,
    requests,
    peak_hour_requests
FROM h
