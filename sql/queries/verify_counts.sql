-- costledger verify: lake files, and how many have their SHA-256 recorded
SELECT count(*) AS lake_files, count(lake_sha256) AS hashes_recorded
FROM meta.loaded_files
WHERE lake_file IS NOT NULL
