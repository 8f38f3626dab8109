-- grain: one row per eval set
-- materialized: table
-- unique_key: eval_set
-- description: Is the cluster ready? The deployment gate's verdict per evaluation set from marts.gate_criteria: 'failed' when a measured criterion fell short (naming it), else 'incomplete' when a measurement is missing (naming it), else 'passed'.
-- column eval_set VARCHAR: The evaluation set.
-- column verdict VARCHAR: 'passed', 'failed' or 'incomplete'.
-- column failed_criteria VARCHAR[]: The criteria that failed (alphabetical).
-- column missing_criteria VARCHAR[]: The criteria not yet measured (alphabetical).
-- column criteria_passed BIGINT: Criteria met.
-- column criteria BIGINT: Criteria judged (those skipped left out).
-- column skipped_criteria VARCHAR[]: The criteria that did not apply to the set (alphabetical), each said why in reasons.
-- column reasons VARCHAR[]: What failed and what is missing, in words.
SELECT
    eval_set,
    CASE
        WHEN count(*) FILTER (WHERE status = 'failed') > 0 THEN 'failed'
        WHEN count(*) FILTER (WHERE status = 'missing') > 0 THEN 'incomplete'
        ELSE 'passed'
    END AS verdict,
    coalesce(list(criterion ORDER BY criterion) FILTER (WHERE status = 'failed'), []) AS failed_criteria,
    coalesce(list(criterion ORDER BY criterion) FILTER (WHERE status = 'missing'), []) AS missing_criteria,
    count(*) FILTER (WHERE passed) AS criteria_passed,
    count(*) FILTER (WHERE status <> 'skipped') AS criteria,
    coalesce(list(criterion ORDER BY criterion) FILTER (WHERE status = 'skipped'), []) AS skipped_criteria,
    coalesce(list(detail ORDER BY status, criterion) FILTER (WHERE status IN ('failed', 'missing') AND detail IS NOT NULL), [])
        AS reasons
FROM marts.gate_criteria
GROUP BY eval_set
