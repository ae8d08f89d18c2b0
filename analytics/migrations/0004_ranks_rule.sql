-- The rule of the daily store ranks changed: a day now ranks every listing
-- not delisted by the day's end by its newest size in the 7 days up to the
-- day (it ranked only the listings read that day). Forgetting which days
-- were ranked makes the ranks job rank every day again with the new rule;
-- the rows it writes replace the old ones (a newer version).
DROP TABLE IF EXISTS daily_ranks_days;

CREATE TABLE IF NOT EXISTS daily_ranks_days (
    day         Date,
    version     UInt64,
    crawls      UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY day;
