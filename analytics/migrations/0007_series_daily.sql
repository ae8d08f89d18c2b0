-- The latest reading of every listing on every UTC day, for reads of a few
-- listings' series (growth between dates, comparisons). snapshots_daily
-- holds the same rows, but in granules of 8,192: a read of one listing
-- decompresses a granule of every part, about 500,000 rows, for its
-- few hundred. Here a granule is 256 rows (bench/README.md, The
-- analysts' reads). A partition a year, not a month: a read of one
-- listing opens every part, and monthly partitions made 65 parts at 1M
-- listings, each a few milliseconds of the read.
CREATE TABLE IF NOT EXISTS series_daily (
    store            UInt8,
    id               String,
    day              Date,
    crawled_at       DateTime,
    usage            Nullable(UInt64),
    weekly_downloads Nullable(UInt64),
    rating           Nullable(Float64),
    rating_count     Nullable(UInt64)
) ENGINE = ReplacingMergeTree(crawled_at)
PARTITION BY toYear(day)
ORDER BY (store, id, day)
SETTINGS index_granularity = 256;

CREATE MATERIALIZED VIEW IF NOT EXISTS series_daily_mv TO series_daily AS
SELECT store, id, toDate(crawled_at, 'UTC') AS day, crawled_at, usage, weekly_downloads, rating, rating_count
FROM snapshots;

-- The readings stored before the view existed. A reading inserted while
-- this runs may be written twice: readers take each day's latest, so a
-- duplicate changes nothing.
INSERT INTO series_daily (store, id, day, crawled_at, usage, weekly_downloads, rating, rating_count)
SELECT store, id, toDate(crawled_at, 'UTC'), crawled_at, usage, weekly_downloads, rating, rating_count
FROM snapshots;
