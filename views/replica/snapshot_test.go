package replica_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/klauspost/compress/zstd"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
	"github.com/edge-stats/edge/views/viewstest"
)

// fullListing sets every field a listing has, so that a field the binary
// form forgets shows as a difference.
func fullListing() views.Listing {
	l := views.Listing{Store: views.Chrome, ID: "zzzz-full", Slug: "full-slug", Name: "Full ünïcode", Developer: "Dev",
		Category: "Tools", Description: "d", Icon: "https://i/x.png", Version: "9.9", Kind: views.KindTheme,
		FirstSeen: 1, Delisted: 1_700_000_000, ReadAt: 1_700_000_100, MetaAt: 1_700_000_050,
		Updated: 19000, Created: -3, AccessLevel: 4, ManifestVersion: 3, Featured: true, HasStars: true,
		Stars: [5]uint32{1, 2, 3, 4, 1 << 31}, Permissions: []string{"tabs", "storage"}, HostAccess: []string{"<all_urls>"},
		Topics: []string{"a"}}
	l.SetUsage(1<<40, true)
	l.SetWeeklyDownloads(7, true)
	l.SetRatingCount(0, true)
	l.SetRating(4.25, true)
	for _, w := range views.Windows {
		l.Hist.SetSizeBase(w, views.Base{Value: -int64(w) - 5, At: 1_600_000_000 + int64(w), After: 1_600_000_100})
	}
	l.Hist.SetRatingBase(views.Window1d, views.Base{Value: 3, At: 1_600_000_000, After: 1_600_000_001})
	l.Hist.SetRatingBase(views.Window7d, views.Base{Value: 4, At: 1_600_000_002})
	l.Hist.SetChartSizes(views.Base{Value: 10}, true, views.Base{Value: 20}, true)
	l.Hist.SetClimbBase(views.Base{Value: 99, At: 1_650_000_000})
	l.Hist.SetComputedAt(time.Unix(1_700_000_200, 0))
	l.Hist.SetSparkline(views.EncodeSparkline([]views.SparkPoint{{Day: 19000, Value: 5}, {Day: 19003, Value: -2}}))
	return l
}

func synthWithFull(n int) *replica.Replica {
	ls := append(viewstest.Synth(n, nil), fullListing())
	info := replicatest.Info()
	info.ListingsMark, info.LoadedAt, info.LoadTime, info.Generation = viewstest.Ref.Add(-time.Hour), viewstest.Ref.Add(time.Minute), 3*time.Second, 41
	return replica.New(ls, info)
}

func TestSnapshotRoundTrip(t *testing.T) {
	r := synthWithFull(3000)
	var buf bytes.Buffer
	raw, err := replica.WriteSnapshot(&buf, r, 123456)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d listings: %d bytes, %d compressed", r.Len(), raw, buf.Len())
	got, snapshots, err := replica.ReadSnapshot(bytes.NewReader(buf.Bytes()), replica.ReadOptions{Generation: 7})
	if err != nil {
		t.Fatal(err)
	}
	if snapshots != 123456 {
		t.Errorf("snapshots %d, want 123456", snapshots)
	}
	want := r.Info()
	want.Generation = 7 // the reader's own
	if !reflect.DeepEqual(got.Info(), want) {
		t.Errorf("info %+v\nwant %+v", got.Info(), want)
	}
	if got.Len() != r.Len() || got.Counts() != r.Counts() {
		t.Fatalf("%d listings %v, want %d %v", got.Len(), got.Counts(), r.Len(), r.Counts())
	}
	for i, l := range r.All() {
		if g := got.All()[i]; !reflect.DeepEqual(g, l) {
			t.Fatalf("listing %d:\n got %+v\nwant %+v", i, g, l)
		}
	}
	if l := got.Lookup(views.Chrome, "zzzz-full"); l == nil || !reflect.DeepEqual(*l, fullListing()) {
		t.Errorf("the listing with every field came back as %+v", l)
	}
	// Equal strings are shared again, as a load's interner shares them.
	var cat *views.Listing
	for i := range got.All() {
		l := &got.All()[i]
		if l.Category == "Category 0" {
			if cat != nil && unsafeData(cat.Category) != unsafeData(l.Category) {
				t.Fatal("equal categories are not one string")
			}
			cat = l
		}
	}
}

func TestSnapshotSharesTheReplacedReplica(t *testing.T) {
	r := synthWithFull(500)
	var buf bytes.Buffer
	if _, err := replica.WriteSnapshot(&buf, r, 1); err != nil {
		t.Fatal(err)
	}
	got, _, err := replica.ReadSnapshot(bytes.NewReader(buf.Bytes()), replica.ReadOptions{Generation: 2, Prev: r})
	if err != nil {
		t.Fatal(err)
	}
	if !got.SharesText(r) {
		t.Error("a snapshot of the same listings does not share the replaced replica's text")
	}
}

func TestSnapshotRefusals(t *testing.T) {
	r := synthWithFull(200)
	var buf bytes.Buffer
	if _, err := replica.WriteSnapshot(&buf, r, 1); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	raw := decompress(t, good)
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	otherFormat := bytes.Clone(raw)
	otherFormat[len("EDGESNAP")] = replica.SnapshotFormat + 1
	for _, c := range []struct {
		name string
		data []byte
		max  int64
	}{
		{"empty", nil, 0},
		{"not zstd", []byte("EDGESNAP hello"), 0},
		{"a flipped bit", flipped, 0},
		{"cut short", good[:len(good)-20], 0},
		{"cut inside", recompress(raw[:len(raw)/2]), 0},
		{"another magic", recompress(append([]byte("EDGESNAQ"), raw[8:]...)), 0},
		{"bytes past the end", recompress(append(bytes.Clone(raw), 0)), 0},
		{"past the bound", good, int64(len(raw) - 1)},
		{"another format", recompress(otherFormat), 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := replica.ReadSnapshot(bytes.NewReader(c.data), replica.ReadOptions{Generation: 1, MaxBytes: c.max}); err == nil {
				t.Fatal("read without an error")
			}
		})
	}
	if _, _, err := replica.ReadSnapshot(bytes.NewReader(recompress(otherFormat)), replica.ReadOptions{Generation: 1}); !errors.Is(err, replica.ErrSnapshotFormat) {
		t.Errorf("another format: %v, want ErrSnapshotFormat", err)
	}
	if _, _, err := replica.ReadSnapshot(bytes.NewReader(good), replica.ReadOptions{Generation: 1, MaxBytes: int64(len(raw))}); err != nil {
		t.Errorf("exactly at the bound: %v", err)
	}
}

func decompress(t testing.TB, b []byte) []byte {
	zr, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out, err := zr.DecodeAll(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzReadSnapshot feeds damaged snapshots (uncompressed, so that the
// fuzzer reaches the format's parser) to the reader: it must return an
// error or a replica, never panic or allocate past the input's size.
func FuzzReadSnapshot(f *testing.F) {
	var buf bytes.Buffer
	if _, err := replica.WriteSnapshot(&buf, synthWithFull(3), 9); err != nil {
		f.Fatal(err)
	}
	raw := decompress(f, buf.Bytes())
	f.Add(raw)
	f.Add(raw[:len(raw)/2])
	f.Add([]byte("EDGESNAP\x02"))
	// One with a change log, so that the fuzzer reaches its reader.
	small := synthWithFull(3)
	l := small.All()[0]
	prev, next := changes.MetaOf(&l), changes.MetaOf(&l)
	prev.At, prev.Version, prev.Permissions = next.At-1, "0.1", []string{"tabs"}
	buf.Reset()
	if _, err := replica.WriteSnapshot(&buf, small.WithChanges(changes.NewLog(changes.Diff(nil, l.Store, l.ID, &prev, &next), 0)), 9); err != nil {
		f.Fatal(err)
	}
	f.Add(decompress(f, buf.Bytes()))
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		z := enc.EncodeAll(data, nil)
		r, _, err := replica.ReadSnapshot(bytes.NewReader(z), replica.ReadOptions{Generation: 1, MaxBytes: 1 << 20})
		if err != nil {
			return
		}
		// What is read is a valid replica: sorted, and found by its keys.
		for _, l := range r.All() {
			if r.Lookup(l.Store, l.ID) == nil {
				t.Fatalf("listing %s/%s read but not found", l.Store, l.ID)
			}
		}
	})
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }

// BenchmarkSnapshot writes and reads back a snapshot of 100,000
// synthetic listings (what a fleet's leader and each other edge do with
// every state).
func BenchmarkSnapshot(b *testing.B) {
	r := replicatest.Synth(100_000, nil)
	var buf bytes.Buffer
	raw, err := replica.WriteSnapshot(&buf, r, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			var out bytes.Buffer
			if _, err := replica.WriteSnapshot(&out, r, 1); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(raw)/float64(r.Len()), "raw-B/listing")
		b.ReportMetric(float64(buf.Len())/float64(r.Len()), "B/listing")
	})
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := replica.ReadSnapshot(bytes.NewReader(buf.Bytes()), replica.ReadOptions{Generation: 1}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// snapshotParts splits an uncompressed snapshot into its header (with
// the listing count last), its blocks (each with its count and length
// first) and what follows them (the change log), so that a test can put
// them together otherwise.
func snapshotParts(t *testing.T, raw []byte) (header []byte, count uint64, blocks [][]byte, tail []byte) {
	t.Helper()
	b := raw[len("EDGESNAP"):]
	next := func(signed bool) {
		var n int
		if signed {
			_, n = binary.Varint(b)
		} else {
			_, n = binary.Uvarint(b)
		}
		if n <= 0 {
			t.Fatal("a header field ends early")
		}
		b = b[n:]
	}
	next(false) // format
	for range 6 {
		next(true) // five times and the load time
	}
	next(false) // the writer's generation
	b = b[1:]   // history
	next(true)  // snapshots
	header = raw[:len(raw)-len(b)]
	count, n := binary.Uvarint(b)
	b = b[n:]
	for b[0] != 0 {
		start := b
		_, n := binary.Uvarint(b)
		b = b[n:]
		size, n := binary.Uvarint(b)
		b = b[n+int(size):]
		blocks = append(blocks, start[:len(start)-len(b)])
	}
	return header, count, blocks, b[1:]
}

func joinSnapshot(header []byte, count uint64, blocks [][]byte, tail []byte) []byte {
	out := binary.AppendUvarint(bytes.Clone(header), count)
	for _, b := range blocks {
		out = append(out, b...)
	}
	return append(append(out, 0), tail...)
}

// TestSnapshotReadsBlocksInParallel: a snapshot of several blocks, read
// by several workers, is the replica written; blocks out of order are
// refused (each is in order inside); and a header that says more
// listings than arrive does not make the reader allocate for them.
func TestSnapshotReadsBlocksInParallel(t *testing.T) {
	r := synthWithFull(12000)
	var buf bytes.Buffer
	if _, err := replica.WriteSnapshot(&buf, r, 5); err != nil {
		t.Fatal(err)
	}
	raw := decompress(t, buf.Bytes())
	header, count, blocks, tail := snapshotParts(t, raw)
	if len(blocks) < 3 || count != uint64(r.Len()) {
		t.Fatalf("%d blocks of %d listings: the test wants several", len(blocks), count)
	}
	enc := func(b []byte) *bytes.Reader {
		zw, _ := zstd.NewWriter(nil)
		defer zw.Close()
		return bytes.NewReader(zw.EncodeAll(b, nil))
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // workers even on a small machine
	got, _, err := replica.ReadSnapshot(enc(joinSnapshot(header, count, blocks, tail)), replica.ReadOptions{Generation: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range r.All() {
		if !reflect.DeepEqual(got.All()[i], l) {
			t.Fatalf("listing %d differs", i)
		}
	}

	swapped := slices.Clone(blocks)
	swapped[1], swapped[2] = swapped[2], swapped[1]
	if _, _, err := replica.ReadSnapshot(enc(joinSnapshot(header, count, swapped, tail)), replica.ReadOptions{Generation: 1}); err == nil ||
		!strings.Contains(err.Error(), "is not after") {
		t.Errorf("blocks out of order: %v, want a listing that is not after the one before", err)
	}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err = replica.ReadSnapshot(enc(joinSnapshot(header, 1<<27, blocks, tail)), replica.ReadOptions{Generation: 1})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "its header says") {
		t.Errorf("a count of 1<<27: %v, want the count refused", err)
	}
	// Trusted, the count would have taken 1<<27 listings of 448 B: 56 GiB.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
		t.Errorf("a header's count made the reader allocate %d MiB", grew>>20)
	}
}

// TestSnapshotCarriesChanges: the change log comes back whole, in order,
// its ids the listings' own strings; a log cut short is refused.
func TestSnapshotCarriesChanges(t *testing.T) {
	r := synthWithFull(400)
	var cs []changes.Change
	for i, l := range r.All() {
		if i%3 != 0 {
			continue
		}
		prev := changes.MetaOf(&l)
		prev.At -= 1000
		prev.Version, prev.Permissions, prev.Developer = "0.1", []string{"tabs"}, "Someone Else"
		next := changes.MetaOf(&l)
		cs = changes.Diff(cs, l.Store, strings.Clone(l.ID), &prev, &next)
	}
	log := changes.NewLog(cs, 0)
	if log.Len() < 200 {
		t.Fatalf("only %d changes", log.Len())
	}
	r = r.WithChanges(log)
	var buf bytes.Buffer
	if _, err := replica.WriteSnapshot(&buf, r, 1); err != nil {
		t.Fatal(err)
	}
	got, _, err := replica.ReadSnapshot(bytes.NewReader(buf.Bytes()), replica.ReadOptions{Generation: 2})
	if err != nil {
		t.Fatal(err)
	}
	gl := got.Changes()
	if gl.Len() != log.Len() || gl.From() != log.From() {
		t.Fatalf("%d changes from %d, want %d from %d", gl.Len(), gl.From(), log.Len(), log.From())
	}
	for i := range log.Len() {
		a, b := log.At(i), gl.At(i)
		if a.At != b.At || a.ID != b.ID || a.Kind != b.Kind || a.Before != b.Before || a.After != b.After ||
			!slices.Equal(a.Added(), b.Added()) || !slices.Equal(a.Removed(), b.Removed()) || a.Widened != b.Widened {
			t.Fatalf("change %d: %+v, want %+v", i, b, a)
		}
		if l := got.Lookup(b.Store, b.ID); l == nil || unsafeData(l.ID) != unsafeData(b.ID) {
			t.Fatalf("change %d: its id is not the listing's own string", i)
		}
	}
	raw := decompress(t, buf.Bytes())
	if _, _, err := replica.ReadSnapshot(bytes.NewReader(recompress(raw[:len(raw)-10])), replica.ReadOptions{}); err == nil {
		t.Error("a change log cut short was read")
	}
}

// recompress returns b as a zstd stream.
func recompress(b []byte) []byte {
	var out bytes.Buffer
	zw, _ := zstd.NewWriter(&out)
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}
