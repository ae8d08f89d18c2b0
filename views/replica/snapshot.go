package replica

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
)

// A snapshot is a replica in a file: what one edge of a fleet loaded from
// ClickHouse, for the fleet's other edges to load instead (package
// fleet/exchange). It is a zstd stream (with its checksum) of:
//
//	magic "EDGESNAP", format version (uvarint)
//	header: the Info's watermarks and load figures, the count of
//	        snapshots the figures report, the number of listings
//	blocks: listings (views.AppendListing) in store and id order, each
//	        block its count and byte length first; a count of 0 ends them
//	changes: the listings' change log (changes.WriteLog)
//
// A reader refuses another format version, listings out of order, and
// any length past its bound, so a damaged or hostile file is an error,
// never a replica with wrong listings or an allocation past its size.

// SnapshotFormat is the version of the snapshot format WriteSnapshot
// writes and ReadSnapshot reads. It changes whenever a listing's binary
// form or the header changes, and with the digest (DigestOf) that names
// a state and that deltas are checked by: 3 hashes the listings in
// groups their keys choose (2 hashed them 8,192 at a time).
const SnapshotFormat = 3

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
// figures report), to w as a snapshot of the newest format; it returns
// the uncompressed size.
func WriteSnapshot(w io.Writer, r *Replica, snapshots int64) (int64, error) {
	return WriteSnapshotAs(w, r, snapshots, SnapshotFormat)
}

// WriteSnapshotAs is WriteSnapshot in format, one of Formats.
func WriteSnapshotAs(w io.Writer, r *Replica, snapshots int64, format uint64) (int64, error) {
	if err := checkFormat(format); err != nil {
		return 0, err
	}
	zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(true))
	if err != nil {
		return 0, fmt.Errorf("snapshot: %w", err)
	}
	info := r.Info()
	h := []byte(snapshotMagic)
	h = binary.AppendUvarint(h, format)
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
	if err := changes.WriteLog(writerFunc(put), r.changes); err != nil {
		zw.Close()
		return written, fmt.Errorf("snapshot: %w", err)
	}
	if err := zw.Close(); err != nil {
		return written, fmt.Errorf("snapshot: %w", err)
	}
	return written, nil
}

// writerFunc is an io.Writer that writes all of p with a put function.
type writerFunc func(p []byte) error

func (f writerFunc) Write(p []byte) (int, error) {
	if err := f(p); err != nil {
		return 0, err
	}
	return len(p), nil
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
