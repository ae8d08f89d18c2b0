package replica

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
)

// ReadOptions says how ReadSnapshot reads a snapshot.
type ReadOptions struct {
	// Generation is the generation of the replica read.
	Generation uint64
	// Prev, when not nil, is the replica the new one replaces: the new
	// one shares Prev's unchanged strings and text, as a reload does.
	Prev *Replica
	// MaxBytes bounds the uncompressed bytes read (0: no bound).
	MaxBytes int64
	// Counted, when set, is given the number of listings once a whole
	// snapshot's header is read, before any listing (a caller sets its
	// collector for a heap that grows by that many). A delta's read
	// (ReadDelta) does not call it: its caller can tell the two apart.
	Counted func(n int)
	// Delta, when set, is given the number of listings of the state a
	// delta gives once its header is read and checked, before its
	// listings are read and applied (a follower sets its collector for
	// the apply and the build after it). ReadSnapshot does not call it.
	Delta func(n int)
	// NoWhole says the caller has no room for a whole state beside the
	// one it holds (Prev): a source gives what changed, or nothing
	// (builder.ErrNoRoom). A delta shares the unchanged listings'
	// strings and histories, so it fits where a whole state would not.
	NoWhole bool
	// Spare, when not nil, is room made ahead for a delta's listings:
	// the delta's apply takes it if it has room for them (see Spare). A
	// whole snapshot's read leaves it alone.
	Spare *Spare
}

// ReadSnapshot reads a snapshot (WriteSnapshot) from rd and returns its
// replica and the count of readings its figures report. Its blocks are
// decoded on every core.
func ReadSnapshot(rd io.Reader, o ReadOptions) (*Replica, int64, error) {
	zr, err := zstd.NewReader(rd, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(32<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("snapshot: %w", err)
	}
	defer zr.Close()
	var src io.Reader = zr
	if o.MaxBytes > 0 {
		src = &limited{r: zr, left: o.MaxBytes}
	}
	br := bufio.NewReaderSize(src, 64<<10)
	r, snapshots, err := readSnapshot(br, o)
	if err != nil {
		return nil, 0, fmt.Errorf("snapshot: %w", err)
	}
	return r, snapshots, nil
}

// limited is io.LimitReader that says so when the limit is passed.
type limited struct {
	r    io.Reader
	left int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left <= 0 {
		// At the bound: the stream must end here.
		var one [1]byte
		if n, err := l.r.Read(one[:]); n == 0 && err == io.EOF {
			return 0, io.EOF
		}
		return 0, errors.New("larger than the bound on a snapshot")
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

func readSnapshot(br *bufio.Reader, o ReadOptions) (*Replica, int64, error) {
	gen, prev := o.Generation, o.Prev
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(br, magic); err != nil {
		return nil, 0, fmt.Errorf("header: %w", err)
	}
	if string(magic) != snapshotMagic {
		return nil, 0, errors.New("not a snapshot (no EDGESNAP at its start)")
	}
	format, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, 0, fmt.Errorf("header: %w", err)
	}
	if err := checkFormat(format); err != nil {
		return nil, 0, err
	}
	var times [5]int64
	for i := range times {
		if times[i], err = binary.ReadVarint(br); err != nil {
			return nil, 0, fmt.Errorf("header: %w", err)
		}
	}
	loadTime, err := binary.ReadVarint(br)
	if err != nil {
		return nil, 0, fmt.Errorf("header: %w", err)
	}
	if _, err := binary.ReadUvarint(br); err != nil { // the writer's generation: its own
		return nil, 0, fmt.Errorf("header: %w", err)
	}
	hist, err := br.ReadByte()
	if err != nil {
		return nil, 0, fmt.Errorf("header: %w", err)
	}
	snapshots, err := binary.ReadVarint(br)
	if err != nil {
		return nil, 0, fmt.Errorf("header: %w", err)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, 0, fmt.Errorf("header: %w", err)
	}
	if n > maxSnapshotListings || hist > 1 {
		return nil, 0, fmt.Errorf("header: %d listings, history %d", n, hist)
	}
	info := Info{Generation: gen, ListingsMark: fromUnixNano(times[0]), ReadingsMark: fromUnixNano(times[1]),
		ClimbAt: fromUnixNano(times[2]), ChartTo: fromUnixNano(times[3]), LoadedAt: fromUnixNano(times[4]),
		LoadTime: time.Duration(loadTime), HasHistory: hist == 1}
	if o.Counted != nil {
		o.Counted(int(n))
	}
	listings, err := readBlocks(br, n, prev)
	if err != nil {
		return nil, 0, err
	}
	if uint64(len(listings)) != n {
		return nil, 0, fmt.Errorf("%d listings of the %d its header says", len(listings), n)
	}
	r := newSortedFrom(listings, info, prev)
	log, err := readLastLog(br, r)
	if err != nil {
		return nil, 0, err
	}
	return r.WithChanges(log), snapshots, nil
}

// readLastLog reads the change log that ends a snapshot or a delta, its
// ids shared with r's listings and its values interned, and checks that
// nothing follows it.
func readLastLog(br *bufio.Reader, r *Replica) (*changes.Log, error) {
	in := NewInterner()
	log, err := changes.ReadLog(br, func(s views.Store, str string, value bool) string {
		if !value {
			if l := r.Lookup(s, str); l != nil {
				return l.ID
			}
		}
		return in.String(str)
	})
	if err != nil {
		return nil, err
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, errors.New("bytes past the end")
	}
	return log, nil
}

// A block of a snapshot being read: its bytes, and where its listings go.
type snapBlock struct {
	buf   []byte
	dst   []views.Listing
	start int // the index of its first listing
}

// blockReader decodes a snapshot's blocks on every core: one goroutine
// reads the stream (the zstd decoding) and hands each block to a worker,
// which decodes its listings into their place. The listings' room grows
// with what arrives, not with what the header says, so that a header
// cannot make the reader allocate; it grows only while no worker writes
// into it.
type blockReader struct {
	prev     []views.Listing // the replaced replica's listings, or nil
	bufs     chan []byte     // the blocks' buffers: a worker's and one being read
	work     chan snapBlock
	inflight sync.WaitGroup // blocks handed out and not yet decoded
	workers  sync.WaitGroup

	mu     sync.Mutex
	err    error
	errAt  int // the index of the listing err is about: the first one wins
	failed bool
}

// readBlocks reads the blocks of a snapshot of n listings from br, with
// prev (or nil) the replica they replace, and returns the listings.
func readBlocks(br *bufio.Reader, n uint64, prev *Replica) ([]views.Listing, error) {
	workers := max(1, runtime.GOMAXPROCS(0))
	b := &blockReader{bufs: make(chan []byte, workers+1), work: make(chan snapBlock)}
	if prev != nil {
		b.prev = prev.listings
	}
	for range workers + 1 {
		b.bufs <- nil
	}
	for range workers {
		b.workers.Add(1)
		go b.decodeBlocks()
	}
	listings, starts, err := b.read(br, n)
	close(b.work)
	b.workers.Wait()
	if err != nil {
		return nil, err
	}
	if b.err != nil {
		return nil, b.err
	}
	// Each worker checked the order inside its blocks; here, across them.
	for _, k := range starts {
		if k > 0 && compareKey(&listings[k-1], &listings[k]) >= 0 {
			l := &listings[k]
			return nil, fmt.Errorf("listing %d (%s/%s) is not after %s/%s", k+1, l.Store, l.ID, listings[k-1].Store, listings[k-1].ID)
		}
	}
	return listings, nil
}

// read reads the blocks and hands them to the workers; it returns the
// listings' room and where each block started.
func (b *blockReader) read(br *bufio.Reader, n uint64) ([]views.Listing, []int, error) {
	var (
		listings []views.Listing
		starts   []int
	)
	for {
		count, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, nil, fmt.Errorf("block: %w", err)
		}
		if count == 0 {
			break
		}
		size, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, nil, fmt.Errorf("block: %w", err)
		}
		if size > maxSnapshotBlock || count > size || uint64(len(listings))+count > n {
			return nil, nil, fmt.Errorf("block of %d listings in %d bytes after %d of %d listings", count, size, len(listings), n)
		}
		buf := <-b.bufs
		if uint64(cap(buf)) < size {
			buf = make([]byte, size)
		}
		buf = buf[:size]
		if _, err := io.ReadFull(br, buf); err != nil {
			b.bufs <- buf
			return nil, nil, fmt.Errorf("block: %w", err)
		}
		if b.stopped() {
			b.bufs <- buf
			break // a worker found a damaged block: that is the error
		}
		k, c := len(listings), int(count)
		if k+c > cap(listings) {
			// Grow only once no worker writes into the old room. The
			// room doubles until an eighth of the listings the header
			// says have arrived, then takes them all: a header cannot
			// make the reader allocate more than eight times what
			// arrived, and the listings are copied a quarter of a time
			// in all, where doubling all the way copied each once (for
			// 1M synthetic listings of 448 B, a third of the read).
			b.inflight.Wait()
			more := max(k, 1<<16)
			if uint64(k+c)*8 >= n {
				more = int(n) - k
			}
			listings = slices.Grow(listings, max(c, min(more, int(n)-k)))
		}
		listings = listings[:k+c]
		starts = append(starts, k)
		b.inflight.Add(1)
		b.work <- snapBlock{buf: buf, dst: listings[k : k+c : k+c], start: k}
	}
	b.inflight.Wait()
	return listings, starts, nil
}

// decodeBlocks is a worker: it decodes the blocks handed to it, with an
// interner of its own.
func (b *blockReader) decodeBlocks() {
	defer b.workers.Done()
	in := NewInterner()
	dec := views.ListingDecoder{Intern: in.String, InternList: in.Strings}
	for blk := range b.work {
		if !b.stopped() {
			if at, err := b.decode(&dec, blk); err != nil {
				b.fail(at, err)
			}
		}
		b.bufs <- blk.buf
		b.inflight.Done()
	}
}

// decode decodes one block into its listings, checks their order, and
// shares the replaced replica's strings; on a damaged block it returns
// the index of the listing at fault.
func (b *blockReader) decode(dec *views.ListingDecoder, blk snapBlock) (int, error) {
	rest := blk.buf
	for i := range blk.dst {
		l, at := &blk.dst[i], blk.start+i
		var err error
		if rest, err = dec.Decode(rest, l); err != nil {
			return at, fmt.Errorf("listing %d: %w", at+1, err)
		}
		if !l.Store.Valid() {
			return at, fmt.Errorf("listing %d: store %d", at+1, l.Store)
		}
		if i > 0 && compareKey(&blk.dst[i-1], l) >= 0 {
			return at, fmt.Errorf("listing %d (%s/%s) is not after %s/%s", at+1, l.Store, l.ID, blk.dst[i-1].Store, blk.dst[i-1].ID)
		}
	}
	if len(rest) != 0 {
		return blk.start + len(blk.dst), fmt.Errorf("block of %d listings has %d bytes past them", len(blk.dst), len(rest))
	}
	// Share the replaced replica's strings: both are in key order.
	old := b.prev
	if len(old) > 0 && len(blk.dst) > 0 {
		j, _ := slices.BinarySearchFunc(old, &blk.dst[0], func(o views.Listing, l *views.Listing) int { return compareKey(&o, l) })
		old = old[j:]
	}
	for i := range blk.dst {
		l := &blk.dst[i]
		for len(old) > 0 && compareKey(&old[0], l) < 0 {
			old = old[1:]
		}
		if len(old) > 0 && compareKey(&old[0], l) == 0 {
			l.ShareStrings(&old[0])
		}
	}
	return 0, nil
}

func (b *blockReader) fail(at int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.failed || at < b.errAt {
		b.err, b.errAt, b.failed = err, at, true
	}
}

func (b *blockReader) stopped() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.failed
}
