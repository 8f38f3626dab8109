-- audit: every caveat of the break-even's verdict is declared in staging.stg_ledger__caveats (returns the undeclared
-- ones; zero rows = pass)
SELECT DISTINCT b.caveat
FROM (SELECT unnest(verdict_caveats) AS caveat FROM marts.monthly_break_even) AS b
WHERE b.caveat NOT IN (SELECT c.caveat FROM staging.stg_ledger__caveats AS c)
