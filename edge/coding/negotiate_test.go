package coding

import (
	"strconv"
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	tests := []struct {
		name    string
		header  string
		absent  bool
		offered Set
		want    Coding
		ok      bool
	}{
		{name: "no header: identity", absent: true, offered: All, want: Identity, ok: true},
		{name: "empty header: identity only", header: "", offered: All, want: Identity, ok: true},
		{name: "blank header: identity only", header: " \t ", offered: All, want: Identity, ok: true},
		{name: "gzip", header: "gzip", offered: All, want: Gzip, ok: true},
		{name: "x-gzip is gzip", header: "x-gzip", offered: All, want: Gzip, ok: true},
		{name: "case does not matter", header: "GZip", offered: All, want: Gzip, ok: true},
		{name: "browser order: server prefers br", header: "gzip, deflate, br, zstd", offered: All, want: Brotli, ok: true},
		{name: "zstd over gzip at equal weight", header: "gzip, zstd", offered: All, want: Zstd, ok: true},
		{name: "higher weight wins over preference", header: "br;q=0.5, gzip;q=0.8", offered: All, want: Gzip, ok: true},
		{name: "three decimals", header: "br;q=0.001, gzip;q=0.002", offered: All, want: Gzip, ok: true},
		{name: "q=0 refuses a coding", header: "br;q=0, gzip", offered: All, want: Gzip, ok: true},
		{name: "Q in capitals", header: "br;Q=0, gzip", offered: All, want: Gzip, ok: true},
		{name: "spaces around the semicolon", header: "br ; q=0 , gzip", offered: All, want: Gzip, ok: true},
		{name: "tabs are whitespace", header: "br\t;\tq=0\t,\tzstd", offered: All, want: Zstd, ok: true},
		{name: "only unknown codings: identity", header: "deflate, compress", offered: All, want: Identity, ok: true},
		{name: "star takes every unlisted coding", header: "*", offered: All, want: Brotli, ok: true},
		{name: "star with an exception", header: "*, br;q=0", offered: All, want: Zstd, ok: true},
		{name: "star weight below a listed one", header: "*;q=0.1, gzip", offered: All, want: Gzip, ok: true},
		{name: "star;q=0 refuses identity too", header: "*;q=0", offered: All, want: Identity, ok: false},
		{name: "star;q=0 but gzip", header: "*;q=0, gzip", offered: All, want: Gzip, ok: true},
		{name: "star;q=0 but identity", header: "*;q=0, identity", offered: All, want: Identity, ok: true},
		{name: "identity;q=0 with gzip", header: "gzip, identity;q=0", offered: All, want: Gzip, ok: true},
		{name: "identity;q=0 alone", header: "identity;q=0", offered: All, want: Identity, ok: false},
		{name: "identity;q=0 on a small answer", header: "gzip, identity;q=0", offered: IdentityOnly, want: Identity, ok: false},
		{name: "small answer: identity", header: "gzip, br", offered: IdentityOnly, want: Identity, ok: true},
		{name: "listed identity wins on weight", header: "gzip;q=0.5, identity", offered: All, want: Identity, ok: true},
		{name: "equal weight: compressed first", header: "identity, gzip", offered: All, want: Gzip, ok: true},
		{name: "unlisted identity is below every weight", header: "gzip;q=0.001", offered: All, want: Gzip, ok: true},
		{name: "all compressed refused: identity", header: "gzip;q=0, br;q=0, zstd;q=0", offered: All, want: Identity, ok: true},
		{name: "first weight of a repeated coding", header: "gzip;q=0, gzip", offered: All, want: Identity, ok: true},
		{name: "q=1.000", header: "br;q=0.9, gzip;q=1.000", offered: All, want: Gzip, ok: true},
		{name: "q over 1 is ignored", header: "gzip;q=1.5, br;q=0.1", offered: All, want: Brotli, ok: true},
		{name: "q=2 is ignored", header: "br;q=2, zstd;q=0.1", offered: All, want: Zstd, ok: true},
		{name: "four decimals are ignored", header: "br;q=0.5000, gzip;q=0.1", offered: All, want: Gzip, ok: true},
		{name: "empty q is ignored", header: "br;q=, gzip;q=0.1", offered: All, want: Gzip, ok: true},
		{name: "q= with spaces is ignored", header: "br;q = 1, gzip;q=0.1", offered: All, want: Gzip, ok: true},
		{name: "other parameters are ignored", header: "br;level=1, gzip", offered: All, want: Gzip, ok: true},
		{name: "two weights are ignored", header: "br;q=1;q=0, gzip", offered: All, want: Gzip, ok: true},
		{name: "empty elements", header: ",,gzip,,", offered: All, want: Gzip, ok: true},
		{name: "not a token", header: "g zip, br", offered: All, want: Brotli, ok: true},
		{name: "a long unknown coding", header: strings.Repeat("x", 40) + ", zstd", offered: All, want: Zstd, ok: true},
		{name: "an ignored weight leaves the default", header: "gzip;q=abc", offered: All, want: Identity, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Choose([]byte(tt.header), !tt.absent, tt.offered, SmallFirst)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Choose(%q) = %v, %v; want %v, %v", tt.header, got, ok, tt.want, tt.ok)
			}
			ref, refOK := reference(tt.header, !tt.absent, tt.offered, SmallFirst)
			if ref != tt.want || refOK != tt.ok {
				t.Errorf("reference(%q) = %v, %v; want %v, %v", tt.header, ref, refOK, tt.want, tt.ok)
			}
		})
	}
}

func TestChooseOrder(t *testing.T) {
	for _, tt := range []struct {
		header string
		order  Order
		want   Coding
	}{
		{"gzip, deflate, br, zstd", SmallFirst, Brotli}, {"gzip, deflate, br, zstd", FastFirst, Zstd},
		{"gzip, br", FastFirst, Gzip}, {"gzip, br", SmallFirst, Brotli}, {"br, zstd;q=0.5", FastFirst, Brotli},
		{"gzip;q=0.4, br;q=0.5, zstd;q=0.5", FastFirst, Zstd}, {"*", FastFirst, Zstd},
	} {
		if got, ok := Choose([]byte(tt.header), true, All, tt.order); got != tt.want || !ok {
			t.Errorf("Choose(%q, %v) = %v, %v; want %v", tt.header, tt.order, got, ok, tt.want)
		}
	}
}

func TestChooseDoesNotAllocate(t *testing.T) {
	h := []byte("gzip;q=0.8, deflate, BR;q=0.9, zstd;q=0.7, *;q=0.1, identity;q=0")
	if n := testing.AllocsPerRun(100, func() { Choose(h, true, All, FastFirst) }); n != 0 {
		t.Errorf("Choose allocates %v times a call", n)
	}
}

// FuzzChoose checks Choose against reference, a plain reading of the same
// rules, on any header: the two agree, and neither panics.
func FuzzChoose(f *testing.F) {
	for _, s := range []string{"", "gzip", "gzip, deflate, br, zstd", "*;q=0", "identity;q=0, gzip;q=0.5",
		"br;q=0.001, x-gzip;Q=1.000", "a;b;c,,;q=1", "*, br;q=0", " gzip ;q=0.5 ,\tbr"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, header string, present bool) {
		for _, offered := range []Set{All, IdentityOnly} {
			order := SmallFirst
			if len(header)%2 == 1 {
				order = FastFirst
			}
			got, ok := Choose([]byte(header), present, offered, order)
			want, wantOK := reference(header, present, offered, order)
			if got != want || ok != wantOK {
				t.Fatalf("Choose(%q, %v) = %v, %v; the reference says %v, %v", header, offered, got, ok, want, wantOK)
			}
			if ok && !offered.Has(got) {
				t.Fatalf("Choose(%q) = %v, which is not offered", header, got)
			}
		}
	})
}

// reference is Choose written for reading, not speed.
func reference(header string, present bool, offered Set, order Order) (Coding, bool) {
	if !present {
		return Identity, true
	}
	weights := map[string]int{}
	for _, el := range strings.Split(header, ",") {
		parts := strings.Split(el, ";")
		name := strings.ToLower(strings.Trim(parts[0], " \t"))
		if name == "" || strings.ContainsFunc(name, func(r rune) bool { return !strings.ContainsRune(tokenChars, r) }) {
			continue
		}
		if name == "x-gzip" {
			name = "gzip"
		}
		w, valid := 1000, true
		if len(parts) > 2 {
			valid = false
		}
		if len(parts) == 2 {
			p := strings.Trim(parts[1], " \t")
			isQ := len(p) >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '='
			valid = isQ && validQ(p[2:])
			if valid {
				f, _ := strconv.ParseFloat(p[2:], 64)
				w = int(f*1000 + 0.5)
			}
		}
		if _, seen := weights[name]; valid && !seen {
			weights[name] = w
		}
	}
	best, bestQ := Identity, 0
	for _, c := range []Coding{order[0], order[1], order[2], Identity} {
		if !offered.Has(c) {
			continue
		}
		w, listed := weights[c.String()]
		if !listed {
			w, listed = weights["*"]
		}
		if !listed && c == Identity && bestQ == 0 {
			return Identity, true
		}
		if listed && w > bestQ {
			best, bestQ = c, w
		}
	}
	return best, bestQ > 0
}

const tokenChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~"

// validQ is RFC 9110's qvalue: "0" or "1", then at most three decimals,
// never above 1.
func validQ(v string) bool {
	if v == "" || len(v) > 5 || (v[0] != '0' && v[0] != '1') {
		return false
	}
	if len(v) == 1 {
		return true
	}
	if v[1] != '.' || strings.Trim(v[2:], "0123456789") != "" {
		return false
	}
	return v[0] == '0' || strings.Trim(v[2:], "0") == ""
}
