-- A log of changes to accounts and keys, in the order ClickHouse received
-- them (its own clock, not the writer's). Every write of an account or key
-- row first appends the account's address or the key's id here, so an edge
-- reloading its keys reads only what changed since its last read instead
-- of every row. One small row per change (sign-up, new key, revocation,
-- disabling); partitioned by month, so old months can be dropped whole.
CREATE TABLE IF NOT EXISTS access_log (
    at   DateTime DEFAULT now(),
    kind String,
    id   String
) ENGINE = MergeTree
PARTITION BY toYYYYMM(at)
ORDER BY (at, kind, id);
