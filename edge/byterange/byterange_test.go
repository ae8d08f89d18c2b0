package byterange

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	const size = 1000
	cases := []struct {
		header string
		want   []Range
		out    Outcome
	}{
		{"bytes=0-99", []Range{{0, 100}}, Partial},
		{"BYTES = 0-99", []Range{{0, 100}}, Partial},
		{"bytes=900-", []Range{{900, 100}}, Partial},
		{"bytes=-100", []Range{{900, 100}}, Partial},
		{"bytes=-5000", []Range{{0, 1000}}, Partial},                   // a suffix longer than the file: all of it
		{"bytes=990-5000", []Range{{990, 10}}, Partial},                // past the end: to the end
		{"bytes=0-0,-1", []Range{{0, 1}, {999, 1}}, Partial},           // first and last byte
		{"bytes=0-99, 50-149", []Range{{0, 150}}, Partial},             // overlapping: merged
		{"bytes=500-599,0-99", []Range{{0, 100}, {500, 100}}, Partial}, // sorted
		{"bytes=0-9,40-49", []Range{{0, 50}}, Partial},                 // 30 bytes apart: merged
		{"bytes=0-,0-,0-", []Range{{0, 1000}}, Partial},                // repeated: once
		{"bytes=,0-9,", []Range{{0, 10}}, Partial},                     // empty elements
		{"bytes=1000-", nil, Unsatisfiable},
		{"bytes=-0", nil, Unsatisfiable},
		{"bytes=5000-6000,1000-", nil, Unsatisfiable},
		{"bytes=99999999999999999999-", nil, Unsatisfiable}, // past int64: past the file
		{"bytes=0-99999999999999999999", []Range{{0, 1000}}, Partial},
		{"", nil, Whole},
		{"bytes=", nil, Whole},
		{"items=0-9", nil, Whole},
		{"bytes=9-0", nil, Whole}, // last before first: the header is ignored
		{"bytes=a-9", nil, Whole},
		{"bytes=0-9x", nil, Whole},
		{"bytes=+1-9", nil, Whole},
		{"bytes=0x10-", nil, Whole},
		{"bytes=--1", nil, Whole},
		{"bytes=0-9;1-2", nil, Whole},
		{"bytes 0-9", nil, Whole},
		{"bytes=0-9,\x001-2", nil, Whole},
		{"bytes=" + strings.Repeat("0-0,", MaxRanges+1), nil, Whole}, // too many: ignored
		{"bytes=" + strings.Repeat("0-0,", MaxRanges), []Range{{0, 1}}, Partial},
	}
	for _, c := range cases {
		got, out := Parse(c.header, size)
		if out != c.out || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %v %v, want %v %v", c.header, got, out, c.want, c.out)
		}
	}
	if _, out := Parse("bytes=0-", 0); out != Unsatisfiable {
		t.Errorf("a range of an empty file: %v", out)
	}
	if r, out := Parse("bytes=-1", 1); out != Partial || r[0] != (Range{0, 1}) {
		t.Errorf("the last byte of a one-byte file: %v %v", r, out)
	}
}

// TestMultipart reads the body of several ranges with the standard
// library's multipart reader: each part's Content-Range and bytes, and a
// length that is the body's.
func TestMultipart(t *testing.T) {
	file := bytes.Repeat([]byte("0123456789"), 100)
	rs, _ := Parse("bytes=0-4,500-509,-3", int64(len(file)))
	m := NewMultipart(bytes.NewReader(file), int64(len(file)), rs, "application/vnd.apache.parquet", "edge-boundary")
	body, err := io.ReadAll(m.Reader())
	if err != nil || int64(len(body)) != m.Len() {
		t.Fatalf("%d bytes, Len %d, %v", len(body), m.Len(), err)
	}
	_, params, err := mime.ParseMediaType(m.ContentType())
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for i, r := range rs {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		got, _ := io.ReadAll(p)
		if p.Header.Get("Content-Range") != ContentRange(r, int64(len(file))) || !bytes.Equal(got, file[r.Start:r.Start+r.Length]) {
			t.Errorf("part %d: %q %q", i, p.Header.Get("Content-Range"), got)
		}
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("after the parts: %v", err)
	}
}

// FuzzParse holds Parse to what its callers rely on whatever the header:
// ranges inside the file, sorted, apart, never more bytes than the file,
// and a multipart body as long as it says.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"bytes=0-99", "bytes=-5,10-", "bytes=0-0,2-2,4-4", "bytes=99999999999999999999-", "Bytes=,,", "bytes=5-1"} {
		f.Add(s, int64(1000))
	}
	f.Fuzz(func(t *testing.T, header string, size int64) {
		size = max(0, size%100_000)
		rs, out := Parse(header, size)
		if (out == Partial) != (len(rs) > 0) {
			t.Fatalf("%q: %v with %d ranges", header, out, len(rs))
		}
		total, end := int64(0), int64(-1)
		for _, r := range rs {
			if r.Length <= 0 || r.Start < 0 || r.Start+r.Length > size || r.Start <= end {
				t.Fatalf("%q, size %d: range %+v after %d", header, size, r, end)
			}
			end, total = r.Start+r.Length, total+r.Length
		}
		if total > size {
			t.Fatalf("%q: %d bytes of a file of %d", header, total, size)
		}
		if out == Partial && len(rs) > 1 && size < 1<<16 {
			m := NewMultipart(bytes.NewReader(make([]byte, size)), size, rs, "x/y", "b")
			if n, _ := io.Copy(io.Discard, m.Reader()); n != m.Len() {
				t.Fatalf("%q: body of %d bytes, Len %d", header, n, m.Len())
			}
		}
	})
}
