-- grain: one row per eval set x case
-- materialized: view
-- unique_key: eval_set, case_id
-- description: Each case of an evaluation set of the deployment gate, with the routes it was run on and accepted on: a case counts as run on a route when one of its tasks ran there (a case none of whose tasks is in the request log, on neither), and as accepted on a route when one of its tasks there was accepted. The gate's coverage, its paired acceptance and its mix read their cases from here.
-- column eval_set VARCHAR: The evaluation set.
-- column case_id VARCHAR: The case.
-- column category VARCHAR: The category the case names ('uncategorised' when none; the first in order when its tasks name several).
-- column on_api BOOLEAN: One of its tasks ran on the hosted API.
-- column on_cluster BOOLEAN: One of its tasks ran on the cluster.
-- column api_accepted BOOLEAN: One of its tasks on the API was accepted.
-- column cluster_accepted BOOLEAN: One of its tasks on the cluster was accepted.
SELECT
    eval_set,
    case_id,
    min(category) AS category,
    -- a case whose tasks are all missing from the request log has no route: run on neither (not unknown)
    coalesce(bool_or(route = 'api'), FALSE) AS on_api,
    coalesce(bool_or(route = 'self_hosted'), FALSE) AS on_cluster,
    coalesce(bool_or(route = 'api' AND accepted), FALSE) AS api_accepted,
    coalesce(bool_or(route = 'self_hosted' AND accepted), FALSE) AS cluster_accepted
FROM intermediate.int_gate_cases
GROUP BY eval_set, case_id
