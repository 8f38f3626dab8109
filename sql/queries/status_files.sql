-- costledger status: the latest $files loaded files
SELECT kind, path, rows_in, rows_loaded, rows_quarantined, rows_gx_validated, loaded_at
FROM meta.loaded_files
ORDER BY load_seq DESC
LIMIT $files
