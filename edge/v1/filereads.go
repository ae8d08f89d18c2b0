package v1

import (
	"hash/maphash"
	"sync"
	"time"
)

// fileReads is how a reader's range requests of one export file count
// against its limits: once a reading (docs/api-v1.md, The lake). The
// first request of a file counts as one call and opens a reading of it,
// which lasts readingWindow and covers up to twice the file's bytes plus
// readingSlack (a reader fetches a footer more than once); later requests
// of the file by the same key within it count nothing while they fit.
// Each request takes at least requestFloor bytes of it, whatever it
// answered (a HEAD, a 304 and a 416 send no body), and a reading covers
// at most maxRequests requests: a reading cannot become a way around the
// per-minute limit. A reading used up or past its window counts again. The memory is
// bounded: past maxReadings open readings, a request that would open one
// counts every time (nothing is given away for want of room).
type fileReads struct {
	mu     sync.Mutex
	seed   maphash.Seed
	open   map[uint64]reading
	swept  time.Time
	max    int
	window time.Duration
	slack  int64
}

// reading is an open reading: until when, and the bytes it still covers.
type reading struct {
	until    time.Time
	left     int64
	requests int
}

// The bounds of a reading.
const (
	readingWindow = 10 * time.Minute
	readingSlack  = 1 << 20
	maxReadings   = 100_000
	requestFloor  = 16 << 10
	maxRequests   = 256
)

func newFileReads() *fileReads {
	return &fileReads{seed: maphash.MakeSeed(), open: map[uint64]reading{}, max: maxReadings, window: readingWindow, slack: readingSlack}
}

func (r *fileReads) key(caller, file string) uint64 {
	var h maphash.Hash
	h.SetSeed(r.seed)
	h.WriteString(caller)
	h.WriteByte(0)
	h.WriteString(file)
	return h.Sum64()
}

// take reports whether caller's open reading of file (size bytes) covers
// an answer of n bytes, and takes them from it.
func (r *fileReads) take(caller, file string, n int64, now time.Time) bool {
	k := r.key(caller, file)
	r.mu.Lock()
	defer r.mu.Unlock()
	g, ok := r.open[k]
	n = max(n, requestFloor)
	if !ok || !now.Before(g.until) || g.left < n || g.requests >= maxRequests {
		return false
	}
	g.left -= n
	g.requests++
	r.open[k] = g
	return true
}

// start opens caller's reading of file (size bytes), counted now, of
// which an answer of n bytes is the first.
func (r *fileReads) start(caller, file string, size, n int64, now time.Time) {
	k := r.key(caller, file)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.open) >= r.max && now.Sub(r.swept) > time.Second {
		r.swept = now
		for k, g := range r.open {
			if !now.Before(g.until) {
				delete(r.open, k)
			}
		}
	}
	if _, ok := r.open[k]; !ok && len(r.open) >= r.max {
		return
	}
	r.open[k] = reading{until: now.Add(r.window), left: 2*size + r.slack - max(n, requestFloor), requests: 1}
}
