-- The fleet leadership's epoch under which a webhook cursor was written
-- (issue 54): readers take an endpoint's cursor of the largest epoch, so
-- that a leader whose lease ran out and who writes late never moves an
-- endpoint back behind where its successor stands. An expand migration:
-- the release before writes no epoch (0) and reads the newest row.
-- (ClickHouse 18.16 has no ADD COLUMN IF NOT EXISTS: Migrate skips the
-- statement where the column is there, so that it stays idempotent.)
ALTER TABLE webhook_cursors ADD COLUMN epoch UInt64 DEFAULT 0;
