-- Kimi K3 license checks (its modified MIT license), run only on business figures supplied in the settings
-- ([business] in costledger.toml). Parameters: $model_as_a_service (TRUE when the model is offered to others as a
-- service), $maas_revenue_12m_usd, $monthly_active_users, $monthly_revenue_usd (NULL when not supplied).
-- The revenue clause applies to Model-as-a-Service only: with $model_as_a_service FALSE (internal use, features
-- embedded in the team's own product) it is listed as not applying; the attribution clause always applies.
SELECT
    'Model-as-a-Service revenue over $20M in any 12 consecutive months' AS check_name,
    CAST($model_as_a_service AS BOOLEAN) AS applies,
    CAST($model_as_a_service AS BOOLEAN) AND CAST($maas_revenue_12m_usd AS DECIMAL(38, 2)) > 20000000 AS triggered,
    'a separate agreement with Moonshot is required before commercial use' AS consequence
WHERE $maas_revenue_12m_usd IS NOT NULL OR CAST($model_as_a_service AS BOOLEAN)
UNION ALL
SELECT
    'over 100M monthly active users or over $20M monthly revenue',
    TRUE,
    coalesce(CAST($monthly_active_users AS BIGINT) > 100000000, FALSE)
        OR coalesce(CAST($monthly_revenue_usd AS DECIMAL(38, 2)) > 20000000, FALSE),
    'the product must prominently display "Kimi K3"'
WHERE $monthly_active_users IS NOT NULL OR $monthly_revenue_usd IS NOT NULL
