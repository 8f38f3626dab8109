-- Provider and model names that differ only in letter case ('Moonshot' and 'moonshot'): each spelling is its own
-- provider or model, priced by its own price rows, so one of them is probably a typo.
WITH providers AS (
    SELECT DISTINCT provider AS name FROM marts.monthly_reconciliation
    UNION
    SELECT DISTINCT provider FROM raw.prices
),

models AS (
    SELECT DISTINCT model AS name FROM raw.prices
)

SELECT
    'provider' AS what,
    list(name ORDER BY name) AS spellings
FROM providers
WHERE name IS NOT NULL
GROUP BY lower(name)
HAVING count(*) > 1
UNION ALL
SELECT
    'model' AS what,
    list(name ORDER BY name) AS spellings
FROM models
WHERE name IS NOT NULL
GROUP BY lower(name)
HAVING count(*) > 1
ORDER BY what, spellings
