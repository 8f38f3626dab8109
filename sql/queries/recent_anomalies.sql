-- costledger status: the anomalies of the last 7 days of data (marts.daily_anomalies), and invoice lines priced at a
-- price the catalogue lacks in the latest month with an invoice
WITH last_day AS (
    SELECT max(day) AS day FROM intermediate.int_requests_daily
),
last_invoice AS (
    SELECT max(month) AS month FROM marts.daily_anomalies WHERE kind = 'price_not_in_catalog'
)
SELECT a.day, a.kind, a.provider, a.team, a.spend_effect_usd, a.cause
FROM marts.daily_anomalies AS a
CROSS JOIN last_day AS l
CROSS JOIN last_invoice AS i
WHERE a.day > l.day - INTERVAL 7 DAY OR (a.kind = 'price_not_in_catalog' AND a.month = i.month)
ORDER BY a.day DESC, a.kind ASC, a.provider ASC, a.team ASC
