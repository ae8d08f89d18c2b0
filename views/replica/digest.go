package replica

import (
	"crypto/sha256"
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
)

// A Digest names a state by its content: the SHA-256 of its Info's
// watermarks and load figures (not its generation, which is each edge's
// own), the count of readings its figures report, every listing's binary
// form in key order, and its change log. Two edges holding states of one
// digest serve the same figures, bytes and ETags. A fleet's follower
// names the state it holds by its digest, and checks that a state it
// built from deltas has the digest its leader signed (WriteDelta).
type Digest [sha256.Size]byte

// digestGroup is how many listings are hashed together: the groups'
// hashes are computed on every core, then hashed in order.
const digestGroup = 8192

// DigestOf returns the digest of r with snapshots, the count of readings
// its figures report.
func DigestOf(r *Replica, snapshots int64) Digest {
	groups := make([][sha256.Size]byte, (len(r.listings)+digestGroup-1)/digestGroup)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(1, len(groups))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				g := int(next.Add(1)) - 1
				if g >= len(groups) {
					return
				}
				h := sha256.New()
				for i := g * digestGroup; i < min(len(r.listings), (g+1)*digestGroup); i++ {
					buf = views.AppendListing(buf[:0], &r.listings[i])
					h.Write(binary.AppendUvarint(nil, uint64(len(buf))))
					h.Write(buf)
				}
				h.Sum(groups[g][:0])
			}
		}()
	}
	wg.Wait()
	h := sha256.New()
	h.Write(infoBytes(r.info, snapshots, len(r.listings)))
	for i := range groups {
		h.Write(groups[i][:])
	}
	changes.WriteLog(h, r.changes) // a hash's Write never fails
	var d Digest
	h.Sum(d[:0])
	return d
}

// infoBytes is the binary form of what a state's header says besides
// its generation: its watermarks, load figures, history flag, count of
// readings and of listings.
func infoBytes(info Info, snapshots int64, n int) []byte {
	var b []byte
	for _, t := range [...]int64{unixNano(info.ListingsMark), unixNano(info.ReadingsMark), unixNano(info.ClimbAt),
		unixNano(info.ChartTo), unixNano(info.LoadedAt), int64(info.LoadTime), snapshots} {
		b = binary.AppendVarint(b, t)
	}
	hist := byte(0)
	if info.HasHistory {
		hist = 1
	}
	b = append(b, hist)
	return binary.AppendUvarint(b, uint64(n))
}
