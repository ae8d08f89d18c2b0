// Package limits holds the API's limits: sliding-window counters per
// caller (calls a minute, invalid keys a minute, failed sign-ins), the
// daily usage every edge of a fleet shares through ClickHouse, and the
// small pool that bounds searches across every caller.
package limits
