-- Months whose cluster served requests while none of its costs is loaded (the verdict's caveat cluster_cost_missing):
-- its work looks free, and its teams are charged nothing for it, until the cluster's bills are loaded.
SELECT strftime(month, '%Y-%m') AS month
FROM marts.monthly_break_even
WHERE list_contains(verdict_caveats, 'cluster_cost_missing')
ORDER BY month
