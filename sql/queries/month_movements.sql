-- What moved since the month before: each self-hosted cost category and each API provider's run-rate, this month
-- against the month before, with what moved it. $month: the month (first day). A self-hosted line's cause is its
-- node-hours (on-demand and reserved capacity), else a changed amount; an API provider's is a price that took effect
-- in the month, else an invoice loaded in one month and not the other, else its request volume.
WITH months AS (
    SELECT CAST($month AS DATE) AS this_month, CAST(CAST($month AS DATE) - INTERVAL 1 MONTH AS DATE) AS last_month
),
cost_lines AS (
    SELECT c.category AS item, 'self-hosted' AS kind, c.month, sum(c.amount_usd) AS usd
    FROM marts.monthly_self_hosted_cost AS c, months AS m
    WHERE c.month IN (m.this_month, m.last_month)
    GROUP BY ALL
),
node_hours AS (
    SELECT u.month, sum(u.provisioned_node_hours) AS node_hours
    FROM marts.monthly_utilisation AS u, months AS m
    WHERE u.month IN (m.this_month, m.last_month)
    GROUP BY ALL
),
api_lines AS (
    SELECT
        p.provider AS item,
        'API' AS kind,
        p.month,
        CASE WHEN p.has_invoice THEN p.invoiced_usage_usd ELSE p.metered_usd END AS usd,
        p.requests,
        p.has_invoice
    FROM intermediate.int_api_provider_monthly AS p, months AS m
    WHERE p.month IN (m.this_month, m.last_month)
),
prices_changed AS (
    SELECT pr.provider, min(CAST(pr.effective_from AS DATE)) AS changed_on
    FROM intermediate.int_prices_effective AS pr, months AS m
    WHERE pr.effective_from >= m.this_month AND pr.effective_from < m.this_month + INTERVAL 1 MONTH
    GROUP BY pr.provider
),
both_months AS (
    SELECT
        l.item,
        l.kind,
        coalesce(sum(l.usd) FILTER (WHERE l.month = m.last_month), 0) AS last_usd,
        coalesce(sum(l.usd) FILTER (WHERE l.month = m.this_month), 0) AS this_usd
    FROM (SELECT item, kind, month, usd FROM cost_lines UNION ALL SELECT item, kind, month, usd FROM api_lines) AS l,
        months AS m
    GROUP BY l.item, l.kind
),
api_context AS (
    SELECT
        a.item,
        max(a.requests) FILTER (WHERE a.month = m.last_month) AS last_requests,
        max(a.requests) FILTER (WHERE a.month = m.this_month) AS this_requests,
        bool_or(a.has_invoice) FILTER (WHERE a.month = m.last_month) AS last_invoice,
        bool_or(a.has_invoice) FILTER (WHERE a.month = m.this_month) AS this_invoice
    FROM api_lines AS a, months AS m
    GROUP BY a.item
),
hours AS (
    SELECT
        max(n.node_hours) FILTER (WHERE n.month = m.last_month) AS last_node_hours,
        max(n.node_hours) FILTER (WHERE n.month = m.this_month) AS this_node_hours
    FROM node_hours AS n, months AS m
)
SELECT
    b.item,
    b.kind,
    CAST(b.last_usd AS DECIMAL(38, 12)) AS last_usd,
    CAST(b.this_usd AS DECIMAL(38, 12)) AS this_usd,
    CAST(b.this_usd - b.last_usd AS DECIMAL(38, 12)) AS change_usd,
    CASE
        WHEN b.kind = 'API' AND pc.changed_on IS NOT NULL THEN 'a price change on ' || CAST(pc.changed_on AS VARCHAR)
        WHEN b.kind = 'API' AND coalesce(ac.last_invoice, FALSE) <> coalesce(ac.this_invoice, FALSE)
            THEN CASE WHEN ac.this_invoice THEN 'an invoice this month (metered before)' ELSE 'no invoice yet (metered)' END
        WHEN b.kind = 'API'
            THEN 'volume: ' || format('{:,}', coalesce(ac.last_requests, 0)) || ' requests, then '
                || format('{:,}', coalesce(ac.this_requests, 0))
        WHEN b.item IN ('cluster_on_demand', 'cluster_reserved')
            THEN 'node-hours: ' || format('{:,}', CAST(round(h.last_node_hours) AS BIGINT)) || ', then '
                || format('{:,}', CAST(round(h.this_node_hours) AS BIGINT))
        ELSE 'a changed amount'
    END AS cause
FROM both_months AS b
CROSS JOIN hours AS h
LEFT JOIN api_context AS ac ON b.kind = 'API' AND ac.item = b.item
LEFT JOIN prices_changed AS pc ON b.kind = 'API' AND pc.provider = b.item
WHERE abs(b.this_usd - b.last_usd) >= 0.005  -- a cent or more: amortisation's last-digit rounding is no movement
ORDER BY abs(b.this_usd - b.last_usd) DESC, b.item
LIMIT 3
