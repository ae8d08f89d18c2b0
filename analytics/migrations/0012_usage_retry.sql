-- A usage batch written again after a write whose outcome was unknown is
-- marked (retry = 1), so that reading the day's usage counts it once even
-- when the first write arrived late (analytics.LoadUsage). An expand
-- migration: the release before writes no mark (0).
ALTER TABLE usage_log ADD COLUMN retry UInt8 DEFAULT 0;
