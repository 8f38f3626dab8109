-- The SQL macros every model and report query may use, defined on each connection before the models run or a
-- report reads (temporary: a connection's own). One statement each, separated by a line holding only ';'. (The noqa
-- marks: sqlfluff reads a macro's parameters as data types.)

-- The arithmetic of money and of every other exact figure (docs/reliability.md lists each kind, its type and its
-- bound). DuckDB's DECIMAL adds the scales of a product's factors: two DECIMAL(38, 12) make a DECIMAL(38, 24), which
-- holds less than 1e14, so $10,000,001 x $10,000,001 stops a build. A product of two figures that may both carry
-- decimals goes through money_mul, a quotient through money_div, an amount's share through money_share: each rounded
-- half away from zero to 1e-12 and in range for every result below 1e26, DECIMAL(38, 12)'s limit.

-- Exact money division, rounded half away from zero to 1e-12. DuckDB's `/` returns DOUBLE; money_div scales both
-- sides to integers of 1e-12 (HUGEINT), divides with `//` and scales back to DECIMAL(38,12). The short form,
-- 2 x N x 1e12 + D over 2 x D, fits HUGEINT (1.7e38) while |num| < 8e13 and |den| < 1e14; past that (a multi-year
-- charge of millions times its seconds, 1e21 at the plausibility bounds) the quotient is built in three exact parts:
-- whole units, then 1e-6 units, then 1e-12 units, each remainder scaled by 1e6 only (at most 2e32, so while |den| <
-- 1e20). A divisor of 1e20 or more (a product of two large figures) is read to 1e-6, as is the dividend: its
-- quotient is below 1e6 and off by less than 1e-20 before it is rounded. Any num and den of DECIMAL(38,12) whose
-- quotient is one too divide without overflow.
CREATE OR REPLACE TEMP MACRO money_units(x) AS  -- noqa: CP05
CAST(trunc(CAST(x AS DECIMAL(38, 12))) AS HUGEINT) * CAST(1000000000000 AS HUGEINT)
+ CAST((CAST(x AS DECIMAL(38, 12)) - trunc(CAST(x AS DECIMAL(38, 12)))) * 1000000000000 AS HUGEINT)
;

CREATE OR REPLACE TEMP MACRO money_div_units(n, d) AS  -- noqa: CP05
(n // d) * CAST(1000000000000 AS HUGEINT)
+ ((n % d) * 1000000 // d) * 1000000
+ (2 * (((n % d) * 1000000) % d) * 1000000 + d) // (2 * d)
;

CREATE OR REPLACE TEMP MACRO money_div_formula(num, den) AS  -- noqa: CP05
CASE WHEN den IS NULL OR den = 0 OR num IS NULL THEN NULL
WHEN num = 0 THEN CAST(0 AS DECIMAL(38, 12))  -- the same value, without the HUGEINT steps (most review costs)
WHEN abs(num) < 80000000000000 AND abs(den) < 100000000000000 THEN
    CAST(
        sign(CAST(num AS DECIMAL(38, 12))) * sign(CAST(den AS DECIMAL(38, 12)))
        * ((2 * abs(CAST(CAST(num AS DECIMAL(38, 12)) * 1000000000000 AS HUGEINT)) * CAST(1000000000000 AS HUGEINT)
            + abs(CAST(CAST(den AS DECIMAL(38, 12)) * 1000000000000 AS HUGEINT)))
           // (2 * abs(CAST(CAST(den AS DECIMAL(38, 12)) * 1000000000000 AS HUGEINT))))
        AS DECIMAL(38, 0)
    ) * CAST(0.000000000001 AS DECIMAL(13, 12))
ELSE
    CAST(
        sign(CAST(num AS DECIMAL(38, 12))) * sign(CAST(den AS DECIMAL(38, 12)))
        * money_div_units(
            abs(money_units(num)) // CASE WHEN abs(den) < 100000000000000000000 THEN 1 ELSE 1000000 END,
            abs(money_units(den)) // CASE WHEN abs(den) < 100000000000000000000 THEN 1 ELSE 1000000 END
        )
        AS DECIMAL(38, 0)
    ) * CAST(0.000000000001 AS DECIMAL(13, 12))
END
;

-- a x b exactly, rounded half away from zero to 1e-12, for any a and b that DECIMAL(38, 12) holds whose product it
-- holds too: each factor split into its whole part and its fraction (x - x % 1 and x % 1, the same on Spark), the
-- four partial products each in range, only the product of the two fractions rounded (the others are exact at
-- scale 12, so the sum is the exact product rounded once)
CREATE OR REPLACE TEMP MACRO money_mul_formula(a, b) AS  -- noqa: CP05
CAST(
    CAST(CAST(a AS DECIMAL(38, 12)) - CAST(a AS DECIMAL(38, 12)) % 1 AS DECIMAL(38, 0))
    * CAST(CAST(b AS DECIMAL(38, 12)) - CAST(b AS DECIMAL(38, 12)) % 1 AS DECIMAL(38, 0))
    + CAST(CAST(a AS DECIMAL(38, 12)) - CAST(a AS DECIMAL(38, 12)) % 1 AS DECIMAL(38, 0)) * (CAST(b AS DECIMAL(38, 12)) % 1)
    + (CAST(a AS DECIMAL(38, 12)) % 1) * CAST(CAST(b AS DECIMAL(38, 12)) - CAST(b AS DECIMAL(38, 12)) % 1 AS DECIMAL(38, 0))
    + CAST((CAST(a AS DECIMAL(38, 12)) % 1) * (CAST(b AS DECIMAL(38, 12)) % 1) AS DECIMAL(38, 12))
    AS DECIMAL(38, 12)
)
;

-- amount x part / whole, rounded to 1e-12: the share of an amount that part of a whole carries (a provider's invoice
-- by a team's metered cost of it, a month's fixed cost by tokens). While both are under 9e6 their product is exact in
-- a DECIMAL(38, 24) (under 8.1e13) and is divided once; past that the share is amount x (part / whole rounded to
-- 1e-12), off by at most amount x 5e-13, its product taken as money_mul takes it (the amount's whole part times the
-- share, exact at scale 12, plus its fraction times the share, rounded once), so any amount and part whose share
-- DECIMAL(38, 12) holds. The caller gives one row what the shares leave, so allocations still add up exactly. (The
-- share is written out here rather than passed to money_mul: on Spark money_mul is its formula, which names its
-- arguments six times each, and the time Spark takes to plan a model grows with every copy.)
CREATE OR REPLACE TEMP MACRO money_share_formula(amount, part, whole) AS  -- noqa: CP05
CASE WHEN whole IS NULL OR whole = 0 OR amount IS NULL OR part IS NULL THEN NULL
WHEN abs(CAST(amount AS DECIMAL(38, 12))) < 9000000 AND abs(CAST(part AS DECIMAL(38, 12))) < 9000000
    THEN money_div(CAST(amount AS DECIMAL(38, 12)) * CAST(part AS DECIMAL(38, 12)), whole)
ELSE CAST(
    CAST(CAST(amount AS DECIMAL(38, 12)) - CAST(amount AS DECIMAL(38, 12)) % 1 AS DECIMAL(38, 0)) * money_div(part, whole)
    + CAST((CAST(amount AS DECIMAL(38, 12)) % 1) * money_div(part, whole) AS DECIMAL(38, 12))
    AS DECIMAL(38, 12)
)
END
;

-- amount x count / whole, rounded to 1e-12, for a count (tokens, seconds, hours: a whole number): the product is
-- exact at the amount's scale (a count has none) and divided once, as long as it stays below 1e25; past that (figures
-- near the plausibility bounds) the share is amount x (count / whole rounded to 1e-12), as money_share takes it.
CREATE OR REPLACE TEMP MACRO money_count_share_formula(amount, count, whole) AS  -- noqa: CP05
CASE WHEN whole IS NULL OR whole = 0 OR amount IS NULL OR count IS NULL THEN NULL
WHEN abs(CAST(amount AS DOUBLE) * CAST(count AS DOUBLE)) < 1e25
    THEN money_div(CAST(amount AS DECIMAL(38, 12)) * CAST(count AS DECIMAL(38, 0)), whole)
ELSE CAST(
    CAST(CAST(amount AS DECIMAL(38, 12)) - CAST(amount AS DECIMAL(38, 12)) % 1 AS DECIMAL(38, 0)) * money_div(count, whole)
    + CAST((CAST(amount AS DECIMAL(38, 12)) % 1) * money_div(count, whole) AS DECIMAL(38, 12))
    AS DECIMAL(38, 12)
)
END
;

-- The four macros the models call, each taking its arguments once. DuckDB copies a macro's argument into every place
-- its body names it, and the formulas above name each argument up to a dozen times: a share of a product, written
-- out, would be hundreds of copies of the product to plan and to compute. Here each argument becomes a field of a
-- one-element list whose lambda applies the formula to the fields: every argument is computed once, and the formula
-- reads the result.
CREATE OR REPLACE TEMP MACRO money_div(num, den) AS  -- noqa: CP05
list_transform([{ 'num': num, 'den': den }], LAMBDA x: money_div_formula(x.num, x.den))[1]
;

CREATE OR REPLACE TEMP MACRO money_mul(a, b) AS  -- noqa: CP05
list_transform([{ 'a': a, 'b': b }], LAMBDA x: money_mul_formula(x.a, x.b))[1]
;

CREATE OR REPLACE TEMP MACRO money_share(amount, part, whole) AS  -- noqa: CP05
list_transform(
    [{ 'amount': amount, 'part': part, 'whole': whole }], LAMBDA x: money_share_formula(x.amount, x.part, x.whole)
)[1]
;

CREATE OR REPLACE TEMP MACRO money_count_share(amount, count, whole) AS  -- noqa: CP05
list_transform(
    [{ 'amount': amount, 'count': count, 'whole': whole }], LAMBDA x: money_count_share_formula(x.amount, x.count, x.whole)
)[1]
;

-- The capacity per node a decision plans with: the what-if `costledger plan --capacity-tps` binds as a session
-- variable, else the one measured (a build binds none, so the measured one; on Spark the variable is NULL too).
CREATE OR REPLACE TEMP MACRO plan_capacity(measured) AS  -- noqa: CP05
coalesce(CAST(getvariable('costledger_plan_capacity_tps') AS DECIMAL(38, 3)), measured)
;

-- The position of the discrete quantile q among n sorted values, as DuckDB's quantile_disc takes it: the
-- ceil(q x n)-th smallest, at least the first, written n - floor(n - q x n) (equal to ceil(q x n) for every n up to
-- 2 million at q = 0.5 and 0.95, and the same on Spark). One definition for every percentile read from a histogram
-- or a sorted list.
CREATE OR REPLACE TEMP MACRO quantile_position(n, q) AS  -- noqa: CP05
greatest(1, n - floor(n - q * n))
;

-- the verdict of a month with a self-hosted route and an API price, from C, V, its accepted tasks and break-even:
-- one definition for the month's verdict and for its recomputations under each named assumption
CREATE OR REPLACE TEMP MACRO break_even_verdict(c, v, accepted, break_even) AS  -- noqa: CP05
CASE
    WHEN c <= v THEN 'never_breaks_even'
    WHEN accepted > 0 AND accepted >= break_even THEN 'self_hosting_cheaper'
    ELSE 'api_cheaper'
END
;

-- Break-even accepted tasks, F / (C - V): the fixed cost over what each accepted task saves on the cluster; NULL when
-- a task saves nothing (C <= V: the cluster never breaks even). One definition for the month's break-even, its three
-- views, the robustness ends and the planning scenarios.
CREATE OR REPLACE TEMP MACRO break_even_tasks(f, c, v) AS  -- noqa: CP05
CASE WHEN c > v THEN money_div(f, c - v) END
;

-- The month's saving from self-hosting at C, V, F and n accepted tasks on the cluster: C x n - (F + V x n), what the
-- API would have charged for the cluster's accepted tasks less what the cluster cost; with none accepted, the
-- cluster's review (``review``: of what it rejected) is still a cost, so the saving is all_api - as_run always
CREATE OR REPLACE TEMP MACRO break_even_saving(f, c, v, n, review) AS  -- noqa: CP05
CAST(c * n - (f + CASE WHEN n > 0 THEN v * n ELSE coalesce(review, 0) END) AS DECIMAL(38, 12))
;

-- The comparator C with its token part and its review part moved by factors (a robustness end): the token part is
-- scaled on the equivalent basis only (the measured basis has none to scale), the review part on both
CREATE OR REPLACE TEMP MACRO comparator_at(source, equivalent, c, review, equivalent_factor, review_factor) AS  -- noqa: CP05
CAST(
    CASE WHEN source = 'equivalent' THEN equivalent * equivalent_factor ELSE c - coalesce(review, 0) END
    + coalesce(review, 0) * review_factor
    AS DECIMAL(38, 12)
)
;

-- What a counter counted between two samples: its rise, or, where it fell (the engine restarted, the driver reloaded:
-- it began again at 0), its value at the later sample
CREATE OR REPLACE TEMP MACRO counter_rise(value, previous_value) AS  -- noqa: CP05
CASE WHEN value >= previous_value THEN value - previous_value ELSE value END
;

-- x / 1,000,000 exactly: a token count times a price per million is dollars, a token count is millions of tokens
-- (a DECIMAL times 0.000001 stays DECIMAL; DuckDB's `/` would give a DOUBLE)
CREATE OR REPLACE TEMP MACRO per_million(x) AS  -- noqa: CP05
x * CAST(0.000001 AS DECIMAL(7, 6))
;

-- A stable whole number in [0, 2^60) for a value: the first 15 hex digits of the MD5 of its text. The same number on
-- every engine the models run on (DuckDB's hash() is DuckDB's own), so task groups and the bootstrap's draws are too.
CREATE OR REPLACE TEMP MACRO hash_key(x) AS  -- noqa: CP05
CAST(('0x' || left(md5(CAST(x AS VARCHAR)), 15)) AS BIGINT)
;
