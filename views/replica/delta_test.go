package replica_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
	"github.com/edge-stats/edge/views/viewstest"
)

// leaderStates returns a chain of states as a leader publishes them:
// the first of n listings, then steps states, each from the one before
// by what rng draws: listings changed (figures, text, history), added
// and removed, new change events (and now and then a log rebuilt whole,
// as a full reload does), newer watermarks and count of readings. The
// listings a step leaves alone are copies, as a refresh leaves them.
func leaderStates(rng *rand.Rand, n, steps int) (states []*replica.Replica, snapshots []int64) {
	ls := viewstest.Synth(n, nil)
	info := replicatest.Info()
	info.ListingsMark, info.LoadedAt, info.LoadTime = viewstest.Ref.Add(-time.Hour), viewstest.Ref, 3*time.Second
	var cs []changes.Change
	at := viewstest.Ref.Add(-30 * 24 * time.Hour).Unix()
	event := func(l *views.Listing) changes.Change {
		at += int64(rng.IntN(3600) + 1)
		return changes.Change{At: at, Store: l.Store, ID: l.ID, Kind: changes.Version, Before: l.Version, After: fmt.Sprint(at)}
	}
	for i := range 50 {
		cs = append(cs, event(&ls[i*7%len(ls)]))
	}
	r := replica.New(ls, info).WithChanges(changes.NewLog(cs, 0))
	states, snapshots = append(states, r), append(snapshots, 1000)
	for step := range steps {
		next := slices.Clone(r.All())
		var more []changes.Change
		for range rng.IntN(len(next)/50 + 2) {
			l := &next[rng.IntN(len(next))]
			switch rng.IntN(5) {
			case 0:
				l.SetUsage(int64(rng.IntN(1e6)), true)
			case 1:
				l.Name = fmt.Sprintf("%s %d", l.Name, step)
			case 2:
				l.Hist.SetComputedAt(viewstest.Ref.Add(time.Duration(step+1) * time.Minute))
			case 3:
				l.Version = fmt.Sprint(step)
				more = append(more, event(l))
			default:
				l.Permissions = append(slices.Clone(l.Permissions), fmt.Sprintf("perm%d", step))
			}
		}
		for range rng.IntN(3) { // removed
			k := rng.IntN(len(next))
			next = slices.Delete(next, k, k+1)
		}
		for k := range rng.IntN(4) { // added
			l := viewstest.Synth(1, nil)[0]
			l.ID = fmt.Sprintf("new-%d-%d", step, k)
			next = append(next, l)
		}
		info.ListingsMark = info.ListingsMark.Add(5 * time.Minute)
		info.LoadTime += time.Second
		log := r.Changes().With(more, 0)
		if rng.IntN(4) == 0 && log.Len() > 0 {
			// A full reload: the log read again, from a later start, and
			// one change of its middle gone (a version the crawler lost).
			var kept []changes.Change
			drop := rng.IntN(log.Len())
			for i := range log.Len() {
				if i != drop {
					kept = append(kept, *log.At(i))
				}
			}
			log = changes.NewLog(kept, log.From()+3600)
			// Every listing read again: copies of its own, equal to the
			// ones they replace where nothing changed; and now and then
			// the data's new day, which moves the charts' window and the
			// climb time and so every listing's chart sizes.
			reloaded(next)
			if rng.IntN(2) == 0 {
				info = dayRoll(next, info)
			}
		}
		r = replica.New(next, info).WithChanges(log)
		states, snapshots = append(states, r), append(snapshots, snapshots[len(snapshots)-1]+int64(rng.IntN(500)))
	}
	return states, snapshots
}

// reloaded makes every listing of ls a copy of its own, as a full
// reload reads it again: no string, list or sparkline shared with the
// listing it replaces, its figures the same.
func reloaded(ls []views.Listing) {
	for i := range ls {
		l := &ls[i]
		for _, s := range []*string{&l.ID, &l.Slug, &l.Name, &l.Developer, &l.Category, &l.Description, &l.Icon, &l.Version} {
			*s = strings.Clone(*s)
		}
		for _, list := range []*[]string{&l.Permissions, &l.HostAccess, &l.Topics} {
			c := slices.Clone(*list)
			for k := range c {
				c[k] = strings.Clone(c[k])
			}
			*list = c
		}
		sp := l.Hist.SparklineBytes()
		*sp = bytes.Clone(*sp)
	}
}

// dayRoll returns info on the data's next day (replica.NewInfo: the
// charts' window and the climb time a day on) and gives every listing of
// ls the chart sizes and climb base of the new window.
func dayRoll(ls []views.Listing, info replica.Info) replica.Info {
	next := replica.NewInfo(info.ListingsMark, info.ReadingsMark.Add(24*time.Hour))
	next.Generation, next.LoadedAt, next.LoadTime, next.HasHistory = info.Generation, info.LoadedAt, info.LoadTime, info.HasHistory
	day := int64(views.DayOf(next.ReadingsMark))
	for i := range ls {
		h := &ls[i].Hist
		h.SetChartSizes(views.Base{Value: day + int64(i)}, true, views.Base{Value: day * 2}, true)
		h.SetClimbBase(views.Base{Value: day, At: next.ClimbAt.Unix() - int64(i)})
	}
	return next
}

// sameState fails t unless got holds exactly want's listings (their
// binary forms), change log and info but the generation.
func sameState(t *testing.T, what string, got, want *replica.Replica) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Fatalf("%s: %d listings, want %d", what, got.Len(), want.Len())
	}
	for i := range want.All() {
		a, b := views.AppendListing(nil, &got.All()[i]), views.AppendListing(nil, &want.All()[i])
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: listing %d is %s/%s, want %s/%s (or its figures differ)", what, i, got.All()[i].Store, got.All()[i].ID, want.All()[i].Store, want.All()[i].ID)
		}
	}
	if !got.Changes().Equal(want.Changes()) {
		t.Fatalf("%s: change log of %d changes from %d, want %d from %d", what, got.Changes().Len(), got.Changes().From(), want.Changes().Len(), want.Changes().From())
	}
	gi, wi := got.Info(), want.Info()
	gi.Generation = wi.Generation
	if gi != wi {
		t.Fatalf("%s: info %+v, want %+v", what, gi, wi)
	}
}

// A follower that takes the first state whole and every later one as a
// delta holds, after each, exactly the leader's state; at the end, the
// state a whole snapshot of the last one gives. Property-tested over
// chains that rng draws.
func TestChainOfDeltasIsTheWholeState(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 54))
			states, snapshots := leaderStates(rng, 600, 12)
			var buf bytes.Buffer
			if _, err := replica.WriteSnapshot(&buf, states[0], snapshots[0]); err != nil {
				t.Fatal(err)
			}
			unused := replica.NewSpare(states[0].Len() * 2)
			have, _, err := replica.ReadSnapshot(&buf, replica.ReadOptions{Generation: 1, Spare: unused})
			if err != nil {
				t.Fatal(err)
			}
			if unused.Cap() != states[0].Len()*2 {
				t.Fatalf("a whole state's read took the spare")
			}
			haveDigest := replica.DigestOf(have, snapshots[0])
			var haves []*replica.Replica // the states read before have
			for k := 1; k < len(states); k++ {
				want := replica.DigestOf(states[k], snapshots[k])
				buf.Reset()
				st, err := replica.WriteDelta(&buf, states[k-1], replica.DigestOf(states[k-1], snapshots[k-1]), states[k], snapshots[k], want)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("step %d: %+v, %d bytes", k, st, buf.Len())
				counted := false // a follower tells a delta's read by it (builder.Builder.follow)
				// Every other step into a spare made ahead (as a follower
				// makes one between deltas): one with room, or one a
				// listing too small, which the apply leaves alone; every
				// fourth, one whose pages are still being written when
				// the apply takes it (a delta that came while its spare
				// was made: the writes stop, under the race detector).
				var spare *replica.Spare
				room := states[k].Len() + rng.IntN(3) - 1
				writing := make(chan bool, 1)
				if k%2 == 1 {
					if k%4 == 1 {
						room += 50_000 // long enough to be written while the apply takes it
					}
					spare = replica.NewSpare(room)
					if k%4 == 1 {
						go func() { writing <- spare.Write() }()
					} else {
						writing <- spare.Write()
					}
				}
				next, snaps, got, err := replica.ReadDelta(&buf, have, haveDigest, replica.ReadOptions{Generation: uint64(k + 1), Counted: func(int) { counted = true }, Spare: spare})
				if err != nil {
					t.Fatalf("step %d (%+v): %v", k, st, err)
				}
				if spare != nil {
					<-writing
				}
				if spare != nil && (spare.Cap() == 0) != (room >= states[k].Len()) {
					t.Fatalf("step %d: a spare for %d listings, %d left after the apply of %d", k, room, spare.Cap(), states[k].Len())
				}
				if counted {
					t.Fatalf("step %d: the delta's read called Counted, as a whole state's does", k)
				}
				if got != want || snaps != snapshots[k] || next.Info().Generation != uint64(k+1) {
					t.Fatalf("step %d: digest %x snapshots %d generation %d", k, got[:4], snaps, next.Info().Generation)
				}
				sameState(t, fmt.Sprintf("step %d", k), next, states[k])
				if a, ok := next.AppliedTo(have); !ok || len(a.Added) != st.Changed || len(a.Dropped) < st.Removed {
					t.Fatalf("step %d: applied to its base %v: %d added, %d dropped, for %+v", k, ok, len(a.Added), len(a.Dropped), st)
				}
				if _, ok := next.AppliedTo(states[k-1]); ok {
					t.Fatalf("step %d: applied to a replica it was not read from", k)
				}
				// And to every state read before, by the chain of deltas
				// from it (each still live here).
				for j, old := range haves {
					a, ok := next.AppliedTo(old)
					if !ok || old.Len()-len(a.Dropped) != next.Len()-len(a.Added) {
						t.Fatalf("step %d: from the state of step %d: %v, %d dropped of %d, %d added of %d", k, j, ok, len(a.Dropped), old.Len(), len(a.Added), next.Len())
					}
				}
				haves = append(haves, have)
				have, haveDigest = next, got
			}
			last := len(states) - 1
			buf.Reset()
			if _, err := replica.WriteSnapshot(&buf, states[last], snapshots[last]); err != nil {
				t.Fatal(err)
			}
			whole, _, err := replica.ReadSnapshot(&buf, replica.ReadOptions{Generation: 99})
			if err != nil {
				t.Fatal(err)
			}
			sameState(t, "the chain against the whole state", have, whole)
			if replica.DigestOf(whole, snapshots[last]) != haveDigest {
				t.Fatal("the whole state's digest is not the chain's")
			}
		})
	}
}

// A delta holds what changed, not the rest: a refresh that touches 1 in
// 288 listings sends far less than 1% of the whole state.
func TestDeltaHoldsWhatChanged(t *testing.T) {
	base := replicatest.Synth(20000, nil)
	next := slices.Clone(base.All())
	for i := 0; i < len(next); i += 288 {
		u, _ := next[i].Usage()
		next[i].SetUsage(u+1, true)
	}
	r := replica.New(next, base.Info())
	var whole, delta bytes.Buffer
	if _, err := replica.WriteSnapshot(&whole, r, 1); err != nil {
		t.Fatal(err)
	}
	st, err := replica.WriteDelta(&delta, base, replica.DigestOf(base, 1), r, 1, replica.DigestOf(r, 1))
	if err != nil {
		t.Fatal(err)
	}
	if st.Changed != (len(next)+287)/288 || st.Removed != 0 || st.WholeLog {
		t.Errorf("delta stats %+v, want %d changed", st, (len(next)+287)/288)
	}
	if delta.Len()*100 > whole.Len() {
		t.Errorf("delta of %d bytes for a whole state of %d: more than 1%%", delta.Len(), whole.Len())
	}
	// A full reload that read again every listing and found the same
	// change: the same delta, listing for listing.
	again := slices.Clone(next)
	reloaded(again)
	info := base.Info()
	info.LoadedAt = info.LoadedAt.Add(time.Hour)
	rr := replica.New(again, info)
	var reload bytes.Buffer
	st, err = replica.WriteDelta(&reload, base, replica.DigestOf(base, 1), rr, 1, replica.DigestOf(rr, 1))
	if err != nil {
		t.Fatal(err)
	}
	if st.Changed != (len(next)+287)/288 || st.Removed != 0 || reload.Len() > delta.Len()+256 {
		t.Errorf("a full reload of the same change: %+v, %d bytes against a refresh's %d", st, reload.Len(), delta.Len())
	}
	// Nothing changed: nothing but the header.
	delta.Reset()
	st, err = replica.WriteDelta(&delta, base, replica.DigestOf(base, 1), base, 1, replica.DigestOf(base, 1))
	if err != nil || st.Changed != 0 || st.Removed != 0 {
		t.Errorf("a delta of a state to itself: %+v, %v", st, err)
	}
}

// A delta applies to its base alone, and gives its result or an error:
// another base, a damaged or truncated delta, a result whose digest is
// not the one named.
func TestDeltaRefusesWhatIsNotItsBase(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	states, snaps := leaderStates(rng, 300, 3)
	d := func(k int) replica.Digest { return replica.DigestOf(states[k], snaps[k]) }
	var buf bytes.Buffer
	if _, err := replica.WriteDelta(&buf, states[1], d(1), states[2], snaps[2], d(2)); err != nil {
		t.Fatal(err)
	}
	good := bytes.Clone(buf.Bytes())
	read := func(b []byte, base *replica.Replica, digest replica.Digest) error {
		_, _, _, err := replica.ReadDelta(bytes.NewReader(b), base, digest, replica.ReadOptions{Generation: 5})
		return err
	}
	if err := read(good, states[1], d(1)); err != nil {
		t.Fatalf("the delta on its base: %v", err)
	}
	if err := read(good, states[0], d(0)); !errors.Is(err, replica.ErrDeltaBase) {
		t.Errorf("on another base: %v, want ErrDeltaBase", err)
	}
	// The right digest but another state: the result's digest tells.
	if err := read(good, states[0], d(1)); err == nil {
		t.Error("a delta applied to a state that only claims its base's digest was taken")
	}
	// A delta naming a result that is not what it gives.
	buf.Reset()
	if _, err := replica.WriteDelta(&buf, states[1], d(1), states[2], snaps[2], d(0)); err != nil {
		t.Fatal(err)
	}
	if err := read(buf.Bytes(), states[1], d(1)); err == nil {
		t.Error("a delta whose result has another digest than it names was taken")
	}
	for _, cut := range []int{0, 10, len(good) / 2, len(good) - 1} {
		if err := read(good[:cut], states[1], d(1)); err == nil {
			t.Errorf("a delta cut at %d of %d bytes was taken", cut, len(good))
		}
	}
	bad := bytes.Clone(good)
	bad[len(bad)/2] ^= 0x40
	if err := read(bad, states[1], d(1)); err == nil {
		t.Error("a damaged delta was taken")
	}
	// A snapshot is not a delta.
	buf.Reset()
	replica.WriteSnapshot(&buf, states[2], snaps[2])
	if err := read(buf.Bytes(), states[1], d(1)); err == nil {
		t.Error("a snapshot was read as a delta")
	}
}

// FuzzReadDelta feeds a delta reader any bytes (compressed for it, as a
// leader's are): a read is an error or a state whose digest is the one
// the bytes name, never a panic or an allocation past the bound.
func FuzzReadDelta(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	states, snaps := leaderStates(rng, 40, 2)
	base, baseDigest := states[0], replica.DigestOf(states[0], snaps[0])
	for k := 1; k < len(states); k++ {
		var buf bytes.Buffer
		if _, err := replica.WriteDelta(&buf, states[k-1], replica.DigestOf(states[k-1], snaps[k-1]), states[k], snaps[k], replica.DigestOf(states[k], snaps[k])); err != nil {
			f.Fatal(err)
		}
		raw := decompress(f, buf.Bytes())
		if k == 1 {
			f.Add(raw)
			f.Add(raw[:len(raw)/2])
		}
	}
	f.Add([]byte("EDGEDELT\x02"))
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		z := enc.EncodeAll(data, nil)
		r, snapshots, d, err := replica.ReadDelta(bytes.NewReader(z), base, baseDigest, replica.ReadOptions{Generation: 2, MaxBytes: 1 << 20})
		if err != nil {
			return
		}
		if replica.DigestOf(r, snapshots) != d {
			t.Fatal("a delta was taken whose result is not of the digest it names")
		}
	})
}
