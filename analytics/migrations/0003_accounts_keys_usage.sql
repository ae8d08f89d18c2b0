-- Accounts, API keys and daily usage: what every edge of a fleet shares.
-- Rows are never updated in place: a change (a disabled account, a revoked
-- key, a raised limit) is a new row with a larger version (the writer's
-- clock in nanoseconds), and readers take each account's or key's newest
-- row. Only hashes are stored: an argon2id hash of each password and a
-- SHA-256 hash of each key; key_id is the key's public prefix.
CREATE TABLE IF NOT EXISTS accounts (
    email         String,
    password_hash String,
    disabled      UInt8,
    created_at    DateTime,
    version       UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY email;

CREATE TABLE IF NOT EXISTS api_keys (
    key_id      String,
    email       String,
    key_hash    String,
    daily_limit UInt64,
    revoked     UInt8,
    created_at  DateTime,
    version     UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY key_id;

-- Calls counted against each caller's day: every edge adds the calls it
-- counted since its last flush (a delta), and a caller's day is the sum of
-- its rows. subject is "key:<key id>" or "addr:<address>". A day's rows sit
-- in their own partition, so old days can be dropped whole.
CREATE TABLE IF NOT EXISTS usage (
    day     Date,
    subject String,
    calls   UInt64
) ENGINE = SummingMergeTree(calls)
PARTITION BY day
ORDER BY (day, subject);
