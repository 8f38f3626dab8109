-- grain: one row per currency x date
-- materialized: view
-- unique_key: currency, date
-- description: Exchange rates, US dollars per unit of a currency, each in force from its date until the currency's next one: for each (currency, date) the latest-loaded row (a later fx file restates a rate by repeating its key).
-- column currency VARCHAR
-- column date DATE
-- column usd_per_unit DECIMAL(38,12)
-- column next_date DATE: The date of the currency's next rate (NULL for its latest): a rate is in force on the days from date up to, not including, next_date, so "the latest rate on or before a day" is a plain join on that range.
WITH latest AS (
    SELECT
        x.currency,
        x.date,
        x.usd_per_unit
    FROM raw.fx AS x
    INNER JOIN meta.loaded_files AS f ON x.source_file_hash = f.file_hash
    QUALIFY row_number() OVER (PARTITION BY x.currency, x.date ORDER BY f.load_seq DESC, x.source_line DESC) = 1
)

SELECT
    currency,
    date,
    usd_per_unit,
    lead(date) OVER (PARTITION BY currency ORDER BY date) AS next_date
FROM latest
