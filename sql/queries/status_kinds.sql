-- costledger status: loaded files by kind (rows in = loaded + quarantined)
SELECT
    kind,
    count(*) AS files,
    sum(rows_in) AS rows_in,
    sum(rows_loaded) AS rows_loaded,
    sum(rows_quarantined) AS rows_quarantined,
    sum(rows_gx_validated) AS rows_gx_validated
FROM meta.loaded_files
GROUP BY kind
ORDER BY kind
