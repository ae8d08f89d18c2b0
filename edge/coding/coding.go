// Package coding is the content codings of the edge's answers: which one a
// request accepts (Accept-Encoding, RFC 9110 section 12.5.3) and the
// compressors that make them (gzip and zstd from klauspost/compress,
// brotli from andybalholm/brotli), at a fast level for an answer built
// while a request waits and at the best level for one built before anyone
// asks.
package coding

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Coding is a content coding of an answer.
type Coding uint8

// The codings (their order of preference is an Order).
const (
	Identity Coding = iota
	Brotli
	Zstd
	Gzip
	// Count is the number of codings, identity included.
	Count
)

// names are the codings' tokens in Accept-Encoding and Content-Encoding.
var names = [Count]string{Identity: "identity", Brotli: "br", Zstd: "zstd", Gzip: "gzip"}

// String returns the coding's token, as Content-Encoding names it.
func (c Coding) String() string {
	if c < Count {
		return names[c]
	}
	return fmt.Sprintf("coding(%d)", uint8(c))
}

// Level is how hard a compressor works.
type Level uint8

const (
	// Fast is for an answer compressed while a request waits (a cache
	// miss): a few microseconds a kilobyte (bench/README.md, Compression).
	Fast Level = iota
	// Best is for an answer compressed before anyone asks for it (when a
	// state is published, or once at start for the static documents).
	Best
)

// The compressors' levels. gzip and zstd at Fast run at their fastest
// settings; brotli's level 4 is about as fast as gzip's 1 and a fifth
// smaller on JSON. At Best, brotli's 11 is some ten times slower than its
// 9 for 2-3% fewer bytes, which is worth it only for answers made once
// and sent for a whole state: the publish pays it, never a request.
var (
	gzipLevel   = [...]int{Fast: gzip.BestSpeed, Best: gzip.BestCompression}
	brotliLevel = [...]int{Fast: 4, Best: brotli.BestCompression}
	zstdLevel   = [...]zstd.EncoderLevel{Fast: zstd.SpeedFastest, Best: zstd.SpeedBestCompression}
)

// bestBrotliMax is the largest body brotli compresses at level 11 at
// Best; a larger one (the API reference's script, 1 MB) takes level 9,
// which is some ten times faster for a few percent more bytes, so that
// starting an edge stays cheap.
const bestBrotliMax = 256 << 10

const bigBrotliLevel = 9

// Compressors holds reusable encoders; it is safe for concurrent use.
// The zero value is not usable: call NewCompressors.
type Compressors struct {
	gzip   [2]sync.Pool // *gzip.Writer by level
	brotli [2]sync.Pool // *brotli.Writer by level
	zstd   [2]*zstd.Encoder
}

// NewCompressors returns the compressors of every coding and level.
func NewCompressors() (*Compressors, error) {
	c := &Compressors{}
	for l := Fast; l <= Best; l++ {
		c.gzip[l].New = func() any {
			w, _ := gzip.NewWriterLevel(nil, gzipLevel[l]) // the level is valid
			return w
		}
		c.brotli[l].New = func() any { return brotli.NewWriterLevel(nil, brotliLevel[l]) }
		// EncodeAll on one encoder is safe for concurrent use; a window of
		// 1 MiB bounds what a decoder must hold (RFC 8878 section 3.1.1.1.2
		// asks for at most 8 MiB) and exceeds every answer's size but the
		// largest.
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstdLevel[l]), zstd.WithWindowSize(1<<20),
			zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true))
		if err != nil {
			return nil, fmt.Errorf("zstd encoder: %w", err)
		}
		c.zstd[l] = enc
	}
	return c, nil
}

// Compress returns body in coding c at level l, in a new slice of its
// exact length. Identity returns body itself.
func (cs *Compressors) Compress(c Coding, l Level, body []byte) ([]byte, error) {
	if l > Best {
		l = Best
	}
	switch c {
	case Identity:
		return body, nil
	case Zstd:
		out := cs.zstd[l].EncodeAll(body, make([]byte, 0, len(body)/4+64))
		return bytes.Clone(out), nil
	case Gzip:
		w := cs.gzip[l].Get().(*gzip.Writer)
		defer cs.gzip[l].Put(w)
		return stream(w, body)
	case Brotli:
		if l == Best && len(body) > bestBrotliMax {
			return stream(brotli.NewWriterLevel(nil, bigBrotliLevel), body)
		}
		w := cs.brotli[l].Get().(*brotli.Writer)
		defer cs.brotli[l].Put(w)
		return stream(w, body)
	}
	return nil, fmt.Errorf("compress: no coding %d", c)
}

// stream compresses body with w, reset onto a fresh buffer.
func stream(w interface {
	io.WriteCloser
	Reset(io.Writer)
}, body []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(body)/4 + 64)
	w.Reset(&buf)
	if _, err := w.Write(body); err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	return bytes.Clone(buf.Bytes()), nil
}

// shared is the process's compressors, made on first use: encoders are
// pooled and hold no state between calls.
var shared = sync.OnceValues(NewCompressors)

// Compress returns body in coding c at level l with the process's shared
// compressors (Compressors.Compress).
func Compress(c Coding, l Level, body []byte) ([]byte, error) {
	cs, err := shared()
	if err != nil {
		return nil, err
	}
	return cs.Compress(c, l, body)
}
