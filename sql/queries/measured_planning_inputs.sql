-- The report's planning view from measured figures: the month's self-hosted cost per provisioned hour and its
-- provisioned hours (all clusters), and the API cost per accepted task (measured or API-equivalent).
-- Parameter: $month (DATE).
SELECT
    money_div(b.self_hosted_cost_usd, sum(u.provisioned_hours)) AS rate_per_hour_usd,
    sum(u.provisioned_hours) AS hours,
    b.api_cost_per_accepted_task_usd,
    b.api_cost_source
FROM marts.monthly_break_even AS b
JOIN marts.monthly_utilisation AS u USING (month)
WHERE b.month = $month
GROUP BY b.self_hosted_cost_usd, b.api_cost_per_accepted_task_usd, b.api_cost_source
