-- costledger status: the latest files rejected whole
SELECT kind, path, reason
FROM meta.rejected_files
ORDER BY rejected_at DESC
LIMIT 10
