package document

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/edge-stats/edge/internal/jsonw/jsonwtest"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

// TestListingAppendsAsMarshal checks that the generated encoding of
// listing documents is encoding/json's, byte for byte, for every listing
// of two synthetic replicas (every store, growth windows, ranks, charts,
// links), listings with text to escape, stars and interpolated windows,
// and a document with every value missing.
func TestListingAppendsAsMarshal(t *testing.T) {
	synth := replicatest.Synth(3000, nil)
	twins := replicatest.Twins(300)
	seen := map[string]bool{}
	for _, rep := range []struct {
		f *figures.Figures
		n int
	}{{figures.Build(synth, 0), synth.Len()}, {figures.Build(twins, 0), twins.Len()}} {
		for i := range rep.n {
			l := rep.f.Replica().At(int32(i))
			d := NewListing(l, rep.f)
			jsonwtest.CheckSelf(t, l.Store.String()+"/"+l.ID, &d)
			seen["growth"] = seen["growth"] || d.Growth.D7 != nil
			seen["charts"] = seen["charts"] || len(d.Charts) > 0
			seen["alsoIn"] = seen["alsoIn"] || len(d.AlsoIn) > 0
			seen["delisted"] = seen["delisted"] || d.DelistedAt != nil
			seen["ranks"] = seen["ranks"] || d.StoreRank != nil
			if i%97 == 0 {
				odd := *l
				o := jsonwtest.OddText
				odd.Name, odd.Developer, odd.Description, odd.Category, odd.Version = o, o, o+o, o, o
				odd.Permissions, odd.HostAccess = []string{o, "tabs"}, []string{"<all_urls>"}
				odd.HasStars, odd.Stars = true, [5]uint32{1, 0, 30, 4000000000, 7}
				d := NewListing(&odd, rep.f)
				// A window whose start lies between two readings, with a
				// percent of a zero start (null) and one in exponent form.
				at := time.Unix(1764000000, 0).UTC()
				p := 1.5e-7
				d.Growth.D30 = &Change{Change: -12, Since: at, From: at, To: at.Add(time.Hour), Interpolated: true,
					FromReadings: []time.Time{at.Add(-time.Minute), at.Add(time.Minute)}}
				d.Growth.D365 = &Change{Change: 1 << 40, Percent: &p, Since: at, From: at, To: at, FromReadings: []time.Time{at}}
				jsonwtest.CheckSelf(t, "odd "+l.ID, &d)
			}
		}
	}
	for _, k := range []string{"growth", "charts", "alsoIn", "delisted", "ranks"} {
		if !seen[k] {
			t.Errorf("no document had %s: the comparison did not reach it", k)
		}
	}
	var none views.Listing
	d := NewListing(&none, nil)
	jsonwtest.CheckSelf(t, "a listing of zero values", &d)
	d.Permissions, d.Charts, d.AlsoIn = nil, nil, nil
	jsonwtest.CheckSelf(t, "nil lists", &d)
}

// BenchmarkListingEncoding writes 200 listing documents (an uncached
// page's most) by their generated encoder and by encoding/json.
func BenchmarkListingEncoding(b *testing.B) {
	synth := replicatest.Synth(3000, nil)
	f := figures.Build(synth, 0)
	docs := make([]Listing, 200)
	for i := range docs {
		docs[i] = NewListing(synth.At(int32(i*13)), f)
	}
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 1<<20)
		for b.Loop() {
			buf = buf[:0]
			for i := range docs {
				buf = docs[i].AppendJSON(buf)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i := range docs {
				if _, err := json.Marshal(&docs[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
