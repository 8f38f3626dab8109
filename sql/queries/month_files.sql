-- costledger explain: the landing files whose rows fed a month ($month_start inclusive, $month_end exclusive), per
-- kind: the file's path and SHA-256 (meta.loaded_files), its rows that fed the month, and their lines when there are
-- 10 or fewer. What "fed" means per kind: requests started in the month; the outcomes of those requests' tasks; the
-- prices in force in it (int_prices_effective); invoices, cluster charges and FOCUS rows whose period overlaps it;
-- hardware in service during it (written off that month); the month's opex; fx rates up to its end; load tests
-- measured up to its end (the capacity the month uses); usage buckets and metric samples in it.
WITH month_requests AS (
    SELECT task_id, source_file_hash, source_line FROM raw.requests WHERE started_at >= $month_start AND started_at < $month_end
),
fed AS (
    SELECT 'requests' AS kind, source_file_hash, source_line FROM month_requests
    UNION ALL
    SELECT 'outcomes', o.source_file_hash, o.source_line
    FROM raw.outcomes AS o
    WHERE o.task_id IN (SELECT r.task_id FROM month_requests AS r)
    UNION ALL
    SELECT 'prices', p.source_file_hash, p.source_line
    FROM raw.prices AS p
    WHERE EXISTS (
        SELECT 1
        FROM intermediate.int_prices_effective AS e
        WHERE
            e.provider = p.provider AND e.model = p.model AND e.effective_from = p.effective_from
            AND e.service_tier = coalesce(p.service_tier, 'standard') AND e.min_input_tokens = coalesce(p.min_input_tokens, 0)
            AND e.valid_from < $month_end AND (e.valid_until IS NULL OR e.valid_until > $month_start)  -- noqa: RF02
    )
    UNION ALL
    SELECT 'invoices', source_file_hash, source_line FROM raw.invoices WHERE period_start < $month_end AND period_end > $month_start
    UNION ALL
    SELECT 'usage', source_file_hash, source_line FROM raw.usage WHERE bucket_start >= $month_start AND bucket_start < $month_end
    UNION ALL
    SELECT 'cluster-charges', source_file_hash, source_line
    FROM raw.cluster_charges
    WHERE charge_start < $month_end AND charge_end > $month_start
    UNION ALL
    SELECT 'focus', source_file_hash, source_line
    FROM raw.focus_charges
    WHERE charge_period_start < $month_end AND charge_period_end > $month_start
    UNION ALL
    SELECT 'hardware', source_file_hash, source_line
    FROM raw.hardware
    WHERE in_service_date < $month_end AND (retired_date IS NULL OR retired_date >= $month_start)
    UNION ALL
    SELECT 'opex', source_file_hash, source_line FROM raw.opex WHERE month >= $month_start AND month < $month_end
    UNION ALL
    SELECT 'fx', source_file_hash, source_line FROM raw.fx WHERE date < $month_end
    UNION ALL
    SELECT 'load-tests', source_file_hash, source_line FROM raw.load_tests WHERE measured_at < $month_end
    UNION ALL
    SELECT 'engine-metrics', source_file_hash, source_line
    FROM raw.engine_metrics
    WHERE sampled_at >= $month_start AND sampled_at < $month_end
    UNION ALL
    SELECT 'gpu-metrics', source_file_hash, source_line
    FROM raw.gpu_metrics
    WHERE sampled_at >= $month_start AND sampled_at < $month_end
)
SELECT
    f.kind,
    l.path,
    f.source_file_hash AS sha256,
    count(*) AS rows,
    CASE WHEN count(*) <= 10 THEN list(f.source_line ORDER BY f.source_line) END AS lines
FROM fed AS f
JOIN meta.loaded_files AS l ON f.source_file_hash = l.file_hash
GROUP BY f.kind, l.path, f.source_file_hash
ORDER BY f.kind ASC, l.path ASC
