package replica

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/edge-stats/edge/views"
)

// A snapshot is a replica in a file: what one edge of a fleet loaded from
// ClickHouse, for the fleet's other edges to load instead (package
// cron/fleet). It is a zstd stream (with its checksum) of:
//
//	magic "EDGESNAP", format version (uvarint)
//	header: the Info's watermarks and load figures, the count of
//	        snapshots the figures report, the number of listings
//	blocks: listings (views.AppendListing) in store and id order, each
//	        block its count and byte length first; a count of 0 ends them
//
// A reader refuses another format version, listings out of order, and
// any length past its bound, so a damaged or hostile file is an error,
// never a replica with wrong listings or an allocation past its size.

// SnapshotFormat is the version of the snapshot format WriteSnapshot
// writes and ReadSnapshot reads. It changes whenever a listing's binary
// form or the header changes.
const SnapshotFormat = 1

const (
	snapshotMagic = "EDGESNAP"
	// snapshotBlock is the size a writer fills a block to.
	snapshotBlock = 1 << 20
	// maxSnapshotBlock bounds a block a reader accepts (a listing's form
	// is at most a few KiB; a block ends after the listing that passes
	// snapshotBlock).
	maxSnapshotBlock = 16 << 20
	// maxSnapshotListings bounds the listings a reader accepts.
	maxSnapshotListings = 1 << 28
)

// WriteSnapshot writes r, with snapshots (the count of readings its
// figures report), to w as a snapshot; it returns the uncompressed size.
func WriteSnapshot(w io.Writer, r *Replica, snapshots int64) (int64, error) {
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(true))
	if err != nil {
		return 0, fmt.Errorf("snapshot: %w", err)
	}
	info := r.Info()
	h := []byte(snapshotMagic)
	h = binary.AppendUvarint(h, SnapshotFormat)
	for _, t := range [...]time.Time{info.ListingsMark, info.ReadingsMark, info.ClimbAt, info.ChartTo, info.LoadedAt} {
		h = binary.AppendVarint(h, unixNano(t))
	}
	h = binary.AppendVarint(h, int64(info.LoadTime))
	h = binary.AppendUvarint(h, info.Generation)
	hist := byte(0)
	if info.HasHistory {
		hist = 1
	}
	h = append(h, hist)
	h = binary.AppendVarint(h, snapshots)
	h = binary.AppendUvarint(h, uint64(len(r.listings)))
	written := int64(0)
	put := func(b []byte) error {
		n, err := zw.Write(b)
		written += int64(n)
		return err
	}
	if err := put(h); err != nil {
		zw.Close()
		return written, fmt.Errorf("snapshot header: %w", err)
	}
	block := make([]byte, 0, snapshotBlock+64<<10)
	var frame [2 * binary.MaxVarintLen64]byte
	flush := func(count int) error {
		f := binary.AppendUvarint(frame[:0], uint64(count))
		f = binary.AppendUvarint(f, uint64(len(block)))
		if err := put(f); err != nil {
			return err
		}
		err := put(block)
		block = block[:0]
		return err
	}
	count := 0
	for i := range r.listings {
		block = views.AppendListing(block, &r.listings[i])
		count++
		if len(block) >= snapshotBlock {
			if err := flush(count); err != nil {
				zw.Close()
				return written, fmt.Errorf("snapshot listings: %w", err)
			}
			count = 0
		}
	}
	if count > 0 {
		if err := flush(count); err != nil {
			zw.Close()
			return written, fmt.Errorf("snapshot listings: %w", err)
		}
	}
	if err := put([]byte{0}); err != nil {
		zw.Close()
		return written, fmt.Errorf("snapshot end: %w", err)
	}
	if err := zw.Close(); err != nil {
		return written, fmt.Errorf("snapshot: %w", err)
	}
	return written, nil
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// ErrSnapshotFormat says a snapshot is of a format version this edge
// does not read (written by an edge of another release).
var ErrSnapshotFormat = errors.New("snapshot of another format version")

// ReadSnapshot reads a snapshot (WriteSnapshot) from rd and returns its
// replica, with generation gen, and the count of readings its figures
// report. prev, when not nil, is the replica the new one replaces: the
// new one shares prev's unchanged strings and text, as a reload does.
// At most maxBytes uncompressed bytes are read (0: no bound).
func ReadSnapshot(rd io.Reader, gen uint64, prev *Replica, maxBytes int64) (*Replica, int64, error) {
	zr, err := zstd.NewReader(rd, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(32<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("snapshot: %w", err)
	}
	defer zr.Close()
	var src io.Reader = zr
	if maxBytes > 0 {
		src = &limited{r: zr, left: maxBytes}
	}
	br := bufio.NewReaderSize(src, 64<<10)
	r, snapshots, err := readSnapshot(br, gen, prev)
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

func readSnapshot(br *bufio.Reader, gen uint64, prev *Replica) (*Replica, int64, error) {
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
	if format != SnapshotFormat {
		return nil, 0, fmt.Errorf("%w: format %d, this edge reads %d", ErrSnapshotFormat, format, SnapshotFormat)
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
	// Room for the listings grows with what arrives, not with what the
	// header says, so that a header cannot make the reader allocate.
	listings := make([]views.Listing, 0, min(n, 1<<16))
	in := NewInterner()
	dec := views.ListingDecoder{Intern: in.String, InternList: in.Strings}
	var old []views.Listing
	if prev != nil {
		old = prev.listings
	}
	var block []byte
	for {
		count, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, 0, fmt.Errorf("block: %w", err)
		}
		if count == 0 {
			break
		}
		size, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, 0, fmt.Errorf("block: %w", err)
		}
		if size > maxSnapshotBlock || count > size || uint64(len(listings))+count > n {
			return nil, 0, fmt.Errorf("block of %d listings in %d bytes after %d of %d listings", count, size, len(listings), n)
		}
		if uint64(cap(block)) < size {
			block = make([]byte, size)
		}
		b := block[:size]
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, 0, fmt.Errorf("block: %w", err)
		}
		for range count {
			listings = append(listings, views.Listing{})
			l := &listings[len(listings)-1]
			if b, err = dec.Decode(b, l); err != nil {
				return nil, 0, fmt.Errorf("listing %d: %w", len(listings), err)
			}
			if !l.Store.Valid() {
				return nil, 0, fmt.Errorf("listing %d: store %d", len(listings), l.Store)
			}
			if k := len(listings); k > 1 && compareKey(&listings[k-2], l) >= 0 {
				return nil, 0, fmt.Errorf("listing %d (%s/%s) is not after %s/%s", k, l.Store, l.ID, listings[k-2].Store, listings[k-2].ID)
			}
			// Share the replaced replica's strings: both are in key order.
			for len(old) > 0 && compareKey(&old[0], l) < 0 {
				old = old[1:]
			}
			if len(old) > 0 && compareKey(&old[0], l) == 0 {
				l.ShareStrings(&old[0])
			}
		}
		if len(b) != 0 {
			return nil, 0, fmt.Errorf("block of %d listings has %d bytes past them", count, len(b))
		}
	}
	if uint64(len(listings)) != n {
		return nil, 0, fmt.Errorf("%d listings of the %d its header says", len(listings), n)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, 0, errors.New("bytes past the end")
	}
	return newSortedFrom(listings, info, prev), snapshots, nil
}
