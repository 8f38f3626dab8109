-- API requests priced at nothing: no price row for their provider, model and time. They are left out of the
-- metered cost (never priced at 0), per month and provider.
SELECT
    month,
    provider,
    unpriced_requests
FROM marts.monthly_reconciliation
WHERE unpriced_requests > 0
ORDER BY month, provider
