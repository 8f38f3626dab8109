-- audit: a route-month never has more accepted tasks than tasks, nor a cluster more accepted in-flight hours than busy hours
-- (returns the violating rows; zero rows = pass)
SELECT 'monthly_route_cost' AS mart, CAST(month AS VARCHAR) AS month, route AS what
FROM marts.monthly_route_cost
WHERE accepted_tasks > tasks
UNION ALL
SELECT 'monthly_utilisation', CAST(month AS VARCHAR), cluster_id
FROM marts.monthly_utilisation
WHERE in_flight_accepted_hours > busy_hours
