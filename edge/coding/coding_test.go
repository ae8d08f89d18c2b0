package coding

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"testing"
)

// decode reverses Compress.
func decode(t testing.TB, c Coding, b []byte) []byte {
	t.Helper()
	out, err := Decode(c.String(), b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCompressRoundTrips(t *testing.T) {
	cs, err := NewCompressors()
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string][]byte{"empty": {}, "one byte": {'x'}, "listings": fixture(t, "listings.json"),
		"summary": fixture(t, "summary.json"), "random": bytes.Repeat([]byte("\x00\xff\x13\x37"), 5000)}
	for name, body := range bodies {
		for c := Identity; c < Count; c++ {
			for _, l := range []Level{Fast, Best} {
				out, err := cs.Compress(c, l, body)
				if err != nil {
					t.Fatalf("%s %v %d: %v", name, c, l, err)
				}
				if got := decode(t, c, out); !bytes.Equal(got, body) {
					t.Errorf("%s %v level %d: decoded %d bytes, want the %d compressed", name, c, l, len(got), len(body))
				}
				if c != Identity && name == "listings" && len(out) > len(body)/4 {
					t.Errorf("%s %v level %d: %d of %d bytes; JSON compresses at least 4 to 1", name, c, l, len(out), len(body))
				}
			}
		}
	}
}

// TestCompressConcurrently shares the pooled writers and the zstd encoders
// between goroutines (run with -race).
func TestCompressConcurrently(t *testing.T) {
	cs, err := NewCompressors()
	if err != nil {
		t.Fatal(err)
	}
	body := fixture(t, "extensions.json")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 6 {
				c := Coding(1 + (g+i)%3)
				out, err := cs.Compress(c, Level(i%2), body)
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(decode(t, c, out), body) {
					t.Errorf("%v: round trip differs", c)
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkCompress gives each coding's cost in microseconds a kilobyte
// and its bytes, at both levels, on a listings page and the legacy
// extensions page: the figures of bench/README.md, Compression.
func BenchmarkCompress(b *testing.B) {
	cs, err := NewCompressors()
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"listings.json", "extensions.json"} {
		body := fixture(b, name)
		for c := Brotli; c < Count; c++ {
			for _, l := range []Level{Fast, Best} {
				b.Run(fmt.Sprintf("%s/%v/%s", name, c, []string{"fast", "best"}[l]), func(b *testing.B) {
					b.SetBytes(int64(len(body)))
					var n int
					for b.Loop() {
						out, err := cs.Compress(c, l, body)
						if err != nil {
							b.Fatal(err)
						}
						n = len(out)
					}
					b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/(float64(len(body))/1024), "µs/KB")
					b.ReportMetric(float64(n), "bytes")
				})
			}
		}
	}
}

func BenchmarkChoose(b *testing.B) {
	h := []byte("gzip, deflate, br, zstd")
	for b.Loop() {
		Choose(h, true, All, SmallFirst)
	}
}
