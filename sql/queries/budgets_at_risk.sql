-- The latest month's budgets at risk or over (marts.budget_status): what a nightly names at its end, and status.
-- The month as YYYY-MM, as every command's JSON names a month.
WITH latest AS (
    SELECT max(month) AS month FROM marts.budget_status
)
SELECT
    strftime(b.month, '%Y-%m') AS month,
    b.team, b.route, b.status, b.spent_usd, b.projected_usd, b.budget_usd
FROM marts.budget_status AS b
JOIN latest AS l ON b.month = l.month
WHERE b.status <> 'ok'
ORDER BY b.status DESC, b.team ASC, b.route ASC
