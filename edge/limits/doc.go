// Package limits holds the API's limits: each caller's calls of the last
// minute and of the UTC day (the day's shared by every edge of a fleet
// through a Store: ClickHouse, or memory for a lone edge), kept together
// under one lock per caller; sliding-window counters for invalid keys and
// failed sign-ins; fair use per address for the legacy API; and the small
// pool that bounds searches across every caller.
package limits
