-- grain: one row per month
-- materialized: table
-- unique_key: month
-- description: Does self-hosting pay that month? Break-even accepted tasks = self-hosted monthly cost / API cost per accepted task. The API cost per accepted task is measured on the API route when it accepted tasks that month, else the API-equivalent (self-hosted requests priced at the reference API price / self-hosted accepted tasks).
-- column month: First day of the month (UTC).
-- column self_hosted_cost_usd: The self_hosted route's cost_usd (cluster charges + hardware amortisation + opex + review).
-- column api_cost_per_accepted_task_usd: API cost per accepted task (see api_cost_source); NULL when it cannot be computed.
-- column api_cost_source: 'measured' (API route's cost per accepted task) or 'api_equivalent' (reference-priced self-hosted requests / self-hosted accepted tasks); NULL when neither exists.
-- column break_even_accepted_tasks: self_hosted_cost_usd / api_cost_per_accepted_task_usd: accepted tasks the cluster must deliver to cost no more than the API.
-- column self_hosted_accepted_tasks: Accepted tasks the self-hosted route delivered.
-- column self_hosting_cheaper: self_hosted_accepted_tasks >= break_even_accepted_tasks (NULL when break-even is unknown).
-- column productive_utilisation: Productive hours / provisioned hours over all clusters.
-- column break_even_utilisation: productive_utilisation x break_even_accepted_tasks / self_hosted_accepted_tasks: the productive utilisation at which the cluster would just pay for itself; NULL without self-hosted accepted tasks.
-- column api_equivalent_cost_usd: Self-hosted requests priced at the reference API price.
-- column self_hosted_cost_per_accepted_task_usd: self_hosted_cost_usd / self_hosted_accepted_tasks; NULL without accepted tasks.
-- column api_cost_of_self_hosted_tasks_usd: What the self-hosted accepted tasks would have cost on the API: api_cost_per_accepted_task_usd x self_hosted_accepted_tasks.
-- column self_hosting_saving_usd: api_cost_of_self_hosted_tasks_usd - self_hosted_cost_usd: positive when self-hosting saved money that month, negative when it cost more.
WITH routes AS (
    SELECT
        month,
        max(cost_usd) FILTER (WHERE route = 'self_hosted') AS self_hosted_cost_usd,
        max(accepted_tasks) FILTER (WHERE route = 'self_hosted') AS self_hosted_accepted_tasks,
        max(cost_per_accepted_task_usd) FILTER (WHERE route = 'api') AS api_measured_cpt
    FROM marts.monthly_route_cost
    GROUP BY month
),
equivalent AS (
    SELECT month, sum(api_equivalent_usd) AS api_equivalent_cost_usd
    FROM intermediate.int_requests_monthly
    WHERE route = 'self_hosted'
    GROUP BY month
),
utilisation AS (
    SELECT
        month,
        CASE WHEN sum(provisioned_hours) > 0 THEN CAST(sum(productive_hours) / sum(provisioned_hours) AS DOUBLE) END
            AS productive_utilisation
    FROM marts.monthly_utilisation
    GROUP BY month
),
priced AS (
    SELECT
        r.month,
        r.self_hosted_cost_usd,
        r.self_hosted_accepted_tasks,
        e.api_equivalent_cost_usd,
        u.productive_utilisation,
        coalesce(r.api_measured_cpt, money_div(e.api_equivalent_cost_usd, r.self_hosted_accepted_tasks))
            AS api_cost_per_accepted_task_usd,
        CASE
            WHEN r.api_measured_cpt IS NOT NULL THEN 'measured'
            WHEN money_div(e.api_equivalent_cost_usd, r.self_hosted_accepted_tasks) IS NOT NULL THEN 'api_equivalent'
        END AS api_cost_source
    FROM routes AS r
    LEFT JOIN equivalent AS e USING (month)
    LEFT JOIN utilisation AS u USING (month)
),
broken_even AS (
    SELECT
        *,
        CASE WHEN api_cost_per_accepted_task_usd > 0
            THEN money_div(self_hosted_cost_usd, api_cost_per_accepted_task_usd) END AS break_even_accepted_tasks
    FROM priced
)
SELECT
    month,
    self_hosted_cost_usd,
    api_cost_per_accepted_task_usd,
    api_cost_source,
    break_even_accepted_tasks,
    self_hosted_accepted_tasks,
    self_hosted_accepted_tasks >= break_even_accepted_tasks AS self_hosting_cheaper,
    productive_utilisation,
    CASE WHEN self_hosted_accepted_tasks > 0
        THEN productive_utilisation * CAST(break_even_accepted_tasks AS DOUBLE) / self_hosted_accepted_tasks
    END AS break_even_utilisation,
    api_equivalent_cost_usd,
    money_div(self_hosted_cost_usd, self_hosted_accepted_tasks) AS self_hosted_cost_per_accepted_task_usd,
    CAST(api_cost_per_accepted_task_usd * self_hosted_accepted_tasks AS DECIMAL(38, 12)) AS api_cost_of_self_hosted_tasks_usd,
    CAST(api_cost_per_accepted_task_usd * self_hosted_accepted_tasks - self_hosted_cost_usd AS DECIMAL(38, 12))
        AS self_hosting_saving_usd
FROM broken_even
