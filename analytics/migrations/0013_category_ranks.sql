-- Daily category ranks beside the store ranks (issue 76: a listing's
-- page charts its rank in its category): the competition rank of a
-- listing's size among the listings of its category (as it is now, the
-- category the listing document ranks in) ranked that day, by the same
-- rule as the store rank. An expand migration: the release before writes
-- no category rank (0, read as none) and ranks no day again for it; the
-- ranks job of this release ranks again every day whose newest ranking
-- was made under an earlier rule (rule below 1, the release before's).
-- (ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: Migrate skips the
-- statement where the column is there, so that it stays idempotent.)
ALTER TABLE daily_ranks ADD COLUMN category_rank UInt32 DEFAULT 0;
ALTER TABLE daily_ranks_days ADD COLUMN rule UInt8 DEFAULT 0;

-- Each category's live listings ranked that day and the sum of their
-- sizes (the same rows the category ranks are counted among), written by
-- the ranks job beside them: a category's page charts them week by week.
-- Recomputing a day replaces its rows (version, as in daily_ranks).
CREATE TABLE IF NOT EXISTS daily_categories (
    store       UInt8,
    category    String,
    day         Date,
    listings    UInt32,
    total_size  UInt64,
    version     UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYear(day)
ORDER BY (store, category, day);

-- How many live chrome and edge listings asked for each permission on a
-- day (each listing by its newest metadata read by the day's end, not
-- delisted by then), written by the ranks job beside the ranks: the
-- permissions' page says how each count moved.
CREATE TABLE IF NOT EXISTS daily_permissions (
    store       UInt8,
    permission  String,
    day         Date,
    listings    UInt32,
    version     UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYear(day)
ORDER BY (permission, day, store);
