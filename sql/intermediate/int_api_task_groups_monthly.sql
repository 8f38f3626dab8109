-- grain: one row per month x provider x task group (API route)
-- materialized: table
-- incremental: months
-- input requests_of_months: intermediate.int_requests_priced (task_id, request_id, route, provider, month, metered_cost_usd)
-- input tasks_of_months: intermediate.int_tasks_resolved (task_id, route, month, accepted, accepted_request_id)
-- unique_key: month, provider, task_group
-- description: The API route's month per provider, split into up to 1,000 groups of tasks (a task's group is a hash of its task_id, so all its attempts fall in one group): the metered cost of the provider's attempts started that month, and the accepted tasks whose accepted attempt went to the provider, with that attempt's metered cost. Their sums over the groups are the provider's month; over providers too, the route's. The API waste factor's interval resamples these groups. Incremental: only months touched by new data are recomputed.
-- column month DATE
-- column provider VARCHAR
-- column task_group INTEGER: The group of tasks, 0-999: a hash of the task_id modulo 1,000, so a task's attempts all fall in one group.
-- column attempts_metered_usd DECIMAL(38,12): Metered cost of every attempt of the group's tasks sent to the provider and started in the month.
-- column accepted_tasks BIGINT: The group's accepted API tasks whose accepted attempt went to the provider.
-- column accepted_metered_usd DECIMAL(38,12): Metered cost of those accepted attempts alone.
WITH api AS (
    SELECT task_id, request_id, provider, month, metered_cost_usd, CAST(hash_key(task_id) % 1000 AS INTEGER) AS task_group
    FROM scoped.requests_of_months
    WHERE route = 'api'
),
attempts AS (
    SELECT month, provider, task_group, sum(metered_cost_usd) AS attempts_metered_usd
    FROM api
    GROUP BY ALL
),
accepted AS (
    -- an accepted task's accepted attempt (it starts in the task's month, so it is among the month's requests)
    SELECT
        r.month,
        r.provider,
        r.task_group,
        count(*) AS accepted_tasks,
        sum(r.metered_cost_usd) AS accepted_metered_usd
    FROM api AS r
    SEMI JOIN scoped.tasks_of_months AS t
        ON
            t.task_id = r.task_id
            AND t.accepted_request_id = r.request_id
            AND t.accepted
            AND t.route = 'api'
    GROUP BY ALL
)
SELECT
    month,
    provider,
    task_group,
    CAST(coalesce(t.attempts_metered_usd, 0) AS DECIMAL(38, 12)) AS attempts_metered_usd,
    CAST(coalesce(a.accepted_tasks, 0) AS BIGINT) AS accepted_tasks,
    CAST(coalesce(a.accepted_metered_usd, 0) AS DECIMAL(38, 12)) AS accepted_metered_usd
FROM attempts AS t
FULL JOIN accepted AS a USING (month, provider, task_group)
