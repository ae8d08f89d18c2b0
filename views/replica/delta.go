package replica

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/klauspost/compress/zstd"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
)

// A delta is what changed from one state (its base) to a later one: what
// a fleet's leader sends a follower that holds the base, in place of the
// whole state (package fleet/exchange). It is a zstd stream (with its
// checksum) of:
//
//	magic "EDGEDELT", format version (uvarint: SnapshotFormat, whose
//	        binary form of a listing it shares)
//	the base's digest and the result's (Digest, 32 bytes each)
//	header: the result's, as a snapshot's (watermarks, load figures,
//	        count of readings, number of listings)
//	removed: a count, then each key (store byte, id) in key order
//	changed: a count, then blocks of the listings added or changed, in
//	        key order, as a snapshot's
//	changes: a byte (0: the base's change log extended by the log that
//	        follows, changes.Log.Extend; 1: the log that follows, whole),
//	        then a log (changes.WriteLog)
//
// A reader refuses a delta of another base, keys out of order, a removed
// key the base lacks, and any length past its bound; and after applying
// it, a result whose digest is not the one the delta names. So a delta
// applied gives exactly the state its leader holds, or an error.

const (
	deltaMagic = "EDGEDELT"
	// maxKeyBytes bounds a removed listing's id a reader accepts.
	maxKeyBytes = 1 << 12
)

// DeltaStats says what a delta holds.
type DeltaStats struct {
	Changed  int   // listings added or changed
	Removed  int   // listings removed
	Raw      int64 // uncompressed bytes written
	WholeLog bool  // the change log is sent whole, not as its new changes
}

// WriteDelta writes to w what changed from base (of digest baseDigest)
// to r, with snapshots (the count of readings r's figures report) and
// digest, r's (DigestOf).
func WriteDelta(w io.Writer, base *Replica, baseDigest Digest, r *Replica, snapshots int64, digest Digest) (DeltaStats, error) {
	var st DeltaStats
	changed, removed := diffListings(base.listings, r.listings)
	st.Changed, st.Removed = len(changed), len(removed)
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(true))
	if err != nil {
		return st, fmt.Errorf("delta: %w", err)
	}
	put := func(b []byte) error {
		n, err := zw.Write(b)
		st.Raw += int64(n)
		return err
	}
	fail := func(what string, err error) (DeltaStats, error) {
		zw.Close()
		return st, fmt.Errorf("delta %s: %w", what, err)
	}
	h := []byte(deltaMagic)
	h = binary.AppendUvarint(h, SnapshotFormat)
	h = append(h, baseDigest[:]...)
	h = append(h, digest[:]...)
	h = append(h, infoBytes(r.info, snapshots, len(r.listings))...)
	h = binary.AppendUvarint(h, uint64(len(removed)))
	for _, l := range removed {
		h = append(h, byte(l.Store))
		h = appendString(h, l.ID)
	}
	h = binary.AppendUvarint(h, uint64(len(changed)))
	if err := put(h); err != nil {
		return fail("header", err)
	}
	block := make([]byte, 0, snapshotBlock+64<<10)
	var frame [2 * binary.MaxVarintLen64]byte
	count := 0
	flush := func() error {
		f := binary.AppendUvarint(frame[:0], uint64(count))
		f = binary.AppendUvarint(f, uint64(len(block)))
		if err := put(f); err != nil {
			return err
		}
		err := put(block)
		block, count = block[:0], 0
		return err
	}
	for _, i := range changed {
		block = views.AppendListing(block, &r.listings[i])
		count++
		if len(block) >= snapshotBlock {
			if err := flush(); err != nil {
				return fail("listings", err)
			}
		}
	}
	if count > 0 {
		if err := flush(); err != nil {
			return fail("listings", err)
		}
	}
	if err := put([]byte{0}); err != nil {
		return fail("listings", err)
	}
	log := r.changes.Tail(base.changes.Newest())
	if !base.changes.Extend(log).Equal(r.changes) {
		log, st.WholeLog = r.changes, true
	}
	mode := byte(0)
	if st.WholeLog {
		mode = 1
	}
	if err := put([]byte{mode}); err != nil {
		return fail("changes", err)
	}
	if err := changes.WriteLog(writerFunc(put), log); err != nil {
		return fail("changes", err)
	}
	if err := zw.Close(); err != nil {
		return st, fmt.Errorf("delta: %w", err)
	}
	return st, nil
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// diffListings returns the indexes in next of the listings added or
// changed since prev, and prev's listings that next no longer holds;
// both are sorted by key. The listings are cut in a part a core, each
// part's first key found in prev by binary search, and the parts
// compared at once: a comparison reads both states' memory (4.4 GB at
// 5M listings), which one core took seconds over.
func diffListings(prev, next []views.Listing) (changed []int32, removed []*views.Listing) {
	parts := min(runtime.GOMAXPROCS(0), max(1, len(next)/diffPartMin))
	type part struct {
		changed []int32
		removed []*views.Listing
	}
	out := make([]part, parts)
	var wg sync.WaitGroup
	for p := range parts {
		// Part p holds next[j0:j1] and the prev listings of keys from
		// next[j0]'s up to next[j1]'s (the last part: to the end).
		j0, j1 := len(next)*p/parts, len(next)*(p+1)/parts
		at := func(j int) int {
			switch {
			case j == 0:
				return 0
			case j == len(next):
				return len(prev)
			}
			return sort.Search(len(prev), func(i int) bool { return compareKey(&prev[i], &next[j]) >= 0 })
		}
		i0, i1 := at(j0), at(j1)
		wg.Go(func() {
			c, r := diffRange(prev, next, i0, i1, j0, j1)
			out[p] = part{c, r}
		})
	}
	wg.Wait()
	for _, p := range out {
		changed, removed = append(changed, p.changed...), append(removed, p.removed...)
	}
	return changed, removed
}

// diffPartMin is the fewest listings diffListings gives a core (tests
// lower it).
var diffPartMin = 1 << 16

// diffRange is diffListings of prev[i:iEnd] and next[j:jEnd].
func diffRange(prev, next []views.Listing, i, iEnd, j, jEnd int) (changed []int32, removed []*views.Listing) {
	var a, b []byte
	for i < iEnd || j < jEnd {
		c := 1
		switch {
		case i == iEnd:
			c = 1
		case j == jEnd:
			c = -1
		default:
			c = compareKey(&prev[i], &next[j])
		}
		switch {
		case c < 0:
			removed = append(removed, &prev[i])
			i++
		case c > 0:
			changed = append(changed, int32(j))
			j++
		default:
			// A listing a refresh did not touch is a copy of the old one
			// (the same strings): its memory is the same. Otherwise the
			// binary forms tell.
			if !sameMemory(&prev[i], &next[j]) {
				a, b = views.AppendListing(a[:0], &prev[i]), views.AppendListing(b[:0], &next[j])
				if !bytes.Equal(a, b) {
					changed = append(changed, int32(j))
				}
			}
			i++
			j++
		}
	}
	return changed, removed
}

// sameMemory reports whether a and b hold the same bytes: the same
// figures and the same strings (immutable) at the same addresses, so
// the same listing.
func sameMemory(a, b *views.Listing) bool {
	const size = unsafe.Sizeof(views.Listing{})
	return *(*[size]byte)(unsafe.Pointer(a)) == *(*[size]byte)(unsafe.Pointer(b))
}

// ErrDeltaBase says a delta does not apply to the state it was given:
// its base is another.
var ErrDeltaBase = errors.New("delta of another base")

// ReadDelta reads a delta (WriteDelta) from rd and applies it to base,
// whose digest is baseDigest; it returns the new replica (of generation
// o.Generation, sharing base's unchanged listings, strings and text), the
// count of readings its figures report, and its digest, which it checked
// against the one the delta names. o.Prev is ignored: base is the
// replica the new one replaces.
func ReadDelta(rd io.Reader, base *Replica, baseDigest Digest, o ReadOptions) (*Replica, int64, Digest, error) {
	zr, err := zstd.NewReader(rd, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(32<<20))
	if err != nil {
		return nil, 0, Digest{}, fmt.Errorf("delta: %w", err)
	}
	defer zr.Close()
	var src io.Reader = zr
	if o.MaxBytes > 0 {
		src = &limited{r: zr, left: o.MaxBytes}
	}
	r, snapshots, d, err := readDelta(bufio.NewReaderSize(src, 64<<10), base, baseDigest, o)
	if err != nil {
		return nil, 0, Digest{}, fmt.Errorf("delta: %w", err)
	}
	return r, snapshots, d, nil
}

func readDelta(br *bufio.Reader, base *Replica, baseDigest Digest, o ReadOptions) (*Replica, int64, Digest, error) {
	var want Digest
	head := make([]byte, len(deltaMagic))
	if _, err := io.ReadFull(br, head); err != nil {
		return nil, 0, want, fmt.Errorf("header: %w", err)
	}
	if string(head) != deltaMagic {
		return nil, 0, want, errors.New("not a delta (no EDGEDELT at its start)")
	}
	format, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, 0, want, fmt.Errorf("header: %w", err)
	}
	if err := checkFormat(format); err != nil {
		return nil, 0, want, err
	}
	var from Digest
	if _, err := io.ReadFull(br, from[:]); err != nil {
		return nil, 0, want, fmt.Errorf("header: %w", err)
	}
	if from != baseDigest {
		return nil, 0, want, fmt.Errorf("%w: it applies to %x, this edge holds %x", ErrDeltaBase, from[:8], baseDigest[:8])
	}
	if _, err := io.ReadFull(br, want[:]); err != nil {
		return nil, 0, want, fmt.Errorf("header: %w", err)
	}
	var v [7]int64
	for i := range v {
		if v[i], err = binary.ReadVarint(br); err != nil {
			return nil, 0, want, fmt.Errorf("header: %w", err)
		}
	}
	hist, err := br.ReadByte()
	if err != nil {
		return nil, 0, want, fmt.Errorf("header: %w", err)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, 0, want, fmt.Errorf("header: %w", err)
	}
	if n > maxSnapshotListings || hist > 1 {
		return nil, 0, want, fmt.Errorf("header: %d listings, history %d", n, hist)
	}
	info := Info{Generation: o.Generation, ListingsMark: fromUnixNano(v[0]), ReadingsMark: fromUnixNano(v[1]),
		ClimbAt: fromUnixNano(v[2]), ChartTo: fromUnixNano(v[3]), LoadedAt: fromUnixNano(v[4]),
		LoadTime: time.Duration(v[5]), HasHistory: hist == 1}
	snapshots := v[6]
	removed, err := readRemoved(br, base)
	if err != nil {
		return nil, 0, want, err
	}
	count, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, 0, want, fmt.Errorf("header: %w", err)
	}
	// The counts bound nothing read so far: check them against each
	// other and the base before making room for them.
	if count > n || n > uint64(base.Len()-len(removed))+count || uint64(base.Len()-len(removed)) > n {
		return nil, 0, want, fmt.Errorf("%d listings removed and %d changed of the %d the base holds cannot give %d", len(removed), count, base.Len(), n)
	}
	if o.Delta != nil {
		o.Delta(int(n))
	}
	changed, err := readBlocks(br, count, base)
	if err != nil {
		return nil, 0, want, err
	}
	if uint64(len(changed)) != count {
		return nil, 0, want, fmt.Errorf("%d listings changed of the %d its header says", len(changed), count)
	}
	listings, a, ok := applyListings(base.listings, removed, changed, int(n), o.Spare.take(int(n)))
	if !ok || uint64(len(listings)) != n {
		return nil, 0, want, fmt.Errorf("%d listings after it, of the %d its header says", len(listings), n)
	}
	listings = slices.Clip(listings) // a spare's room past them is no state's
	mode, err := br.ReadByte()
	if err != nil || mode > 1 {
		return nil, 0, want, fmt.Errorf("changes: mode %d: %v", mode, err)
	}
	r := newSortedFrom(listings, info, base)
	log, err := readLastLog(br, r)
	if err != nil {
		return nil, 0, want, err
	}
	if mode == 0 {
		log = base.changes.Extend(log)
	}
	r = r.WithChanges(log)
	r.applied = appliedFrom(base, a)
	if got := DigestOf(r, snapshots); got != want {
		return nil, 0, want, fmt.Errorf("the state it gives has digest %x, the delta names %x", got[:8], want[:8])
	}
	return r, snapshots, want, nil
}

// readRemoved reads the keys a delta removes: in key order, each a
// listing of base. It returns their indexes in base.
func readRemoved(br *bufio.Reader, base *Replica) ([]int, error) {
	count, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, fmt.Errorf("removed: %w", err)
	}
	if count > uint64(base.Len()) {
		return nil, fmt.Errorf("removed: %d listings of the base's %d", count, base.Len())
	}
	out := make([]int, 0, count)
	var buf []byte
	for k := range count {
		s, err := br.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("removed %d: %w", k, err)
		}
		size, err := binary.ReadUvarint(br)
		if err != nil || size > maxKeyBytes {
			return nil, fmt.Errorf("removed %d: an id of %d bytes: %v", k, size, err)
		}
		buf = slices.Grow(buf[:0], int(size))[:size]
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, fmt.Errorf("removed %d: %w", k, err)
		}
		i := base.indexOf(views.Store(s), string(buf))
		if i < 0 || (len(out) > 0 && i <= out[len(out)-1]) {
			return nil, fmt.Errorf("removed %d: %d/%q is not a listing of the base after the one before", k, s, buf)
		}
		out = append(out, i)
	}
	return out, nil
}

// applyListings returns base's listings less those at the indexes
// removed, with changed (in key order) added or in place of the ones
// of the same keys, and how it made them (Applied); ok is false when that
// would be more than n. Each changed listing's place is found by binary
// search and the unchanged runs between are copied whole: a refresh
// changes a few listings in a thousand, and a listing-by-listing merge
// compared every key. The listings are written into spare when it is not
// nil (its capacity at least n).
func applyListings(base []views.Listing, removed []int, changed []views.Listing, n int, spare []views.Listing) (out []views.Listing, a Applied, ok bool) {
	if out = spare[:0]; out == nil {
		out = make([]views.Listing, 0, n)
	}
	a.Added = make([]int32, 0, len(changed))
	a.Dropped = make([]int32, 0, len(removed)+len(changed))
	// run appends base[from:to] less the removed indexes in it, and drops
	// those before to from removed.
	run := func(from, to int) bool {
		for len(removed) > 0 && removed[0] < to {
			if r := removed[0]; r >= from {
				if len(out)+r-from > n {
					return false
				}
				out = append(out, base[from:r]...)
				a.Dropped = append(a.Dropped, int32(r))
				from = r + 1
			}
			removed = removed[1:]
		}
		if len(out)+to-from > n {
			return false
		}
		out = append(out, base[from:to]...)
		return true
	}
	i := 0 // the next base listing to copy
	for j := range changed {
		c := &changed[j]
		pos := i + sort.Search(len(base)-i, func(k int) bool { return compareKey(&base[i+k], c) >= 0 })
		found := pos < len(base) && compareKey(&base[pos], c) == 0
		if !run(i, pos) || len(out) == n {
			return nil, Applied{}, false
		}
		a.Added = append(a.Added, int32(len(out)))
		out = append(out, *c)
		if i = pos; found {
			a.Dropped = append(a.Dropped, int32(pos))
			i++ // replaced
		}
	}
	if !run(i, len(base)) {
		return nil, Applied{}, false
	}
	return out, a, true
}
