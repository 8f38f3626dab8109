-- costledger status: where the latest timed run spent its time (ledgers published before 0.4 have no
-- meta.run_steps: the CLI shows nothing then)
SELECT s.step, s.name, round(s.seconds, 2) AS seconds, s.rows_in
FROM meta.run_steps AS s
WHERE s.run_id = (
    SELECT r.run_id
    FROM meta.runs AS r
    SEMI JOIN meta.run_steps AS t ON t.run_id = r.run_id
    ORDER BY r.started_at DESC
    LIMIT 1
)
ORDER BY s.seconds DESC
LIMIT 10
