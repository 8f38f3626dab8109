-- grain: one row per month x clock hour x route x team x workload (with accepted tasks)
-- materialized: table
-- unique_key: month, hour, route, team, workload
-- description: The accepted work of each workload by the clock hour (UTC) its accepted attempt started in, on the route that accepted it: the accepted tasks and their accepted attempts' tokens (input including cache hits and writes, output, reasoning), from int_tasks_resolved (a task's workload: its last attempt's team and workload). What a task moved between routes brings is its accepted attempt's tokens, in its own hour: the failed and retried attempts around it stay with the route that made them. marts.monthly_workload_moves reads the API's rows as the work that would move onto the cluster, and the cluster's rows for its attempts per accepted task.
-- column month DATE: First day of the month (UTC) of the accepted attempt.
-- column hour TIMESTAMP: The clock hour (UTC) the accepted attempt started in.
-- column route VARCHAR: The route that accepted the tasks.
-- column team VARCHAR: The team ('(none)': not logged).
-- column workload VARCHAR: The kind of work ('(none)': not logged).
-- column accepted_tasks BIGINT: Tasks whose accepted attempt started in the hour.
-- column accepted_tokens HUGEINT: Their accepted attempts' tokens.
SELECT
    month,
    date_trunc('hour', accepted_at) AS hour,
    route,
    team,
    workload,
    count(*) AS accepted_tasks,
    CAST(sum(accepted_tokens) AS HUGEINT) AS accepted_tokens
FROM intermediate.int_tasks_resolved
WHERE accepted AND accepted_at IS NOT NULL
GROUP BY month, date_trunc('hour', accepted_at), route, team, workload
