-- grain: one row per month x budget (team x route), in months with spend
-- materialized: table
-- unique_key: month, team, route
-- description: Each month's spend against each budget of the settings' [[budgets]]: spent = the month's chargeback (marts.monthly_chargeback) of the budget's team ('*': every team, idle and unassigned included) on its route (or both). The ledger's data runs to its last day with requests (as_of). A month that ended by then is complete: projected = spent. For the month as_of falls in, the run-rate is the spend of its last 7 days (fewer when fewer have passed) per day, told from the team's usage: spent x (its usage at API prices in those days / its usage in the month so far) / the days, or spent / the days passed when it has no usage; projected = spent + run-rate x the days left. status: 'over' (spent above the budget), 'at_risk' (projected above it) or 'ok'.
-- column month DATE: First day of the month (UTC).
-- column team VARCHAR: The budget's team ('*' = every team).
-- column route VARCHAR: 'api', 'self_hosted' or 'both'.
-- column budget_usd DECIMAL(38,12): The month's budget.
-- column spent_usd DECIMAL(38,12): The month's spend so far (its chargeback), exact.
-- column as_of DATE: The last day of the month with data (the ledger's last day with requests, or the month's last day).
-- column days_passed BIGINT: Days of the month up to as_of.
-- column run_rate_usd_per_day DECIMAL(38,12): The spend per day of the last 7 days passed (NULL for a complete month).
-- column projected_usd DECIMAL(38,12): spent_usd + run_rate_usd_per_day x the days left (spent_usd for a complete month).
-- column status VARCHAR: 'ok', 'at_risk' or 'over'.
WITH budgets AS (
    SELECT * FROM staging.stg_ledger__budgets
),
charged AS (
    SELECT month, route, team, sum(exact_usd) AS spent_usd FROM marts.monthly_chargeback GROUP BY month, route, team
),
usage AS (
    SELECT
        day,
        month,
        route,
        CASE WHEN team = '(none)' THEN '(unassigned)' ELSE team END AS team,
        token_cost_usd
    FROM intermediate.int_team_usage_daily
),
last_day AS (
    SELECT max(day) AS day FROM usage
),
months AS (
    SELECT
        m.month,
        least(l.day, CAST(m.month + INTERVAL 1 MONTH - INTERVAL 1 DAY AS DATE)) AS as_of,
        date_diff('day', m.month, CAST(m.month + INTERVAL 1 MONTH AS DATE)) AS days_in_month
    FROM (SELECT DISTINCT month FROM charged) AS m
    CROSS JOIN last_day AS l
),
spent AS (
    SELECT
        m.month,
        b.team,
        b.route,
        b.budget_usd,
        m.as_of,
        m.days_in_month,
        date_diff('day', m.month, m.as_of) + 1 AS days_passed,
        coalesce(sum(c.spent_usd), 0) AS spent_usd
    FROM months AS m
    CROSS JOIN budgets AS b
    LEFT JOIN charged AS c
        ON c.month = m.month AND (b.team = '*' OR c.team = b.team) AND (b.route = 'both' OR c.route = b.route)
    GROUP BY m.month, b.team, b.route, b.budget_usd, m.as_of, m.days_in_month
),
activity AS (
    SELECT
        s.month,
        s.team,
        s.route,
        coalesce(sum(u.token_cost_usd), 0) AS month_usage_usd,
        coalesce(sum(u.token_cost_usd) FILTER (WHERE date_diff('day', u.day, s.as_of) < least(7, s.days_passed)), 0) AS window_usage_usd,
        least(7, s.days_passed) AS window_days
    FROM spent AS s
    LEFT JOIN usage AS u
        ON u.month = s.month AND u.day <= s.as_of
        AND (s.team = '*' OR u.team = s.team) AND (s.route = 'both' OR u.route = s.route)
    GROUP BY s.month, s.team, s.route, s.days_passed
),
windowed AS (
    -- the spend's share of the last days' usage, one step before it is divided by the days (a macro inside a macro
    -- writes the inner one out in every place the outer names its argument)
    SELECT
        s.*,
        a.month_usage_usd > 0 AS has_usage,
        a.window_days,
        CASE WHEN a.month_usage_usd > 0 THEN money_share(s.spent_usd, a.window_usage_usd, a.month_usage_usd) END
            AS window_spent_usd
    FROM spent AS s
    JOIN activity AS a USING (month, team, route)
),
projected AS (
    SELECT
        *,
        CASE
            WHEN days_passed >= days_in_month THEN NULL
            WHEN has_usage THEN money_div(window_spent_usd, window_days)
            ELSE money_div(spent_usd, days_passed)
        END AS run_rate_usd_per_day
    FROM windowed
)
SELECT
    month,
    team,
    route,
    budget_usd,
    CAST(spent_usd AS DECIMAL(38, 12)) AS spent_usd,
    as_of,
    days_passed,
    run_rate_usd_per_day,
    CAST(spent_usd + coalesce(run_rate_usd_per_day * (days_in_month - days_passed), 0) AS DECIMAL(38, 12))
        AS projected_usd,
    CASE
        WHEN spent_usd > budget_usd THEN 'over'
        WHEN spent_usd + coalesce(run_rate_usd_per_day * (days_in_month - days_passed), 0) > budget_usd
            THEN 'at_risk'
        ELSE 'ok'
    END AS status
FROM projected
