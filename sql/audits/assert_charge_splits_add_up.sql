-- audit: each cluster charge is split across months into pieces that add up to the charge exactly
-- (returns the violating charges; zero rows = pass)
SELECT c.charge_id, c.amount_usd, sum(s.amount_usd) AS split_total_usd
FROM intermediate.int_cluster_charge_lines AS c
JOIN intermediate.int_cluster_charges_split AS s USING (charge_id)
GROUP BY c.charge_id, c.amount_usd
HAVING sum(s.amount_usd) <> c.amount_usd
