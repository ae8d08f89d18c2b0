// Package csvw writes the CSV tables the edge serves and exports, the
// same framing everywhere: UTF-8 opened by a byte-order mark (so that
// spreadsheets read it as UTF-8), RFC 4180 quoting, CRLF line ends. Text
// from the stores goes into a cell through Text, which keeps a
// spreadsheet from running it as a formula; the nil-to-cell helpers write
// an absent value as an empty cell. It imports nothing of the project:
// the legacy API, the versioned API's tables (through edge/answer) and
// the daily exports all write with it.
package csvw

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ContentType is the content type of a CSV answer.
const ContentType = "text/csv; charset=utf-8"

// BOM is the byte-order mark every table opens with.
const BOM = "\ufeff"

// formula holds the first bytes that make a spreadsheet read a cell as a
// formula (or, tab and carriage return, hide one behind white space).
const formula = "=+-@\t\r"

// Text returns store-supplied text for a CSV cell that a spreadsheet
// will not run as a formula: a cell beginning with =, +, -, @, a tab or a
// carriage return gets a leading apostrophe (OWASP's rule against CSV
// injection), which spreadsheets show as text and do not display. Any
// other text is returned as it is.
func Text(s string) string {
	if s != "" && strings.IndexByte(formula, s[0]) >= 0 {
		return "'" + s
	}
	return s
}

// NewWriter returns a CSV writer onto w that has written the byte-order
// mark and ends its records with CRLF. Like any csv.Writer it buffers:
// Flush, then Error, says whether everything (the mark included)
// reached w.
func NewWriter(w io.Writer) *csv.Writer {
	bw := bufio.NewWriter(w)
	bw.WriteString(BOM)     // an error stays in bw, and Flush returns it
	cw := csv.NewWriter(bw) // writes through bw: bufio does not wrap a buffer of its size again
	cw.UseCRLF = true
	return cw
}

// Table returns a whole table: the byte-order mark, the header and the
// rows. Cells of text from the stores must have been passed through Text.
func Table(header []string, rows [][]string) ([]byte, error) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Write(header)
	w.WriteAll(rows) // flushes
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("encode CSV table: %w", err)
	}
	return buf.Bytes(), nil
}

// Int is the cell of an optional integer: empty when v is nil.
func Int(v *int64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(*v, 10)
}

// Uint is the cell of an optional unsigned integer: empty when v is nil.
func Uint(v *uint64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatUint(*v, 10)
}

// Float is the cell of an optional float in its shortest exact decimal
// form, no exponent: empty when v is nil.
func Float(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// String is the cell of an optional string as it is (pass store text
// through Text too): empty when v is nil.
func String(v *string) string {
	if v == nil {
		return ""
	}
	return *v
}

// Time is the cell of an optional instant in RFC 3339, in the instant's
// own zone: empty when t is nil.
func Time(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.Format(time.RFC3339)
}
