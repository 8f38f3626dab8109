-- grain: one row per month x token_utilisation
-- materialized: table
-- unique_key: month, token_utilisation
-- description: The break-even curve: what one accepted task would cost on the cluster if the month's nodes ran at a token utilisation u of 0.05, 0.10, ... 1.00, beside what it costs on the API. At u the nodes deliver tasks(u) = u x the monthly token capacity / the tokens per accepted task (every attempt, as the month ran) and one task costs (F + V x tasks(u)) / tasks(u) = F / tasks(u) + V: the fixed cost spread over more tasks the busier the cluster is. Each row also carries the month's marks: today's utilisation, the break-even utilisation (where the line crosses the API's cost C) and the ceiling a cluster sized for its busiest hour can reach. Months without a monthly token capacity, tokens per accepted task or a comparator C have no rows.
-- column month DATE: First day of the month (UTC).
-- column token_utilisation DECIMAL(4,2): u, the share of the month's token capacity the nodes would use (0.05 to 1.00).
-- column accepted_tasks DECIMAL(38,6): tasks(u) = u x monthly_token_capacity / tokens per accepted task.
-- column self_hosted_cost_per_accepted_task_usd DECIMAL(38,12): F / tasks(u) + V: what one accepted task costs on the cluster at u.
-- column api_cost_per_accepted_task_usd DECIMAL(38,12): C, what one accepted task costs on the API (marts.monthly_break_even): the line to compare with.
-- column self_hosting_cheaper BOOLEAN: The cluster's cost per task at u is at or below C.
-- column today_token_utilisation DOUBLE: The month's own token utilisation (tokens served / monthly token capacity).
-- column break_even_token_utilisation DOUBLE: The utilisation at which the cluster's cost per task equals C (break_even_share_of_capacity); NULL when the cluster never breaks even.
-- column ceiling_token_utilisation DOUBLE: The highest utilisation a cluster sized for its busiest hour reaches: the tokens served / (each cluster's busiest hour's tokens per second x 3,600 x its provisioned hours), 1 / peak_to_average_tokens for one cluster; NULL without tokens.
WITH marks AS (
    -- each cluster sized for its own busiest hour: what it served over what that size could serve in its hours
    SELECT
        month,
        sum(tokens_served) AS tokens_served,
        sum(peak_hour_tokens_per_second * 3600 * provisioned_hours) AS peak_sized_tokens
    FROM marts.monthly_utilisation
    GROUP BY month
),
steps AS (
    SELECT CAST(step * 0.05 AS DECIMAL(4, 2)) AS token_utilisation
    FROM (SELECT unnest(range(1, 21)) AS step) AS twenty
),
points AS (
    SELECT
        b.month,
        s.token_utilisation,
        CAST(s.token_utilisation * CAST(b.monthly_token_capacity AS DOUBLE) / b.tokens_per_accepted_task
            AS DECIMAL(38, 6)) AS accepted_tasks,
        b.fixed_cost_usd,
        b.self_hosted_variable_cost_per_accepted_task_usd,
        b.api_cost_per_accepted_task_usd,
        b.token_utilisation AS today_token_utilisation,
        b.break_even_share_of_capacity AS break_even_token_utilisation,
        CASE WHEN m.peak_sized_tokens > 0
            THEN CAST(m.tokens_served AS DOUBLE) / CAST(m.peak_sized_tokens AS DOUBLE)
        END AS ceiling_token_utilisation
    FROM marts.monthly_break_even AS b
    CROSS JOIN steps AS s
    LEFT JOIN marks AS m ON b.month = m.month
    WHERE
        b.monthly_token_capacity > 0
        AND b.tokens_per_accepted_task > 0
        AND b.api_cost_per_accepted_task_usd IS NOT NULL
),
costed AS (
    SELECT
        *,
        CAST(money_div(fixed_cost_usd, accepted_tasks) + self_hosted_variable_cost_per_accepted_task_usd
            AS DECIMAL(38, 12)) AS self_hosted_cost_per_accepted_task_usd
    FROM points
    WHERE accepted_tasks > 0
)
SELECT
    month,
    token_utilisation,
    accepted_tasks,
    self_hosted_cost_per_accepted_task_usd,
    api_cost_per_accepted_task_usd,
    self_hosted_cost_per_accepted_task_usd <= api_cost_per_accepted_task_usd AS self_hosting_cheaper,
    today_token_utilisation,
    break_even_token_utilisation,
    ceiling_token_utilisation
FROM costed
