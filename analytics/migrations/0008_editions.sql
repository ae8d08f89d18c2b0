-- The weekly editions, built once by a fleet and kept: an edge that has
-- not built an edition loads it (a row of JSON) instead of reading two
-- week states. version is the edition's format (editions.FormatVersion):
-- an edition of another format is built again. A week's newest row wins.
CREATE TABLE IF NOT EXISTS editions (
    week     String,
    version  UInt32,
    built_at DateTime,
    body     String
) ENGINE = ReplacingMergeTree(built_at)
ORDER BY (week, version);
