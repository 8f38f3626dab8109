-- audit: every cost line of the cluster is of a cost class declared in staging.stg_ledger__cost_classes (returns the
-- undeclared ones; zero rows = pass)
SELECT DISTINCT s.cost_class
FROM marts.monthly_self_hosted_cost AS s
WHERE s.cost_class NOT IN (SELECT c.cost_class FROM staging.stg_ledger__cost_classes AS c)
