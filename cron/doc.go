// Package cron runs the background jobs: each job runs once at start,
// then on its schedule (robfig/cron, in UTC). A failed run is retried
// with exponential backoff; a job never runs twice at once; a panic in a
// job is recovered and reported as a failure. Every job's last success,
// last error and duration are kept for /readyz. The jobs that build the
// state are package builder's; the others (editions, exports, ranks,
// usage retention) are here. Every runs the short loops that keep an
// edge's copies fresh (the key list, the day's usage).
package cron
