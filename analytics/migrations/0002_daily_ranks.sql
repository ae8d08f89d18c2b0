-- Daily store ranks, computed by the "ranks" job from snapshots_daily: the
-- competition rank of each listing's size (usage; ratings on apple) among
-- the listings of its store read that UTC day (1 + the number with a
-- larger size). Recomputing a day replaces its rows: version is the
-- computing edge's clock in nanoseconds, finer than DateTime's seconds.
CREATE TABLE IF NOT EXISTS daily_ranks (
    store       UInt8,
    id          String,
    day         Date,
    rank        UInt32,
    version     UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(day)
ORDER BY (store, id, day);

-- The days ranked so far, with when: the job's to-do list is the days of
-- snapshots_daily that are missing here or were ranked before their last
-- crawl arrived (their number of crawls changed since).
CREATE TABLE IF NOT EXISTS daily_ranks_days (
    day         Date,
    version     UInt64,
    crawls      UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY day;
