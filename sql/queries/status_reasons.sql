-- costledger status: the top quarantine reasons; quoted values are folded so that reasons group by
-- kind of problem, not by value
SELECT
    kind,
    regexp_replace(reason, '''[^'']*''', '''...''', 'g') AS reason,
    count(*) AS quarantined_rows
FROM meta.quarantine
GROUP BY ALL
ORDER BY quarantined_rows DESC, kind ASC
LIMIT 10
