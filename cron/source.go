package cron

import "errors"

// ErrNoSource says a fleet's source has nothing to give this edge (it
// leads, there is no leader, or the leader is out of reach): a job that
// follows a source (the state builder's, the exports') builds from
// ClickHouse itself.
var ErrNoSource = errors.New("no fleet state to follow")
