-- Webhook endpoints of accounts (issue 42): one row a change (made,
-- disabled, enabled, deleted); the newest version of an endpoint wins.
-- secret is sealed with the operator's key (AES-GCM), never stored in the
-- clear; stores and kinds are comma-separated filters ('' for all).
CREATE TABLE IF NOT EXISTS webhooks (
    id           String,
    email        String,
    url          String,
    stores       String,
    kinds        String,
    permission   String,
    secret       String,
    created_at   DateTime,
    enabled      UInt8,
    disabled_why String,
    deleted      UInt8,
    version      UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY id;

-- Where each endpoint's deliveries stand, written by the delivering edge
-- after its deliveries and read by the next one to deliver (after a
-- restart, or another edge taking the lead): the last event delivered (an
-- event cursor), since when the next one fails (unix seconds; 0 when it
-- does not), and its attempts.
CREATE TABLE IF NOT EXISTS webhook_cursors (
    id            String,
    cursor        String,
    failing_since UInt32,
    attempts      UInt32,
    version       UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY id;

-- Every delivery attempt, for the endpoint's delivery log; a day's rows
-- sit in their own partition, dropped whole after 30 days.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    day        Date,
    id         String,
    at         DateTime,
    event_id   String,
    type       String,
    attempt    UInt32,
    status     UInt16,
    latency_ms UInt32,
    error      String
) ENGINE = MergeTree()
PARTITION BY day
ORDER BY (id, at);
