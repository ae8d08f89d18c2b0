package answer

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
)

// CSVContentType is the content type of CSV answers.
const CSVContentType = "text/csv; charset=utf-8"

// CSV returns the answer of a table: UTF-8 with a byte-order mark (so
// that spreadsheets read it as UTF-8), a header row, RFC 4180 quoting and
// CRLF line ends. Cells of text from the stores must be passed through
// CSVText first.
func CSV(header []string, rows [][]string) (*Answer, error) {
	var buf bytes.Buffer
	buf.WriteString("\ufeff")
	w := csv.NewWriter(&buf)
	w.UseCRLF = true
	w.Write(header)
	w.WriteAll(rows) // flushes
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("encode CSV answer: %w", err)
	}
	return New(buf.Bytes(), CSVContentType), nil
}

// CSVText returns store-supplied text for a CSV cell that a spreadsheet
// will not run as a formula: a cell beginning with =, +, -, @, a tab or a
// carriage return gets a leading apostrophe (OWASP's rule against CSV
// injection), which spreadsheets show as text and do not display.
func CSVText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
