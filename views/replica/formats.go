package replica

import (
	"fmt"
	"slices"
)

// Formats are the format versions of snapshots and deltas this release
// reads and writes, newest first. A fleet's leader answers each follower
// in the newest format the follower says it reads (package fleet/exchange),
// so that two adjacent releases serve in one fleet in either order: a
// release that changes the format keeps reading and writing the one
// before for one release (docs/operations.md, Upgrades).
var Formats = []uint64{SnapshotFormat}

// LegacyFormat is the format a follower that names none reads: the
// releases before followers named theirs read format 3 only.
const LegacyFormat = 3

// Reads reports whether this release reads and writes format.
func Reads(format uint64) bool { return slices.Contains(Formats, format) }

// checkFormat returns an error wrapping ErrSnapshotFormat when this
// release does not read format.
func checkFormat(format uint64) error {
	if !Reads(format) {
		return fmt.Errorf("%w: format %d, this edge reads %v", ErrSnapshotFormat, format, Formats)
	}
	return nil
}
