-- grain: one row per interval kind x cluster x merged interval
-- materialized: table
-- published: no
-- unique_key: interval_kind, cluster_id, interval_start
-- description: Time intervals per cluster with overlaps merged (gaps and islands), so overlapping time counts once. 'provisioned': cluster charges (and FOCUS usage rows allocated to the cluster that buy compute: a storage volume tagged with the cluster is cost, not provisioned time) and owned hardware in service. (Busy time, from request intervals, is merged per day in int_cluster_busy_monthly.)
-- column interval_kind VARCHAR: What the intervals are: 'provisioned' (charges that buy compute and owned hardware in service).
-- column cluster_id VARCHAR: The cluster.
-- column interval_start TIMESTAMP: The merged interval's start: the earliest start among the overlapping intervals.
-- column interval_end TIMESTAMP: The merged interval's end (exclusive): the latest end among them.
WITH intervals AS (
    SELECT 'provisioned' AS interval_kind, cluster_id, charge_start AS s, charge_end AS e
    FROM intermediate.int_cluster_charge_lines
    WHERE category IN ('cluster_on_demand', 'cluster_reserved', 'cluster_other', 'focus_usage') AND buys_compute
    UNION ALL
    SELECT 'provisioned', cluster_id, CAST(in_service_date AS TIMESTAMP), coalesce(CAST(retired_date AS TIMESTAMP), TIMESTAMP '9999-12-31')
    FROM staging.stg_ledger__hardware
),
ordered AS (
    SELECT
        *,
        max(e) OVER (PARTITION BY interval_kind, cluster_id ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
    FROM intervals
),
islands AS (
    SELECT
        *,
        sum(CASE WHEN prev_end IS NULL OR s > prev_end THEN 1 ELSE 0 END)
            OVER (PARTITION BY interval_kind, cluster_id ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
    FROM ordered
)
SELECT interval_kind, cluster_id, min(s) AS interval_start, max(e) AS interval_end
FROM islands
GROUP BY interval_kind, cluster_id, island
