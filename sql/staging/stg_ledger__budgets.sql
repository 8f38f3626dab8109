-- grain: one row per budget (team x route)
-- materialized: view
-- unique_key: team, route
-- description: The monthly budgets of the settings' [[budgets]] entries (meta.settings rows budget.<route>.<team>).
-- column team VARCHAR: The team whose spend the budget covers; '*' = every team's.
-- column route VARCHAR: 'api', 'self_hosted' or 'both'.
-- column budget_usd DECIMAL(38,12): The budget for a month, USD.
SELECT
    substr(key, length('budget.') + length(split_part(key, '.', 2)) + 2) AS team,
    split_part(key, '.', 2) AS route,
    CAST(value AS DECIMAL(38, 12)) AS budget_usd
FROM meta.settings
WHERE key LIKE 'budget.%'
