package byterange

import (
	"io"
	"strings"
)

// Multipart is the body of a 206 of several ranges (multipart/byteranges,
// RFC 9110 14.6), read from a file as it is sent: a part's headers, then
// its bytes, for each range, then the closing boundary.
type Multipart struct {
	Boundary string
	parts    []io.Reader
	length   int64
}

// NewMultipart returns the body of ranges rs of file f (size bytes, of
// contentType), split by boundary.
func NewMultipart(f io.ReaderAt, size int64, rs []Range, contentType, boundary string) *Multipart {
	m := &Multipart{Boundary: boundary}
	for i, r := range rs {
		head := "\r\n--" + boundary + "\r\nContent-Type: " + contentType + "\r\nContent-Range: " + ContentRange(r, size) + "\r\n\r\n"
		if i == 0 {
			head = head[2:] // no line break before the first boundary
		}
		m.parts = append(m.parts, strings.NewReader(head), io.NewSectionReader(f, r.Start, r.Length))
		m.length += int64(len(head)) + r.Length
	}
	tail := "\r\n--" + boundary + "--\r\n"
	m.parts = append(m.parts, strings.NewReader(tail))
	m.length += int64(len(tail))
	return m
}

// ContentType returns the answer's Content-Type.
func (m *Multipart) ContentType() string { return "multipart/byteranges; boundary=" + m.Boundary }

// Len returns the body's length in bytes.
func (m *Multipart) Len() int64 { return m.length }

// Reader returns the body.
func (m *Multipart) Reader() io.Reader { return io.MultiReader(m.parts...) }
