package transport

// Framing of the requests a connection's replay path may answer, or hand
// to fasthttp while keeping track of where each request starts (see
// Replayer). Only a request whose every byte is spelled one plain way
// qualifies, so that fasthttp cannot read it as anything else: the
// request line "GET /… HTTP/1.1" (or HEAD), header lines of a token
// name, a colon and visible characters, every line ended by CRLF, and the
// empty line. Everything else (a body, a bare CR or LF, obsolete line
// folding, a space before a colon, an Expect or Upgrade header, another
// method or version) takes the connection off the replay path for good:
// fasthttp alone reads it from then on.

// FrameKind says what the head of a connection's unread bytes is.
type FrameKind uint8

// The kinds of head Frame tells apart.
const (
	// FrameShort is the start of a request that may still qualify: read
	// more.
	FrameShort FrameKind = iota
	// FrameWhole is a whole qualifying request of n bytes, with no body.
	FrameWhole
	// FrameOther is anything else.
	FrameOther
)

// MaxFrame is the longest request the replay path reads: a request line
// and headers together. A longer one is fasthttp's to read (and refuse
// past its limits).
const MaxFrame = 4 << 10

// Frame reads the request at the start of b. For FrameWhole, n is its
// length, from its first byte to its empty line's LF.
func Frame(b []byte) (n int, kind FrameKind) {
	// The request line: the method, one space, an origin-form target of
	// visible characters, one space, HTTP/1.1, CRLF.
	i := 0
	switch {
	case hasPrefix(b, "GET /"):
		i = 5
	case hasPrefix(b, "HEAD /"):
		i = 6
	case isPrefix(b, "GET /") || isPrefix(b, "HEAD /"):
		return 0, FrameShort
	default:
		return 0, FrameOther
	}
	for ; i < len(b) && b[i] > ' ' && b[i] < 0x7f; i++ {
	}
	if i == len(b) {
		return short(i)
	}
	if b[i] != ' ' {
		return 0, FrameOther
	}
	i++
	const version = "HTTP/1.1\r\n"
	for j := 0; j < len(version); j, i = j+1, i+1 {
		if i == len(b) {
			return short(i)
		}
		if b[i] != version[j] {
			return 0, FrameOther
		}
	}
	// Header lines, then the empty line.
	for {
		if i == len(b) {
			return short(i)
		}
		if b[i] == '\r' {
			if i+1 == len(b) {
				return short(i + 1)
			}
			if b[i+1] != '\n' {
				return 0, FrameOther
			}
			if i+2 > MaxFrame {
				return 0, FrameOther
			}
			return i + 2, FrameWhole
		}
		// A name of token characters, then a colon.
		start := i
		for ; i < len(b) && isToken(b[i]); i++ {
		}
		if i == len(b) {
			return short(i)
		}
		if i == start || b[i] != ':' || refused(b[start:i]) {
			return 0, FrameOther
		}
		// A value of visible characters, spaces and tabs (and obs-text),
		// then CRLF.
		for i++; i < len(b) && (b[i] >= ' ' && b[i] != 0x7f || b[i] == '\t'); i++ {
		}
		if i == len(b) {
			return short(i)
		}
		if b[i] != '\r' {
			return 0, FrameOther
		}
		if i+1 == len(b) {
			return short(i + 1)
		}
		if b[i+1] != '\n' {
			return 0, FrameOther
		}
		i += 2
	}
}

// short is the answer for a qualifying start of read bytes: FrameShort
// until it is longer than MaxFrame.
func short(read int) (int, FrameKind) {
	if read >= MaxFrame {
		return 0, FrameOther
	}
	return 0, FrameShort
}

func hasPrefix(b []byte, p string) bool { return len(b) >= len(p) && string(b[:len(p)]) == p }

// isPrefix reports whether b is a proper prefix of p.
func isPrefix(b []byte, p string) bool { return len(b) < len(p) && string(b) == p[:len(b)] }

// isToken reports whether c may be in a header's name (RFC 9110 tchar).
func isToken(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// refused reports whether a header of this name takes a request off the
// replay path: one that gives the request a body, asks for an interim
// answer, or a change of protocol.
func refused(name []byte) bool {
	for _, r := range [...]string{"content-length", "transfer-encoding", "expect", "upgrade"} {
		if len(name) == len(r) && equalFold(name, r) {
			return true
		}
	}
	return false
}

// equalFold compares ASCII case-insensitively; r is lower case.
func equalFold(b []byte, r string) bool {
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != r[i] {
			return false
		}
	}
	return true
}
