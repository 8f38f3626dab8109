-- The anomalies a nightly alerts on: the rows of marts.daily_anomalies no earlier run recorded in
-- meta.alerted_anomalies, of the last 7 days of data (a ledger's first nightly does not alert on its whole history);
-- an invoice line's price is new whenever its invoice arrives.
WITH last_day AS (
    SELECT max(day) AS day FROM intermediate.int_requests_daily
)
SELECT a.day, a.kind, a.provider, a.team, a.subject, a.spend_effect_usd, a.cause
FROM marts.daily_anomalies AS a
CROSS JOIN last_day AS l
WHERE
    (a.kind = 'price_not_in_catalog' OR a.day > l.day - INTERVAL 7 DAY)
    AND NOT EXISTS (
        SELECT 1
        FROM meta.alerted_anomalies AS s
        WHERE
            s.day = a.day AND s.kind = a.kind AND s.provider = a.provider AND s.team = a.team
            AND s.subject = a.subject
    )
ORDER BY a.day ASC, a.kind ASC, a.provider ASC, a.team ASC, a.subject ASC
