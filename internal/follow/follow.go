// Package follow holds what a fleet's sources of built work (the
// leader's state and its exports, package fleet/exchange) and the jobs
// that follow them (packages builder and cron) share: the error that
// tells a job to build from ClickHouse itself. It imports nothing of the
// project, so that a source and its follower depend on it, not on each
// other or on the job runner.
package follow

import "errors"

// ErrNoSource says a fleet's source has nothing to give this edge (it
// leads, there is no leader, or the leader is out of reach): a job that
// follows a source (the state builder's, the exports') builds from
// ClickHouse itself.
var ErrNoSource = errors.New("no fleet state to follow")
