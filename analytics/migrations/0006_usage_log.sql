-- The usage log: every flush of an edge's counted calls is one batch of
-- rows, named by the edge and a sequence number, and timed by ClickHouse's
-- clock. Edges read the log from where they last read it, so a sync costs
-- what changed since the last one, not the day's number of callers; the
-- view below sums every row into usage, which an edge reads whole only
-- when it starts or a day begins. The log is kept two days (the usage
-- retention job drops older days).
CREATE TABLE IF NOT EXISTS usage_log (
    day     Date,
    at      DateTime DEFAULT now(),
    edge    String,
    seq     UInt64,
    subject String,
    calls   UInt64
) ENGINE = MergeTree
PARTITION BY day
ORDER BY (day, at, edge, seq);

CREATE MATERIALIZED VIEW IF NOT EXISTS usage_log_totals TO usage AS
SELECT day, subject, calls FROM usage_log;
