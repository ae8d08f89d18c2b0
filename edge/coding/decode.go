package coding

import (
	"bytes"
	"fmt"
	"io"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Decode undoes the content coding named by a Content-Encoding value
// ("" or "identity": body itself; "gzip" or "x-gzip", "br", "zstd"), for
// clients of the edge: its tests and benchmarks.
func Decode(contentEncoding string, body []byte) ([]byte, error) {
	var r io.Reader
	switch contentEncoding {
	case "", "identity":
		return body, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(bytes.NewReader(body))
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("no coding %q", contentEncoding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", contentEncoding, err)
	}
	return out, nil
}
