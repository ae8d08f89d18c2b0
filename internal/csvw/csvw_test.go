package csvw

import (
	"bytes"
	"encoding/csv"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"uBlock Origin", "uBlock Origin"},
		{"=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"},
		{"+1", "'+1"},
		{"-1", "'-1"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"a=1", "a=1"},       // only the first byte counts
		{" =1", " =1"},       // a space is not a formula's start
		{"'=1", "'=1"},       // already text
		{"\n=1", "\n=1"},     // a line feed starts a new line of the cell, not a formula
		{"é=1", "é=1"},       // a multi-byte first rune
		{"\xff=1", "\xff=1"}, // invalid UTF-8 passes as it is
		{"１+1", "１+1"},       // a full-width digit is not a sign
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTable(t *testing.T) {
	for _, c := range []struct {
		name   string
		header []string
		rows   [][]string
		want   string
	}{
		{"header only", []string{"a", "b"}, nil, BOM + "a,b\r\n"},
		{"rows", []string{"day", "id"}, [][]string{{"2026-12-01", "x"}, {"2026-12-02", "y"}},
			BOM + "day,id\r\n2026-12-01,x\r\n2026-12-02,y\r\n"},
		{"quoting", []string{"name"}, [][]string{{`a "b", c`}, {" lead"}, {"two\nlines"}, {"cr\rdropped"}},
			BOM + "name\r\n\"a \"\"b\"\", c\"\r\n\" lead\"\r\n\"two\r\nlines\"\r\n\"crdropped\"\r\n"},
		{"empty cells", []string{"a", "b", "c"}, [][]string{{"", Int(nil), Float(nil)}}, BOM + "a,b,c\r\n,,\r\n"},
	} {
		got, err := Table(c.header, c.rows)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterReportsTheSinksError(t *testing.T) {
	w := NewWriter(failing{})
	w.Write([]string{"a"})
	w.Flush()
	if err := w.Error(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Error() = %v, want the sink's error", err)
	}
}

func TestCells(t *testing.T) {
	i, u, f, s := int64(-12), uint64(1<<63), 4.25, "x"
	tm := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	small, big := 0.000001, 1e21
	for _, c := range []struct{ got, want string }{
		{Int(nil), ""}, {Int(&i), "-12"},
		{Uint(nil), ""}, {Uint(&u), "9223372036854775808"},
		{Float(nil), ""}, {Float(&f), "4.25"}, {Float(&small), "0.000001"}, {Float(&big), "1000000000000000000000"},
		{String(nil), ""}, {String(&s), "x"},
		{Time(nil), ""}, {Time(&tm), "2026-12-03T07:00:00Z"},
	} {
		if c.got != c.want {
			t.Errorf("cell %q, want %q", c.got, c.want)
		}
	}
}

// FuzzText: any text from a store, written as a cell through Text and
// NewWriter, reads back (encoding/csv) as one cell that a spreadsheet
// will not run: it does not start with a formula's byte, and it is the
// text itself, or the text behind one apostrophe when the text starts
// with one. The table opens with the byte-order mark and every record
// ends with CRLF.
func FuzzText(f *testing.F) {
	for _, s := range []string{"", "plain", "=1+1", "+", "-x", "@a", "\t=1", "\r=1", "\r\n", "\"q\"", "a,b", "\xff", " =1", "'=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cell := Text(s)
		if cell != s && cell != "'"+s {
			t.Fatalf("Text(%q) = %q: neither the text nor the text behind an apostrophe", s, cell)
		}
		if cell != "" && strings.IndexByte(formula, cell[0]) >= 0 {
			t.Fatalf("Text(%q) = %q starts with a formula's byte", s, cell)
		}
		var buf bytes.Buffer
		w := NewWriter(&buf)
		w.Write([]string{cell, "end"})
		w.Flush()
		if err := w.Error(); err != nil {
			t.Fatal(err)
		}
		out, ok := bytes.CutPrefix(buf.Bytes(), []byte(BOM))
		if !ok || !bytes.HasSuffix(out, []byte("end\r\n")) {
			t.Fatalf("table %q: not the mark, the record and CRLF", buf.Bytes())
		}
		recs, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatalf("table %q: %v", out, err)
		}
		// A CRLF writer drops a carriage return and writes a line feed as
		// CRLF, which a reader gives back as a line feed.
		want := strings.ReplaceAll(cell, "\r", "")
		if len(recs) != 1 || len(recs[0]) != 2 || recs[0][0] != want || recs[0][1] != "end" {
			t.Fatalf("table %q read back as %q, want [[%q end]]", out, recs, want)
		}
		if got := recs[0][0]; got != "" && strings.IndexByte(formula, got[0]) >= 0 {
			t.Fatalf("cell read back as %q starts with a formula's byte", got)
		}
	})
}

// TestWriterIsTheMarkAndACRLFWriter: NewWriter's bytes are the mark and
// then exactly what encoding/csv's writer with CRLF writes, whatever the
// sink's chunks, so a table moved onto this package keeps its bytes.
func TestWriterIsTheMarkAndACRLFWriter(t *testing.T) {
	rows := [][]string{{"a", "b"}, {"", " x", "y\nz"}, {`"q"`, "c,d", "\r\n"}, {strings.Repeat("long ", 2000)}}
	var want bytes.Buffer
	want.WriteString(BOM)
	std := csv.NewWriter(&want)
	std.UseCRLF = true
	std.WriteAll(rows)
	var got bytes.Buffer
	w := NewWriter(&got)
	w.WriteAll(rows)
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("NewWriter wrote %q, want %q", got.Bytes(), want.Bytes())
	}
}
