package changes

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/edge-stats/edge/views"
)

// Bounds of a log a reader accepts: a damaged or hostile file is an error,
// never an allocation past what it holds.
const (
	maxLogChanges = 1 << 28
	maxLogString  = 1 << 16
	maxLogSet     = 1 << 12
)

// WriteLog writes l (nil: an empty log) to w: its window's start, its
// count, then each change in feed order. Takeovers are derived, not
// written: a reader derives them again (NewLog), and one of a release
// that knows no takeover reads the log as before.
func WriteLog(w io.Writer, l *Log) error {
	b := binary.AppendVarint(nil, l.From())
	b = binary.AppendUvarint(b, uint64(l.Len()-l.Derived()))
	for i := range l.Len() {
		c := l.At(i)
		if c.Kind == Takeover {
			continue
		}
		b = binary.AppendVarint(b, c.At)
		widened := byte(0)
		if c.Widened {
			widened = 1
		}
		b = append(b, byte(c.Store), byte(c.Kind), widened)
		b = appendString(b, c.ID)
		b = appendString(b, c.Before)
		b = appendString(b, c.After)
		b = binary.AppendUvarint(b, uint64(c.nAdded))
		b = binary.AppendUvarint(b, uint64(len(c.Set)))
		for _, s := range c.Set {
			b = appendString(b, s)
		}
		if len(b) >= 1<<20 {
			if _, err := w.Write(b); err != nil {
				return fmt.Errorf("write changes: %w", err)
			}
			b = b[:0]
		}
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("write changes: %w", err)
	}
	return nil
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// ReadLog reads a log WriteLog wrote. intern, when not nil, returns the
// string to keep for each id and value read (a listing's own id, one copy
// of a permission), so that the log shares what the replica holds.
func ReadLog(br *bufio.Reader, intern func(s views.Store, id string, value bool) string) (*Log, error) {
	from, err := binary.ReadVarint(br)
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	if n > maxLogChanges {
		return nil, fmt.Errorf("changes: %d changes", n)
	}
	if intern == nil {
		intern = func(_ views.Store, s string, _ bool) string { return s }
	}
	cs := make([]Change, 0, min(n, 1<<16))
	var buf []byte
	str := func() (string, error) {
		l, err := binary.ReadUvarint(br)
		if err != nil {
			return "", err
		}
		if l > maxLogString {
			return "", fmt.Errorf("a string of %d bytes", l)
		}
		if uint64(cap(buf)) < l {
			buf = make([]byte, l)
		}
		buf = buf[:l]
		if _, err := io.ReadFull(br, buf); err != nil {
			return "", err
		}
		return string(buf), nil
	}
	var prev Pos
	for i := range n {
		var c Change
		var head [3]byte
		if c.At, err = binary.ReadVarint(br); err == nil {
			_, err = io.ReadFull(br, head[:])
		}
		if err != nil {
			return nil, fmt.Errorf("change %d: %w", i, err)
		}
		c.Store, c.Kind, c.Widened = views.Store(head[0]), Kind(head[1]), head[2] == 1
		if !c.Store.Valid() || c.Kind == 0 || c.Kind >= numKinds || c.Kind == Takeover || head[2] > 1 {
			return nil, fmt.Errorf("change %d: store %d, kind %d, widened %d", i, head[0], head[1], head[2])
		}
		var id string
		if id, err = str(); err == nil {
			c.ID = intern(c.Store, id, false)
			if c.Before, err = str(); err == nil {
				c.After, err = str()
			}
		}
		if err != nil {
			return nil, fmt.Errorf("change %d: %w", i, err)
		}
		c.Before, c.After = intern(c.Store, c.Before, true), intern(c.Store, c.After, true)
		added, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, fmt.Errorf("change %d: %w", i, err)
		}
		size, err := binary.ReadUvarint(br)
		if err != nil {
			return nil, fmt.Errorf("change %d: %w", i, err)
		}
		if size > maxLogSet || added > size {
			return nil, fmt.Errorf("change %d: %d of %d names added", i, added, size)
		}
		c.nAdded = uint16(added)
		if size > 0 {
			c.Set = make([]string, size)
			for k := range c.Set {
				s, err := str()
				if err != nil {
					return nil, fmt.Errorf("change %d: %w", i, err)
				}
				c.Set[k] = intern(c.Store, s, true)
			}
		}
		if p := PosOf(&c); i > 0 && p.Compare(prev) <= 0 {
			return nil, errors.New("changes out of order")
		} else {
			prev = p
		}
		if c.At < from {
			return nil, fmt.Errorf("change %d before the window", i)
		}
		cs = append(cs, c)
	}
	return NewLog(cs, from), nil
}
