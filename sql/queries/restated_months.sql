-- Months whose marts changed again after the run that first built them (late or corrected data), with the
-- number of restatements and the latest one. From the run log; nothing is recomputed.
WITH changes AS (
    SELECT unnest(string_split(months_changed, ',')) AS month, finished_at
    FROM meta.runs
    WHERE months_changed IS NOT NULL AND months_changed <> '' AND outcome IS NOT NULL
)
SELECT month, count(*) - 1 AS restatements, max(finished_at) AS last_changed_at
FROM changes
GROUP BY month
HAVING count(*) > 1
ORDER BY month
