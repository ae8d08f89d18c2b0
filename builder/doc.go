// Package builder builds and publishes the edge's state: the full load
// of every listing with its history, the incremental refresh of what
// changed, or, in a fleet, the state its leader built (Source); then the
// figures, built beside the state served, and one atomic publish. Each
// step's memory (the collector's settings, the room kept for a
// follower's next delta) is set by one plan and restored when the step
// ends. Its jobs run on the cron runner; it never runs a job itself.
package builder
