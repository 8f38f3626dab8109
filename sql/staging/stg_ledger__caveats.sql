-- grain: one row per caveat the break-even's verdict can carry
-- materialized: view
-- unique_key: caveat
-- description: The caveats of the month's verdict, declared once: what the verdict rests on that the data could not confirm (marts.monthly_break_even.verdict_caveats, in this order), when the break-even raises each and what it means in the report's words. An audit holds every caveat the break-even gives to one declared here.
-- column caveat VARCHAR: The caveat's name, as verdict_caveats lists it.
-- column raised_when VARCHAR: When the break-even raises it.
-- column meaning VARCHAR: What it means for the verdict, in the report's words.
-- column position INTEGER: Its place in the order verdict_caveats lists and the report shows them.
SELECT
    c.caveat,
    c.raised_when,
    c.meaning,
    c.position
FROM (
    VALUES
    (
        'invoice_unreconciled',
        'the reference provider''s invoice and metered cost do not reconcile that month',
        'The reference provider''s invoice does not match its request logs this month (see ''How far to trust '
        || 'these numbers'').',
        1
    ),
    (
        'invoice_volume_unknown',
        'the invoice uplift (api_invoice_uplift) differs from 1 and neither the invoice''s quantities nor a '
        || 'usage export say whether the difference is price or unlogged volume: the uplift is then one of the '
        || 'robustness assumptions, at 1 and at that ratio',
        'The reference provider''s invoice states no quantities and there is no usage export for the month, so'
        || ' what it bills beyond the logged requests could be a higher price or requests that were never '
        || 'logged; the API price here takes it as price (while the invoice does not reconcile, the verdict is '
        || 'also checked with it taken as volume).',
        2
    ),
    (
        'api_waste_assumed',
        'too few accepted API tasks to measure the API''s waste factor (api_waste_factor), taken as 1',
        'Too few tasks went to the API to measure what it spends on failures and retries; it is assumed to '
        || 'spend nothing on them, which makes the API look cheaper than it may be.',
        3
    ),
    (
        'capacity_mix_warning',
        'a sweep''s token mix is far from production''s',
        'The load test that measured the cluster''s capacity ran a different mix of input and output tokens '
        || 'from production''s, so the capacity may not hold for this traffic.',
        4
    ),
    (
        'sweep_nodes_assumed',
        'a sweep without nodes on a cluster that ran more than one',
        'A load test does not say how many nodes it ran on; it is taken as one node.',
        5
    ),
    (
        'capacity_contradiction',
        'production contradicts a cluster''s capacity figure: it served more than the capacity, or more per '
        || 'node within the SLO than its sweep says',
        'Production contradicts the cluster''s measured capacity (it served more than the capacity allows, or '
        || 'more per node within the latency target than its load test says), so the capacity figure is wrong '
        || 'for this month: load-test the cluster again before trusting the utilisation figures.',
        6
    ),
    (
        'sweep_mix_unknown',
        'a sweep in force does not say its output tokens, so its capacity cannot be checked against '
        || 'production''s mix',
        'The load test does not say how many of its tokens were output, so its capacity cannot be checked '
        || 'against production''s mix of input and output tokens.',
        7
    ),
    (
        'sweep_optimistic',
        'a cluster''s accepted attempts ran near the latency SLO while its busiest hour used under half the '
        || 'sweep''s capacity: the load test overstates what it serves',
        'Production ran close to its latency target while using well under half of what the load test says '
        || 'the cluster can serve, so the load test overstates the capacity: load-test the cluster again at '
        || 'production''s mix before trusting the utilisation figures.',
        8
    ),
    (
        'cluster_logs_incomplete',
        'a cluster''s request log holds fewer tokens than its serving engines counted: '
        || 'marts.monthly_engine_reconciliation is logs_missing',
        'The cluster''s request log holds fewer tokens than its serving engines counted, so requests went '
        || 'unlogged: the cluster did more work than these figures show, and its cost per accepted task is '
        || 'overstated.',
        9
    ),
    (
        'capacity_measured_after',
        'no load test was in force in the month: a cluster''s capacity is its first sweep, measured within 60 '
        || 'days after the month',
        'No load test was in force for this month: the cluster''s capacity is taken from the first load test '
        || 'after it, measured within 60 days of the month''s end.',
        10
    ),
    (
        'capacity_lower_bound',
        'a cluster''s capacity, for some or all of the month, is the best 5-minute window of its request log: '
        || 'a lower bound, so its utilisation is at most and its idle cost at least the figures shown',
        'No load test covers the cluster for this month, so its capacity is the most it was seen to serve '
        || 'within the latency target in the request log: a lower bound. Its utilisation is at most, and its '
        || 'idle cost at least, the figures shown; load-test the cluster to settle them.',
        11
    ),
    (
        'api_unpriced',
        'the API price is measured on the API route (api_cost_source measured) and some of its requests have no '
        || 'price while no invoice of their provider covers the month: the run rate leaves their cost out',
        'The API''s price comes from what its own requests cost, and some of them have no price in the catalogue '
        || '(and no invoice covers them): their cost is left out, which makes the API look cheaper than it is. '
        || 'Load their prices (prices/) or the provider''s invoice.',
        12
    ),
    (
        'cluster_cost_missing',
        'the cluster served requests in the month but no cost of it is loaded: no cluster charge, hardware, FOCUS '
        || 'or operating cost row falls in the month, so the fixed cost F is 0',
        'The cluster served requests this month but none of its costs is loaded (no cluster charges, hardware, '
        || 'FOCUS or operating costs), so self-hosting looks free: load the cluster''s bills before trusting '
        || 'the verdict.',
        13
    ),
    (
        'invoice_untyped',
        'the reference provider''s invoices of the month have no usage line (only lines of type other: fees, or one '
        || 'total entered by hand) while requests were logged: the invoice uplift U is taken as 1',
        'The reference provider''s invoice states no usage this month (only a total, or fees), so it cannot tell '
        || 'what the tokens cost from what else it charges: the API''s price here is its list price (no uplift). '
        || 'Load the invoice''s lines by token type, or the provider''s usage export, to measure it.',
        14
    )
) AS c (caveat, raised_when, meaning, position)
