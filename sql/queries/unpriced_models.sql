-- API requests priced at nothing, per month, provider and model: no price row for their provider, model and time.
-- They are left out of the metered cost (never priced at 0). Reads the request-level prices of the work file.
SELECT
    r.month,
    r.provider,
    r.model,
    count(*) AS unpriced_requests
FROM staging.stg_ledger__requests AS r
SEMI JOIN intermediate.int_requests_priced AS p
    ON
        r.provider = p.provider
        AND r.request_id = p.request_id
        AND p.route = 'api'
        AND NOT p.is_priced
GROUP BY ALL
ORDER BY ALL
