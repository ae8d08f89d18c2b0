package changes

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/edge-stats/edge/views"
)

const day = 24 * 60 * 60

// Changes of listing "a" of chrome at day d, for the tests.
func dev(d int64, from, to string) Change {
	return Change{At: d * day, ID: "a", Store: views.Chrome, Kind: Developer, Before: from, After: to}
}

func perms(d int64, added, removed []string) Change {
	return Change{At: d * day, ID: "a", Store: views.Chrome, Kind: Permissions, nAdded: uint16(len(added)), Set: append(slices.Clone(added), removed...)}
}

func hosts(d int64, widened bool, added ...string) Change {
	return Change{At: d * day, ID: "a", Store: views.Chrome, Kind: HostAccess, Widened: widened, nAdded: uint16(len(added)), Set: added}
}

func level(d int64, from, to int) Change {
	return Change{At: d * day, ID: "a", Store: views.Chrome, Kind: AccessLevel, Before: strconv.Itoa(from), After: strconv.Itoa(to)}
}

func version(d int64) Change {
	return Change{At: d * day, ID: "a", Store: views.Chrome, Kind: Version, Before: "1", After: "2"}
}

// takeoverText is a takeover as the tests compare it.
func takeoverText(l *Log, c *Change) string {
	d, w, ok := l.Joins(c)
	if !ok {
		return fmt.Sprintf("day %d %s→%s %v no joins", c.At/day, c.Before, c.After, c.Added())
	}
	return fmt.Sprintf("day %d %s→%s %v joins %s@%d %s@%d", c.At/day, c.Before, c.After, c.Added(), d.Kind, d.At/day, w.Kind, w.At/day)
}

func takeoversOf(l *Log) []string {
	var out []string
	for i := range l.Len() {
		if c := l.At(i); c.Kind == Takeover {
			out = append(out, takeoverText(l, c))
		}
	}
	return out
}

// TestTakeovers: the takeover rule on the cases it names (docs/figures.md,
// Changes): a widening in the same crawl or within 90 days of a change of
// developer, before the next; one per change of hands; near misses none.
func TestTakeovers(t *testing.T) {
	for _, tc := range []struct {
		name string
		cs   []Change
		want []string
	}{
		{"permission added 10 days after the sale", []Change{dev(100, "A", "B"), version(105), perms(110, []string{"tabs"}, nil)},
			[]string{"day 110 A→B [tabs] joins developer@100 permissions@110"}},
		{"in the same crawl as the sale", []Change{dev(100, "A", "B"), perms(100, []string{"cookies", "tabs"}, []string{"storage"}), hosts(100, true, "https://*/*")},
			[]string{"day 100 A→B [cookies tabs https://*/*] joins developer@100 permissions@100"}},
		{"host access widened on day 90", []Change{dev(100, "A", "B"), hosts(190, true, "*://*/*")},
			[]string{"day 190 A→B [*://*/*] joins developer@100 hostAccess@190"}},
		{"a higher access level", []Change{dev(100, "A", "B"), level(120, 2, 3)},
			[]string{"day 120 A→B [] joins developer@100 accessLevel@120"}},
		{"near miss: widened on day 91", []Change{dev(100, "A", "B"), perms(191, []string{"tabs"}, nil)}, nil},
		{"near miss: a new owner who asks for nothing more", []Change{dev(100, "A", "B"), version(110), perms(120, nil, []string{"tabs"})}, nil},
		{"near miss: a host added while it reached every host", []Change{dev(100, "A", "B"), hosts(110, false, "https://a.example/*")}, nil},
		{"near miss: a lower access level", []Change{dev(100, "A", "B"), level(110, 3, 2)}, nil},
		{"near miss: widened before the sale", []Change{perms(90, []string{"tabs"}, nil), dev(100, "A", "B")}, nil},
		{"sold again before widening: the second owner's", []Change{dev(100, "A", "B"), dev(150, "B", "C"), perms(160, []string{"tabs"}, nil)},
			[]string{"day 160 B→C [tabs] joins developer@150 permissions@160"}},
		{"sold again in the widening's crawl: the new owner's", []Change{dev(100, "A", "B"), dev(150, "B", "C"), perms(150, []string{"tabs"}, nil)},
			[]string{"day 150 B→C [tabs] joins developer@150 permissions@150"}},
		{"one per change of hands", []Change{dev(100, "A", "B"), perms(110, []string{"tabs"}, nil), perms(120, []string{"cookies"}, nil)},
			[]string{"day 110 A→B [tabs] joins developer@100 permissions@110"}},
		{"two changes of hands, two takeovers", []Change{dev(100, "A", "B"), perms(110, []string{"tabs"}, nil), dev(200, "B", "C"), hosts(210, true, "<all_urls>")},
			[]string{"day 110 A→B [tabs] joins developer@100 permissions@110", "day 210 B→C [<all_urls>] joins developer@200 hostAccess@210"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLog(slices.Clone(tc.cs), 0)
			if got := takeoversOf(l); !slices.Equal(got, tc.want) {
				t.Errorf("takeovers %q, want %q", got, tc.want)
			}
			if l.Derived() != len(tc.want) {
				t.Errorf("Derived() = %d, want %d", l.Derived(), len(tc.want))
			}
		})
	}
}

// TestTakeoversNeedBothInTheWindow: a takeover whose change of developer
// is older than the log's window is not in it.
func TestTakeoversNeedBothInTheWindow(t *testing.T) {
	cs := []Change{dev(100, "A", "B"), perms(110, []string{"tabs"}, nil)}
	if got := takeoversOf(NewLog(slices.Clone(cs), 105*day)); got != nil {
		t.Errorf("with the sale before the window: %q, want none", got)
	}
	if got := takeoversOf(NewLog(slices.Clone(cs), 100*day)); len(got) != 1 {
		t.Errorf("with both in the window: %q, want one", got)
	}
}

// TestTakeoversAreDerivedNotSent: a log written and read holds the same
// takeovers, derived again, and the bytes written hold none (a reader of
// a release before reads them); a refresh (With) that brings the widening
// derives the takeover across the two parts; Tail and Extend rebuild the
// same log.
func TestTakeoversAreDerivedNotSent(t *testing.T) {
	cs := []Change{dev(100, "A", "B"), version(105), perms(110, []string{"tabs"}, nil), hosts(300, true, "<all_urls>")}
	l := NewLog(slices.Clone(cs), 0)
	var b bytes.Buffer
	if err := WriteLog(&b, l); err != nil {
		t.Fatal(err)
	}
	back, err := ReadLog(bufio.NewReader(bytes.NewReader(b.Bytes())), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(l) || back.Derived() != 1 {
		t.Errorf("read back: %d changes, %d takeovers; want %d and 1", back.Len(), back.Derived(), l.Len())
	}
	// The bytes as a release without takeovers writes them: the raw changes.
	var raw bytes.Buffer
	if err := WriteLog(&raw, NewLog(slices.Clone(cs), 0)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw.Bytes(), b.Bytes()) {
		t.Error("a log with a takeover writes other bytes than its changes alone")
	}
	first := NewLog(slices.Clone(cs[:2]), 0)
	if first.Derived() != 0 {
		t.Fatal("a sale alone is a takeover")
	}
	if got := first.With(slices.Clone(cs[2:]), 0); !got.Equal(l) {
		t.Errorf("a refresh that brings the widening: %q, want %q", takeoversOf(got), takeoversOf(l))
	}
	tail := l.Tail(PosOf(l.At(1)))
	if got := first.Extend(tail); !got.Equal(l) {
		t.Errorf("extended by a tail: %q, want %q", takeoversOf(got), takeoversOf(l))
	}
	// A takeover given in the input is dropped and derived again.
	fake := Change{At: 50 * day, ID: "a", Store: views.Chrome, Kind: Takeover, Before: "X", After: "Y"}
	if got := NewLog(append(slices.Clone(cs), fake), 0); !got.Equal(l) {
		t.Errorf("with a takeover given: %q", takeoversOf(got))
	}
}

// plainTakeovers is the rule read plainly, by another road than
// takeovers: each widening belongs to the listing's newest change of
// developer at or before it; a change of developer is taken over at the
// first widening of its own within 90 days.
func plainTakeovers(cs []Change) []string {
	type key struct {
		s  views.Store
		id string
	}
	devs := map[key][]Change{}
	for _, c := range cs {
		if c.Kind == Developer {
			devs[key{c.Store, c.ID}] = append(devs[key{c.Store, c.ID}], c)
		}
	}
	first := map[Pos]int64{} // a change of developer's first widening of its own
	for _, c := range cs {
		if !c.Widens() {
			continue
		}
		var owner *Change
		for i, d := range devs[key{c.Store, c.ID}] {
			if d.At <= c.At && (owner == nil || d.At > owner.At) {
				owner = &devs[key{c.Store, c.ID}][i]
			}
		}
		if owner == nil || c.At-owner.At > 90*day {
			continue
		}
		if at, ok := first[PosOf(owner)]; !ok || c.At < at {
			first[PosOf(owner)] = c.At
		}
	}
	var out []string
	for p, at := range first {
		var d *Change
		for i := range devs[key{p.Store, p.ID}] {
			if devs[key{p.Store, p.ID}][i].At == p.At {
				d = &devs[key{p.Store, p.ID}][i]
			}
		}
		var added []string
		via := Kind(0)
		for _, k := range []Kind{Permissions, HostAccess, AccessLevel} {
			for i := range cs {
				c := &cs[i]
				if c.Store == p.Store && c.ID == p.ID && c.At == at && c.Kind == k && c.Widens() {
					if via == 0 {
						via = k
					}
					if k != AccessLevel {
						added = append(added, c.Added()...)
					}
				}
			}
		}
		out = append(out, fmt.Sprintf("%s/%s day %d %s→%s %v joins developer@%d %s@%d", p.Store, p.ID, at/day, d.Before, d.After, added, p.At/day, via, at/day))
	}
	slices.Sort(out)
	return out
}

// TestTakeoversAgainstAPlainReading: on random change logs of a few
// listings, the takeovers derived are those of the rule read plainly.
func TestTakeoversAgainstAPlainReading(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 67))
	names := []string{"tabs", "cookies", "storage", "history"}
	for round := range 2000 {
		var cs []Change
		for _, id := range []string{"a", "b", "c"}[:1+r.IntN(3)] {
			owner := "O0"
			for n := range r.IntN(14) {
				c := Change{At: int64(r.IntN(400)) * day, ID: id, Store: views.Chrome}
				switch r.IntN(6) {
				case 0, 1:
					c.Kind, c.Before, c.After = Developer, owner, "O"+strconv.Itoa(n+1)
					owner = c.After
				case 2:
					added := []string{names[r.IntN(len(names))]}
					if r.IntN(3) == 0 {
						added = nil
					}
					c.Kind, c.nAdded, c.Set = Permissions, uint16(len(added)), append(added, "old")
				case 3:
					c.Kind, c.Widened, c.nAdded, c.Set = HostAccess, r.IntN(2) == 0, 1, []string{"https://" + names[r.IntN(len(names))] + ".example/*"}
				case 4:
					c.Kind, c.Before, c.After = AccessLevel, strconv.Itoa(1+r.IntN(4)), strconv.Itoa(1+r.IntN(4))
				default:
					c.Kind, c.Before, c.After = Version, "1", "2"
				}
				cs = append(cs, c)
			}
		}
		l := NewLog(slices.Clone(cs), 0)
		// The plain reading of the log's own changes (a repeat of a place
		// is kept once).
		var raw []Change
		for i := range l.Len() {
			if c := l.At(i); c.Kind != Takeover {
				raw = append(raw, *c)
			}
		}
		want := plainTakeovers(raw)
		var got []string
		for i := range l.Len() {
			if c := l.At(i); c.Kind == Takeover {
				got = append(got, c.Store.String()+"/"+c.ID+" "+takeoverText(l, c))
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: derived %q\nread plainly %q\nfrom %+v", round, got, want, raw)
		}
	}
}
