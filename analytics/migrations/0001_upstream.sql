-- Upstream tables: what the crawler writes (and `edge seed` writes the same).
-- Stores are numbered 0 chrome, 1 edge, 2 firefox, 3 apple, 4 googleplay.

-- One row per metadata version of a listing; the newest crawled_at wins.
-- Every version is kept (a weekly edition reads the metadata as it was at
-- the end of its week); listings_latest below holds the newest version.
CREATE TABLE IF NOT EXISTS listings (
    store            UInt8,
    id               String,
    crawled_at       DateTime,
    slug             Nullable(String),
    name             String,
    developer        String,
    category         String,
    kind             UInt8,
    description      String,
    icon             String,
    version          String,
    store_updated    Nullable(Date),
    store_created    Nullable(Date),
    first_seen       DateTime,
    delisted_at      Nullable(DateTime),
    featured         UInt8,
    manifest_version UInt8,
    permissions      Array(String),
    host_access      Array(String),
    access_level     UInt8,
    topics           Array(String)
) ENGINE = MergeTree()
ORDER BY (store, id, crawled_at);

-- One row per crawl of a listing (several a day for big listings): billions
-- of rows, partitioned by month and ordered so one listing's history is one
-- contiguous range.
CREATE TABLE IF NOT EXISTS snapshots (
    store            UInt8,
    id               String,
    crawled_at       DateTime,
    usage            Nullable(UInt64),
    weekly_downloads Nullable(UInt64),
    rating           Nullable(Float64),
    rating_count     Nullable(UInt64),
    stars            Array(UInt32)
) ENGINE = MergeTree()
PARTITION BY toYYYYMM(crawled_at)
ORDER BY (store, id, crawled_at);

-- One row per stored review. A review read again replaces itself.
CREATE TABLE IF NOT EXISTS reviews (
    store       UInt8,
    listing_id  String,
    review_id   String,
    posted_at   DateTime,
    stars       UInt8,
    author      String,
    lang        String,
    text        String,
    crawled_at  DateTime
) ENGINE = ReplacingMergeTree(crawled_at)
PARTITION BY toYYYYMM(posted_at)
ORDER BY (store, listing_id, review_id);

-- Derived tables, kept up to date by ClickHouse on every insert into
-- snapshots, so that nothing has to scan the whole history to know the
-- newest reading or the day's latest reading.

-- The newest metadata version of every listing (read with FINAL): the
-- columns of listings, one row per listing once merged.
-- Its columns are spelled out, not copied (AS listings): a table made AS
-- another inherits the other's PARTITION BY on current releases (not on
-- 18.16), which would keep a row per listing per partition.
CREATE TABLE IF NOT EXISTS listings_latest (
    store            UInt8,
    id               String,
    crawled_at       DateTime,
    slug             Nullable(String),
    name             String,
    developer        String,
    category         String,
    kind             UInt8,
    description      String,
    icon             String,
    version          String,
    store_updated    Nullable(Date),
    store_created    Nullable(Date),
    first_seen       DateTime,
    delisted_at      Nullable(DateTime),
    featured         UInt8,
    manifest_version UInt8,
    permissions      Array(String),
    host_access      Array(String),
    access_level     UInt8,
    topics           Array(String)
) ENGINE = ReplacingMergeTree(crawled_at)
ORDER BY (store, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS listings_latest_mv TO listings_latest AS
SELECT store, id, crawled_at, slug, name, developer, category, kind, description, icon, version,
       store_updated, store_created, first_seen, delisted_at, featured, manifest_version,
       permissions, host_access, access_level, topics
FROM listings;

-- The newest reading of every listing (read with FINAL): the columns of
-- snapshots, one row per listing once merged.
-- Spelled out for the same reason: snapshots is partitioned by month, and
-- this table must hold one row a listing, not one a listing and month.
CREATE TABLE IF NOT EXISTS snapshots_latest (
    store            UInt8,
    id               String,
    crawled_at       DateTime,
    usage            Nullable(UInt64),
    weekly_downloads Nullable(UInt64),
    rating           Nullable(Float64),
    rating_count     Nullable(UInt64),
    stars            Array(UInt32)
) ENGINE = ReplacingMergeTree(crawled_at)
ORDER BY (store, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS snapshots_latest_mv TO snapshots_latest AS
SELECT store, id, crawled_at, usage, weekly_downloads, rating, rating_count, stars
FROM snapshots;

-- The latest reading of every listing on every UTC day (read with FINAL).
CREATE TABLE IF NOT EXISTS snapshots_daily (
    store            UInt8,
    id               String,
    day              Date,
    crawled_at       DateTime,
    usage            Nullable(UInt64),
    weekly_downloads Nullable(UInt64),
    rating           Nullable(Float64),
    rating_count     Nullable(UInt64),
    stars            Array(UInt32)
) ENGINE = ReplacingMergeTree(crawled_at)
PARTITION BY toYYYYMM(day)
ORDER BY (store, id, day);

CREATE MATERIALIZED VIEW IF NOT EXISTS snapshots_daily_mv TO snapshots_daily AS
SELECT store, id, toDate(crawled_at, 'UTC') AS day, crawled_at, usage, weekly_downloads, rating, rating_count, stars
FROM snapshots;
