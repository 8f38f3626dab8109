-- The macros of macros.sql whose DuckDB body has no form Spark SQL computes alike: for each, the body the models use
-- on Spark (`costledger build --engine spark`). Same format as macros.sql, written in DuckDB's dialect and translated
-- with the models. A macro here must return the same value as its DuckDB body for every argument. The list:
--
--   money_div        DuckDB divides exactly in HUGEINT (`//`), which Spark lacks; Spark divides DECIMAL(38, 0)
--                    whole numbers with DIV, a LONG: a quotient of 9e18 or more stops the build with an error
--                    (DuckDB's reaches 1e26; no money of the ledger comes near), and a divisor of 1e20 or more
--                    overflows the remainder's step (the ledger divides by hours, tasks and dollars, far below).
--                    Same quotient, rounded half away from zero to 1e-12. Its sign comes from a CASE: Spark's sign() is
--                    a DOUBLE.
--   money_div_units  (money_div's parts)
--   money_units      Spark's trunc() truncates dates, not numbers: the whole part is x - x % 1 (% keeps x's sign on
--                    both engines).
--   hash_key         DuckDB reads hex digits by a cast from '0x...'; Spark with conv().
--   money_mul, money_share, money_count_share
--                    DuckDB takes their arguments once through a lambda over a one-element list (macros.sql says
--                    why); Spark is given the arguments in place: each is its formula.

CREATE OR REPLACE TEMP MACRO money_units(x) AS  -- noqa: CP05
CAST(CAST(x AS DECIMAL(38, 12)) - CAST(x AS DECIMAL(38, 12)) % 1 AS DECIMAL(38, 0)) * CAST(1000000000000 AS DECIMAL(38, 0))
+ CAST((CAST(x AS DECIMAL(38, 12)) % 1) * 1000000000000 AS DECIMAL(38, 0))
;

CREATE OR REPLACE TEMP MACRO money_div_units(n, d) AS  -- noqa: CP05
CAST(n // d AS DECIMAL(38, 0)) * CAST(1000000000000 AS DECIMAL(38, 0))
+ CAST(((n % d) * 1000000) // d AS DECIMAL(38, 0)) * 1000000
+ CAST((2 * (((n % d) * 1000000) % d) * 1000000 + d) // (2 * d) AS DECIMAL(38, 0))
;

CREATE OR REPLACE TEMP MACRO money_div(num, den) AS  -- noqa: CP05
CASE WHEN den IS NULL OR den = 0 OR num IS NULL THEN NULL
WHEN num = 0 THEN CAST(0 AS DECIMAL(38, 12))
-- DIV's LONG would wrap around past 9.2e18 without a word: a quotient that large stops the build instead
WHEN CAST(abs(num) AS DOUBLE) >= CAST(abs(den) AS DOUBLE) * 9.0e18
    THEN CAST(raise_error('money_div on Spark: a quotient of 9e18 or more (DuckDB divides up to 1e26)') AS DECIMAL(38, 12))
ELSE
    CAST(
        CAST(
            CASE WHEN (num < 0) = (den < 0) THEN 1 ELSE -1 END
            * money_div_units(abs(money_units(num)), abs(money_units(den)))
            AS DECIMAL(38, 0)
        ) * CAST(0.000000000001 AS DECIMAL(13, 12))
        AS DECIMAL(38, 12)
    )
END
;

CREATE OR REPLACE TEMP MACRO hash_key(x) AS  -- noqa: CP05
CAST(conv(left(md5(CAST(x AS VARCHAR)), 15), 16, 10) AS BIGINT)
;

CREATE OR REPLACE TEMP MACRO money_mul(a, b) AS  -- noqa: CP05
money_mul_formula(a, b)
;

CREATE OR REPLACE TEMP MACRO money_share(amount, part, whole) AS  -- noqa: CP05
money_share_formula(amount, part, whole)
;

CREATE OR REPLACE TEMP MACRO money_count_share(amount, count, whole) AS  -- noqa: CP05
money_count_share_formula(amount, count, whole)
;
