-- audit: each month's chargeback adds up to the month's spend on both routes: exactly, and to the cent once rounded
-- (returns the violating months; zero rows = pass)
WITH spend AS (
    SELECT month, sum(cost_usd) AS cost_usd FROM marts.monthly_route_cost GROUP BY month
),
charged AS (
    SELECT month, sum(exact_usd) AS exact_usd, sum(amount_usd) AS amount_usd FROM marts.monthly_chargeback GROUP BY month
)
SELECT s.month, s.cost_usd, c.exact_usd, c.amount_usd
FROM spend AS s
LEFT JOIN charged AS c USING (month)
WHERE coalesce(c.exact_usd, 0) <> s.cost_usd OR coalesce(c.amount_usd, 0) <> round(s.cost_usd, 2)
