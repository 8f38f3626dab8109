-- audit: each route's chargeback adds up to the route's spend: exactly, and to the cent once rounded (so a month's
-- rows add up to its routes' rounded costs) (returns the violating routes; zero rows = pass)
WITH spend AS (
    SELECT month, route, sum(cost_usd) AS cost_usd FROM marts.monthly_route_cost GROUP BY month, route
),
charged AS (
    SELECT month, route, sum(exact_usd) AS exact_usd, sum(amount_usd) AS amount_usd
    FROM marts.monthly_chargeback
    GROUP BY month, route
)
SELECT s.month, s.route, s.cost_usd, c.exact_usd, c.amount_usd
FROM spend AS s
LEFT JOIN charged AS c USING (month, route)
WHERE coalesce(c.exact_usd, 0) <> s.cost_usd OR coalesce(c.amount_usd, 0) <> round(s.cost_usd, 2)
