// Package cron runs the background jobs that rebuild the edge's in-memory
// state: each job runs once at start, then on its schedule (robfig/cron, in
// UTC). A failed run is retried with exponential backoff; a job never runs
// twice at once; a panic in a job is recovered and reported as a failure.
// Every job's last success, last error and duration are kept for /readyz.
// Every runs the short loops that keep an edge's copies fresh (the key
// list, the day's usage).
package cron
