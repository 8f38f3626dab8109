-- audit: every verdict the break-even and its robustness give, and every verdict it states, is declared in staging.stg_ledger__verdicts (returns
-- the undeclared ones; zero rows = pass)
SELECT DISTINCT g.verdict
FROM (
    SELECT b.verdict FROM marts.monthly_break_even AS b
    UNION ALL
    SELECT b.verdict_stated FROM marts.monthly_break_even AS b
    UNION ALL
    SELECT b.verdict_at_break_even_range_low FROM marts.monthly_break_even AS b
    UNION ALL
    SELECT b.verdict_at_break_even_range_high FROM marts.monthly_break_even AS b
    UNION ALL
    SELECT s.verdict_at_low_value FROM marts.monthly_verdict_sensitivity AS s
    UNION ALL
    SELECT s.verdict_at_high_value FROM marts.monthly_verdict_sensitivity AS s
) AS g (verdict)
WHERE g.verdict IS NOT NULL AND g.verdict NOT IN (SELECT v.verdict FROM staging.stg_ledger__verdicts AS v)
