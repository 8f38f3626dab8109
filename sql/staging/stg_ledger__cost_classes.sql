-- grain: one row per cost class of the cluster's fixed cost
-- materialized: view
-- unique_key: cost_class
-- description: The classes of the cluster's fixed cost, declared once: each cost line of the cluster (marts.monthly_self_hosted_cost) is of one of them, the break-even's shutdown and infrastructure figures add them up by class, and the chargeback splits each cluster's cost by them. An audit holds every cost line to a class declared here.
-- column cost_class VARCHAR: The class's name.
-- column meaning VARCHAR: What it holds and when it stops.
-- column position INTEGER: Its place in the order the classes are split and shown (the chargeback's last class takes what rounding leaves).
SELECT
    c.cost_class,
    c.meaning,
    c.position
FROM (
    VALUES
    (
        'committed',
        'hardware amortisation, reserved charges, FOCUS PricingCategory committed: paid whether or not the cluster '
        || 'serves anything',
        1
    ),
    ('operating', 'the operating costs: stop when the service is shut down, though not at once', 2),
    ('avoidable', 'on-demand and other charges: capacity that can be stopped within the month', 3)
) AS c (cost_class, meaning, position)
