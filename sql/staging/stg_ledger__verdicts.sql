-- grain: one row per verdict the break-even can give a month
-- materialized: view
-- unique_key: verdict
-- description: The break-even's verdicts, declared once: when the break-even gives each (marts.monthly_break_even.verdict, and the verdicts its robustness recomputes under each assumption), and how the report says it. An audit holds every verdict the marts give to one declared here.
-- column verdict VARCHAR: The verdict's name, as the marts give it.
-- column given_when VARCHAR: When the break-even gives it.
-- column headline VARCHAR: The verdict as the report's headline says it.
-- column in_a_sentence VARCHAR: The verdict inside one of the report's sentences.
-- column in_a_table VARCHAR: The verdict in a cell of the report's tables.
-- column position INTEGER: Its place in the order the verdicts are listed.
SELECT
    v.verdict,
    v.given_when,
    v.headline,
    v.in_a_sentence,
    v.in_a_table,
    v.position
FROM (
    VALUES
    (
        'api_cheaper',
        'the month''s accepted self-hosted tasks are below break-even',
        'The API was cheaper',
        'the API cheaper',
        'API cheaper',
        1
    ),
    (
        'self_hosting_cheaper',
        'the month''s accepted self-hosted tasks reach break-even, and there is at least one',
        'Self-hosting was cheaper',
        'self-hosting cheaper',
        'self-hosting cheaper',
        2
    ),
    (
        'never_breaks_even',
        'the API''s cost per accepted task is at or below the cluster''s variable cost per accepted task: no '
        || 'volume pays for the cluster',
        'Self-hosting never breaks even',
        'self-hosting never breaking even',
        'never',
        3
    ),
    (
        'no_api_price',
        'no API cost per accepted task to compare with (no API route and no reference price)',
        'No verdict: no API cost per accepted task to compare with',
        'no API cost per accepted task to compare with',
        'no API price',
        4
    ),
    (
        'no_self_hosted_route',
        'no self-hosted cost and no self-hosted requests in the month',
        'No self-hosted route',
        'no self-hosted route',
        'no self-hosted route',
        5
    ),
    (
        'too_close_to_call',
        'a stated verdict only (marts.monthly_break_even.verdict_stated): one named assumption alone turns the '
        || 'verdict and the saving''s range runs from a cost to a saving',
        'Too close to call',
        'too close to call',
        'too close to call',
        6
    )
) AS v (verdict, given_when, headline, in_a_sentence, in_a_table, position)
