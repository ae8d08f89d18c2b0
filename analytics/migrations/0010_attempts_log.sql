-- The account routes' attempts that count against their limits (issue
-- 54): every sign-up admitted and every failed sign-in, written by the
-- edge that saw it, in batches named by the edge and a sequence number,
-- and read back by every edge of the fleet within seconds, so that the
-- limits hold for the fleet, not per edge, and a restart forgets none.
-- subject is a hash of what a limit counts by (an address, an e-mail
-- address, the two together; unkeyed, so it keeps them out of casual
-- sight only: anyone can hash every IPv4 address); kind says which
-- limit; happened is when the edge saw the attempt (unix milliseconds);
-- at is ClickHouse's clock, where reads go on from. Kept two days (the
-- usage retention job drops older days). Only added: an edge of the
-- release before never reads it.
CREATE TABLE IF NOT EXISTS attempts_log (
    day      Date,
    at       DateTime DEFAULT now(),
    edge     String,
    seq      UInt64,
    kind     UInt8,
    subject  String,
    happened UInt64
) ENGINE = MergeTree
PARTITION BY day
ORDER BY (day, at, edge, seq);
