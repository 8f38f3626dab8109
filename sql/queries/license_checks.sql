-- Kimi K3 license checks (its modified MIT license), run only on business figures supplied in the settings
-- ([business] in costledger.toml). Parameters: $maas_revenue_12m_usd, $monthly_active_users,
-- $monthly_revenue_usd (NULL when not supplied).
SELECT
    'Model-as-a-Service revenue over $20M in any 12 consecutive months' AS check_name,
    CAST($maas_revenue_12m_usd AS DECIMAL(38, 2)) > 20000000 AS triggered,
    'a separate agreement with Moonshot is required before commercial use' AS consequence
WHERE $maas_revenue_12m_usd IS NOT NULL
UNION ALL
SELECT
    'over 100M monthly active users or over $20M monthly revenue',
    coalesce(CAST($monthly_active_users AS BIGINT) > 100000000, FALSE)
        OR coalesce(CAST($monthly_revenue_usd AS DECIMAL(38, 2)) > 20000000, FALSE),
    'the product must prominently display "Kimi K3"'
WHERE $monthly_active_users IS NOT NULL OR $monthly_revenue_usd IS NOT NULL
