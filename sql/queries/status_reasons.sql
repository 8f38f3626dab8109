-- costledger status: the top quarantine reasons, grouped by kind of problem, not by value: a quoted value (a quote
-- that opens after a space or a sign and closes before one, so that the apostrophe of "the ledger's" is no quote)
-- and a line number are folded to '...' and 'line ...'
SELECT
    kind,
    regexp_replace(
        regexp_replace(reason, '(^|[\s(:=,\[])''[^'']*''([\s),;:.\]]|$)', '\1''...''\2', 'g'),
        '\bline \d+', 'line ...', 'g'
    ) AS reason,
    count(*) AS quarantined_rows
FROM meta.quarantine
GROUP BY ALL
ORDER BY quarantined_rows DESC, kind ASC
LIMIT 10
