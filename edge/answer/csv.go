package answer

import "github.com/edge-stats/edge/internal/csvw"

// CSVContentType is the content type of CSV answers.
const CSVContentType = csvw.ContentType

// CSV returns the answer of a table as package csvw writes it: UTF-8
// with a byte-order mark, a header row, RFC 4180 quoting and CRLF line
// ends. Cells of text from the stores must be passed through CSVText
// first.
func CSV(header []string, rows [][]string) (*Answer, error) {
	body, err := csvw.Table(header, rows)
	if err != nil {
		return nil, err
	}
	return New(body, CSVContentType), nil
}

// CSVText returns store-supplied text for a CSV cell that a spreadsheet
// will not run as a formula (csvw.Text).
func CSVText(s string) string { return csvw.Text(s) }
