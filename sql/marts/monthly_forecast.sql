-- grain: one row per month
-- materialized: table
-- unique_key: month
-- description: When does self-hosting pay, if the trend holds? The self-hosted accepted-task trend fitted by least squares on the natural log of the monthly volume over the last 3 to 6 months up to the month (months with no accepted tasks left out), projected to the first month whose volume reaches the month's own break-even, with a range from the slope's standard error either side. NULL projections with fewer than 3 months, without a growing trend, or more than 12 months ahead: never extrapolated further.
-- column month: First day of the month (UTC).
-- column months_fitted: Months in the fit (3 to 6; fewer than 3: no forecast).
-- column trend_monthly_growth: The fitted volume's growth a month: exp(slope) - 1 (0.5 = +50 % a month); NULL without a fit.
-- column forecast_status: 'already_above' (the month delivered at least its break-even), 'projected' (the trend reaches it within 12 months), 'beyond_12_months', 'not_growing' (the fitted trend is flat or falling), 'too_few_months' or 'no_break_even' (the month has no break-even to reach).
-- column projected_month: The first month the trend reaches the month's break-even (the month itself when already above); NULL unless 'projected' or 'already_above'.
-- column projected_month_low: The earliest month in the range: the trend with its slope one standard error steeper.
-- column projected_month_high: The latest month in the range: the slope one standard error shallower; NULL when that trend does not reach break-even within 12 months.
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
projected AS (
    SELECT
        v.month,
        v.month_number,
        v.break_even_accepted_tasks,
        v.self_hosted_accepted_tasks,
        f.months_fitted,
        f.slope,
        -- the slope's standard error: sqrt(residual sum of squares / (n - 2) / sxx)
        CASE WHEN f.months_fitted >= 3 AND f.sxx > 0
            THEN sqrt(greatest(f.syy - f.sxy * f.sxy / f.sxx, 0) / (f.months_fitted - 2) / f.sxx) END AS slope_se,
        -- months ahead until the fitted volume reaches break-even: (ln(break-even) - fitted ln(volume) now) / slope
        CASE WHEN f.months_fitted >= 3 AND f.slope > 0 AND v.break_even_accepted_tasks > 0
            THEN (ln(CAST(v.break_even_accepted_tasks AS DOUBLE)) - (f.intercept + f.slope * v.month_number)) END
            AS log_gap
    FROM volume AS v
    JOIN fits AS f USING (month)
),
ahead AS (
    SELECT
        *,
        CASE WHEN log_gap IS NOT NULL THEN greatest(ceil(log_gap / slope), 0) END AS months_ahead,
        CASE WHEN log_gap IS NOT NULL THEN greatest(ceil(log_gap / (slope + slope_se)), 0) END AS months_ahead_low,
        CASE WHEN log_gap IS NOT NULL AND slope - slope_se > 0 THEN greatest(ceil(log_gap / (slope - slope_se)), 0) END
            AS months_ahead_high
    FROM projected
),
judged AS (
    SELECT
        *,
        CASE
            WHEN break_even_accepted_tasks IS NULL THEN 'no_break_even'
            WHEN self_hosted_accepted_tasks >= break_even_accepted_tasks AND self_hosted_accepted_tasks > 0 THEN 'already_above'
            WHEN months_fitted < 3 THEN 'too_few_months'
            WHEN slope <= 0 THEN 'not_growing'
            WHEN months_ahead > 12 THEN 'beyond_12_months'
            ELSE 'projected'
        END AS forecast_status
    FROM ahead
)
SELECT
    month,
    months_fitted,
    CASE WHEN months_fitted >= 3 THEN exp(slope) - 1 END AS trend_monthly_growth,
    forecast_status,
    CASE forecast_status
        WHEN 'already_above' THEN month
        WHEN 'projected' THEN CAST(month + to_months(CAST(months_ahead AS INTEGER)) AS DATE)
    END AS projected_month,
    CASE forecast_status
        WHEN 'already_above' THEN month
        WHEN 'projected' THEN CAST(month + to_months(CAST(months_ahead_low AS INTEGER)) AS DATE)
    END AS projected_month_low,
    CASE
        WHEN forecast_status = 'already_above' THEN month
        WHEN forecast_status = 'projected' AND months_ahead_high <= 12
            THEN CAST(month + to_months(CAST(months_ahead_high AS INTEGER)) AS DATE)
    END AS projected_month_high
FROM judged
