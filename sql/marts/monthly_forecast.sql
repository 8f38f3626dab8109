-- grain: one row per month
-- materialized: table
-- unique_key: month
-- description: When does self-hosting pay, if the trend continues? The self-hosted accepted-task trend fitted by least squares on the natural log of the monthly volume over the last 4 to 6 months up to the month (months with no accepted tasks left out; 3 would leave one degree of freedom and no honest range), projected to the first month whose fitted volume reaches the month's own break-even (held at that month's value). The range is the 95 % prediction interval of a future month's volume (Student's t with n - 2 degrees of freedom: fitted log volume +/- t x s x sqrt(1 + 1/n + (x - mean x)^2 / Sxx), s^2 the residual sum of squares / (n - 2)): the earliest month is the first whose upper bound reaches break-even, the latest the first whose lower bound does. Nothing is projected more than 12 months ahead.
-- column month DATE: First day of the month (UTC).
-- column months_fitted BIGINT: Months in the fit (4 to 6; fewer than 4: no forecast).
-- column trend_monthly_growth DOUBLE: The fitted volume's growth a month: exp(slope) - 1 (0.5 = +50 % a month); NULL without a fit.
-- column trend_monthly_growth_low DOUBLE: The low end of the growth's 95 % interval: exp(slope - t x its standard error) - 1.
-- column trend_monthly_growth_high DOUBLE: The high end: exp(slope + t x its standard error) - 1.
-- column forecast_status VARCHAR: 'already_above' (the month delivered at least its break-even), 'projected' (the fitted trend reaches it within 12 months), 'beyond_12_months', 'not_growing' (the fitted trend is flat or falling), 'too_few_months' (fewer than 4) or 'no_break_even' (the month has no break-even to reach).
-- column projected_month DATE: The first month the fitted trend reaches the month's break-even (the month itself when already above); NULL unless 'projected' or 'already_above'.
-- column earliest_month DATE: The first month (within 12) whose prediction interval's upper bound reaches break-even: the soonest the trend allows; NULL when none does.
-- column latest_month DATE: The first month (within 12) whose lower bound reaches break-even: by then break-even is likely if the trend continues; NULL when none does within 12 months.
WITH volume AS (
    SELECT
        month,
        break_even_accepted_tasks,
        self_hosted_accepted_tasks,
        row_number() OVER (ORDER BY month) AS month_number
    FROM marts.monthly_break_even
),
fits AS (
    -- the fit at each month: its own and up to 5 months before, those with accepted tasks
    SELECT
        m.month,
        count(p.month) AS months_fitted,
        avg(p.month_number) AS mean_x,
        regr_slope(ln(p.self_hosted_accepted_tasks), p.month_number) AS slope,
        regr_intercept(ln(p.self_hosted_accepted_tasks), p.month_number) AS intercept,
        regr_sxx(ln(p.self_hosted_accepted_tasks), p.month_number) AS sxx,
        regr_syy(ln(p.self_hosted_accepted_tasks), p.month_number) AS syy,
        regr_sxy(ln(p.self_hosted_accepted_tasks), p.month_number) AS sxy
    FROM volume AS m
    LEFT JOIN volume AS p
        ON p.month BETWEEN CAST(m.month - INTERVAL 5 MONTH AS DATE) AND m.month AND p.self_hosted_accepted_tasks > 0
    GROUP BY m.month
),
fitted AS (
    SELECT
        v.month,
        v.month_number,
        v.break_even_accepted_tasks,
        v.self_hosted_accepted_tasks,
        f.months_fitted,
        f.mean_x,
        f.slope,
        f.intercept,
        f.sxx,
        -- s, the residuals' standard deviation: sqrt(residual sum of squares / (n - 2))
        CASE WHEN f.months_fitted >= 4 AND f.sxx > 0
            THEN sqrt(greatest(f.syy - f.sxy * f.sxy / f.sxx, 0) / (f.months_fitted - 2)) END AS s,
        -- Student's t, 97.5th percentile, n - 2 = 2, 3 or 4 degrees of freedom
        CASE f.months_fitted - 2
            WHEN 2 THEN 4.302652729911275 WHEN 3 THEN 3.182446305284263 WHEN 4 THEN 2.7764451051977987
        END AS t
    FROM volume AS v
    JOIN fits AS f USING (month)
),
horizon AS (
    -- each month 0 .. 12 ahead: the fitted log volume and its 95 % prediction interval, against log break-even
    SELECT
        month,
        ahead,
        intercept + slope * (month_number + ahead) AS log_fitted,
        t * s * sqrt(1 + 1.0 / months_fitted + power(month_number + ahead - mean_x, 2) / sxx) AS log_half_width,
        ln(CAST(break_even_accepted_tasks AS DOUBLE)) AS log_break_even
    FROM (SELECT *, unnest(range(0, 13)) AS ahead FROM fitted) AS months_ahead
    WHERE s IS NOT NULL AND break_even_accepted_tasks > 0
),
reached AS (
    SELECT
        month,
        min(ahead) FILTER (WHERE log_fitted >= log_break_even) AS months_ahead,
        min(ahead) FILTER (WHERE log_fitted + log_half_width >= log_break_even) AS months_ahead_earliest,
        min(ahead) FILTER (WHERE log_fitted - log_half_width >= log_break_even) AS months_ahead_latest
    FROM horizon
    GROUP BY month
),
judged AS (
    SELECT
        f.*,
        r.months_ahead,
        r.months_ahead_earliest,
        r.months_ahead_latest,
        CASE
            WHEN f.break_even_accepted_tasks IS NULL THEN 'no_break_even'
            WHEN f.self_hosted_accepted_tasks >= f.break_even_accepted_tasks AND f.self_hosted_accepted_tasks > 0
                THEN 'already_above'
            WHEN f.s IS NULL THEN 'too_few_months'
            WHEN f.slope <= 0 THEN 'not_growing'
            WHEN r.months_ahead IS NULL THEN 'beyond_12_months'
            ELSE 'projected'
        END AS forecast_status
    FROM fitted AS f
    LEFT JOIN reached AS r USING (month)
)
SELECT
    month,
    months_fitted,
    CASE WHEN s IS NOT NULL THEN exp(slope) - 1 END AS trend_monthly_growth,
    CASE WHEN s IS NOT NULL THEN exp(slope - t * s / sqrt(sxx)) - 1 END AS trend_monthly_growth_low,
    CASE WHEN s IS NOT NULL THEN exp(slope + t * s / sqrt(sxx)) - 1 END AS trend_monthly_growth_high,
    forecast_status,
    CASE forecast_status
        WHEN 'already_above' THEN month
        WHEN 'projected' THEN CAST(month + to_months(CAST(months_ahead AS INTEGER)) AS DATE)
    END AS projected_month,
    CASE
        WHEN forecast_status = 'already_above' THEN month
        WHEN forecast_status IN ('projected', 'beyond_12_months', 'not_growing') AND months_ahead_earliest IS NOT NULL
            THEN CAST(month + to_months(CAST(months_ahead_earliest AS INTEGER)) AS DATE)
    END AS earliest_month,
    CASE
        WHEN forecast_status = 'already_above' THEN month
        WHEN forecast_status IN ('projected', 'beyond_12_months', 'not_growing') AND months_ahead_latest IS NOT NULL
            THEN CAST(month + to_months(CAST(months_ahead_latest AS INTEGER)) AS DATE)
    END AS latest_month
FROM judged
