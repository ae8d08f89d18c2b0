package main

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"net/url"
	"strings"
	"sync"

	"github.com/trustelem/zxcvbn"
)

// The fleet token check. No estimator can prove a token random: zxcvbn
// counts a stretch it recognises nothing in at 10 guesses a character,
// so the hex of any hash, of a text it cannot see, scores like a random
// token. The check therefore takes a token in the format `edge fleet
// token` prints (tokenPrefix, 64 characters from crypto/rand and a
// checksum) as generated, and of any other token refuses what it can
// recognise:
//   - a token of fewer than minTokenLen or more than maxTokenLen
//     characters, or with a character that is not printable ASCII
//     (no spaces, no control characters, nothing beyond ASCII: a
//     token is pasted into environment files and secret stores, where
//     such characters are lost or added unseen);
//   - a well-known constant: the md5, sha1, sha256 or sha512 of the
//     empty string or of one of a short built-in list of the most
//     common passwords and phrases (with or without echo's newline),
//     the digits of pi or e, the two pangram and lorem ipsum texts;
//   - a token mostly made of characters in order or in a series
//     (123456789101112…, 19701971…, a1b2c3…, azbycx…);
//   - a token zxcvbn estimates under minTokenBits, itself, reversed,
//     without separators (0x, ':', '-', '_', '.'), or as the text its
//     hex (of any length, or reversed), base64 (any alphabet), base32
//     or URL-escaping decodes to (control and NUL bytes dropped, so
//     the hex of UTF-16 text is read as text), the least of them.
//
// It cannot catch a token derived from a secret it does not know (the
// hash of a company name, a password run through a KDF), nor text hidden
// in an encoding it does not decode: those score as random. Hence the
// docs' advice: make the token with `edge fleet token` (or `openssl rand
// -base64 48`).

// minTokenBits is the least strength a token not in the generated format
// may show, in bits of estimated guesses. The fleet port shows a
// certificate made from the token, so a guess can be checked offline at
// any speed: 128 bits is the margin of a key, not of a password.
const minTokenBits = 128

// minTokenLen and maxTokenLen bound a token's length in characters:
// 32 random bytes in base64 (43) is the shortest usual form that
// clears minTokenBits; the cap bounds the check's work.
const (
	minTokenLen = 40
	maxTokenLen = 512
)

// maxEstimated is how much of each text zxcvbn reads: its matching
// grows much faster than the length (dense l33t spellings most), and a
// window of this size holds more than minTokenBits for a random text.
const maxEstimated = 64

// maxScored is how many of a token's readings (candidates, in their
// order: the token, without separators, reversed, then what it decodes
// to) zxcvbn estimates; every reading gets the other rules.
const maxScored = 8

// maxSeries is the share of a token's steps that may repeat the step
// before them (at a stride of 1 to 4 characters) before it counts as a
// series: a random token's steps repeat a few times in a hundred.
const maxSeries = 0.5

// errWeakToken is in every refusal of a token that is not strong, after
// what to set instead and before why this one is refused.
var errWeakToken = errors.New("the fleet token given is guessable")

// checkFleetToken refuses a fleet token a guesser could find (see the
// package's notes above): it returns nil for a token in the generated
// format with a valid checksum, and for another token that passes every
// rule.
func checkFleetToken(token string) error {
	why := weakness(token)
	if why == "" {
		return nil
	}
	return fmt.Errorf("set EDGE_FLEET_TOKEN to a random token, the same on every edge of the fleet: make one with `edge fleet token` "+
		"(or take 32 random bytes or more in base64, `openssl rand -base64 48`); %w (%s)", errWeakToken, why)
}

// weakness says why token is refused ("" when it is not).
func weakness(token string) string {
	if body, ok := strings.CutPrefix(token, tokenPrefix); ok {
		if !validGenerated(body) {
			return "it starts as a token of `edge fleet token` does, but its length or checksum is wrong: copy it whole"
		}
		return ""
	}
	if len(token) < minTokenLen || len(token) > maxTokenLen {
		return fmt.Sprintf("%d characters, %d to %d wanted", len(token), minTokenLen, maxTokenLen)
	}
	for i := 0; i < len(token); i++ {
		if c := token[i]; c < 0x21 || c > 0x7e {
			return fmt.Sprintf("a character that is not printable ASCII at byte %d (spaces, newlines and characters beyond ASCII are not taken)", i)
		}
	}
	texts, blobs := candidates(token)
	for _, b := range blobs {
		if knownBytes(b) {
			return "it is, or holds, the hash of a common password or of nothing"
		}
	}
	bits := math.Inf(1)
	for i, t := range texts {
		if why := known(t); why != "" {
			return why
		}
		if len(t) >= 16 && series(t) {
			return "it is mostly characters in order or in a series"
		}
		if i < maxScored {
			bits = min(bits, zxcvbnBits(t))
		}
	}
	if bits < minTokenBits {
		return fmt.Sprintf("estimated at about %.0f bits of guesses, at least %d wanted; words, names, repeated blocks, sequences and keyboard walks count for little", bits, minTokenBits)
	}
	return ""
}

// tokenBits is the least estimate weakness takes of token, in bits (for
// the tests' messages).
func tokenBits(token string) float64 {
	texts, _ := candidates(token)
	bits := math.Inf(1)
	for _, t := range texts {
		bits = min(bits, zxcvbnBits(t))
	}
	return bits
}

// candidates returns the texts token is read as (itself, reversed,
// without separators, and what its encodings decode to when that is
// mostly printable, two levels deep) and the bytes its encodings decode
// to.
func candidates(token string) (texts []string, blobs [][]byte) {
	seen := map[string]bool{}
	addText := func(s string) bool {
		if s == "" || seen[s] {
			return false
		}
		seen[s] = true
		texts = append(texts, s)
		return true
	}
	var read func(s string, depth int)
	read = func(s string, depth int) {
		n := normalise(s)
		for _, t := range []string{s, n, reverse(s), reverse(n)} {
			addText(t)
		}
		if depth == 0 {
			return
		}
		for _, b := range decodings(s, n) {
			blobs = append(blobs, b)
			if t, ok := textOf(b); ok && !seen[t] {
				read(t, depth-1)
			}
		}
	}
	read(token, 2)
	return texts, blobs
}

// normalise strips a 0x prefix and the separators ':', '-', '_', '.',
// ',' and spaces from s, and lower-cases it when what is left is hex.
func normalise(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		s = s[2:]
	}
	s = strings.Map(func(r rune) rune {
		if strings.ContainsRune(":-_., \t\r\n", r) {
			return -1
		}
		return r
	}, s)
	if isHex(s) {
		s = strings.ToLower(s)
	}
	return s
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			return false
		}
	}
	return s != ""
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// decodings returns what s (and n, s normalised) decode to as hex (of
// even length, or without its first or last digit, and reversed), base64
// in any alphabet, base32 and URL-escaping.
func decodings(s, n string) [][]byte {
	var out [][]byte
	add := func(b []byte, err error) {
		if err == nil && len(b) > 0 {
			out = append(out, b)
		}
	}
	if isHex(n) {
		for _, h := range []string{n, reverse(n)} {
			if len(h)%2 == 1 {
				add(hex.DecodeString(h[1:]))
				h = h[:len(h)-1]
			}
			add(hex.DecodeString(h))
		}
	}
	for _, x := range []string{s, strings.TrimRight(s, "=")} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			add(enc.DecodeString(x))
		}
		up := strings.ToUpper(x)
		for _, enc := range []*base32.Encoding{base32.StdEncoding, base32.HexEncoding, base32.StdEncoding.WithPadding(base32.NoPadding), base32.HexEncoding.WithPadding(base32.NoPadding)} {
			add(enc.DecodeString(up))
		}
	}
	if strings.Contains(s, "%") {
		if u, err := url.PathUnescape(s); err == nil && u != s {
			out = append(out, []byte(u))
		}
	}
	return out
}

// textOf returns b as text when it is mostly text: NUL and other control
// bytes dropped (the hex of UTF-16 text, a phrase with a tab), at least
// three quarters of what is left printable ASCII or UTF-8 letters. Random
// bytes are that once in far more than 10^9 for 16 bytes or more.
func textOf(b []byte) (string, bool) {
	var kept []byte
	printable := 0
	for _, c := range b {
		switch {
		case c < 0x20 || c == 0x7f:
		case c < 0x7f:
			printable++
			kept = append(kept, c)
		default:
			kept = append(kept, c)
		}
	}
	if len(kept) < 8 || printable*4 < len(kept)*3 {
		return "", false
	}
	return string(bytes.ToValidUTF8(kept, nil)), true
}

// series reports whether most of s's steps, at some stride of 1 to 4
// characters, repeat the step before them: counting (1234…, 10111213…,
// 19701971…), interleaved alphabets (a1b2c3…, azbycx…), repeated blocks.
func series(s string) bool {
	for k := 1; k <= 4; k++ {
		same, all := 0, 0
		for i := 2 * k; i < len(s); i++ {
			all++
			if int(s[i])-int(s[i-k]) == int(s[i-k])-int(s[i-2*k]) {
				same++
			}
		}
		if all > 0 && float64(same) > maxSeries*float64(all) {
			return true
		}
	}
	return false
}

// known says which well-known constant s is or holds ("" for none).
func known(s string) string {
	lower := strings.ToLower(s)
	for _, h := range wellKnown().hexes {
		if strings.Contains(lower, h) {
			return "it is, or holds, the hash of a common password or of nothing"
		}
	}
	var digits, letters strings.Builder
	for i := 0; i < len(lower); i++ {
		switch c := lower[i]; {
		case c >= '0' && c <= '9':
			digits.WriteByte(c)
		case c >= 'a' && c <= 'z':
			letters.WriteByte(c)
		}
	}
	for _, d := range []string{piDigits, eDigits} {
		for i := 0; i+16 <= len(d); i++ {
			if strings.Contains(digits.String(), d[i:i+16]) {
				return "it holds digits of pi or e"
			}
		}
	}
	for _, p := range []string{"thequickbrownfox", "xofnworbkciuqeht", "loremipsum", "muspimerol", "consecteturadipiscing"} {
		if strings.Contains(letters.String(), p) {
			return "it holds a well-known text (the quick brown fox, lorem ipsum)"
		}
	}
	return ""
}

// knownBytes reports whether b is or holds a well-known hash's bytes.
func knownBytes(b []byte) bool {
	for _, h := range wellKnown().raw {
		if bytes.Contains(b, h) {
			return true
		}
	}
	return false
}

// piDigits and eDigits are the first 100 digits of pi and e.
const (
	piDigits = "3141592653589793238462643383279502884197169399375105820974944592307816406286208998628034825342117067"
	eDigits  = "2718281828459045235360287471352662497757247093699959574966967627724076630353547594571382178525166427"
)

// commonSecrets are the texts whose hashes are refused: nothing, the most
// common passwords and the phrases a tutorial uses.
var commonSecrets = []string{"", "password", "123456", "12345678", "123456789", "1234567890", "qwerty", "abc123", "111111",
	"letmein", "changeme", "secret", "admin", "welcome", "iloveyou", "monkey", "dragon", "football", "passw0rd", "test",
	"token", "fleet", "edge", "default", "root", "toor", "hello", "trustno1", "master", "sunshine", "princess", "1q2w3e4r",
	"The quick brown fox jumps over the lazy dog", "Lorem ipsum dolor sit amet, consectetur adipiscing elit"}

// hashes are the md5, sha1, sha256 and sha512 of commonSecrets, with
// and without a newline, raw and in hex.
type hashes struct {
	raw   [][]byte
	hexes []string
}

// wellKnown returns the hashes, computed once.
var wellKnown = sync.OnceValue(func() hashes {
	var h hashes
	for _, s := range commonSecrets {
		for _, text := range []string{s, s + "\n"} {
			m, s1, s2, s5 := md5.Sum([]byte(text)), sha1.Sum([]byte(text)), sha256.Sum256([]byte(text)), sha512.Sum512([]byte(text))
			for _, b := range [][]byte{m[:], s1[:], s2[:], s5[:]} {
				h.raw = append(h.raw, b)
				h.hexes = append(h.hexes, hex.EncodeToString(b), reverse(hex.EncodeToString(b)))
			}
		}
	}
	return h
})

// zxcvbnBits is log2 of zxcvbn's guesses for the first maxEstimated
// bytes of s.
func zxcvbnBits(s string) float64 {
	if len(s) > maxEstimated {
		s = strings.ToValidUTF8(s[:maxEstimated], "")
	}
	g := zxcvbn.PasswordStrength(s, nil).Guesses
	if g < 1 {
		return 0
	}
	return math.Log2(g)
}

// tokenPrefix starts a token of `edge fleet token`: eft1_, 64 characters
// of tokenAlphabet from crypto/rand, and tokenCheckLen of the checksum.
const tokenPrefix = "eft1_"

// tokenCheckLen is the length of a generated token's checksum: the CRC-32
// of what precedes it, in tokenAlphabet (6 characters hold 35 bits).
const tokenCheckLen = 6

// checksum returns the checksum of a generated token's body.
func checksum(body string) string {
	n := crc32.ChecksumIEEE([]byte(tokenPrefix + body))
	out := make([]byte, tokenCheckLen)
	for i := tokenCheckLen - 1; i >= 0; i-- {
		out[i] = tokenAlphabet[n%uint32(len(tokenAlphabet))]
		n /= uint32(len(tokenAlphabet))
	}
	return string(out)
}

// validGenerated reports whether rest (a token after tokenPrefix) is
// tokenLength characters of tokenAlphabet and their checksum, and holds
// no series (which a random draw never shows: a made-up body with its
// checksum computed is not taken as generated then).
func validGenerated(rest string) bool {
	if len(rest) != tokenLength+tokenCheckLen || strings.Trim(rest, tokenAlphabet) != "" {
		return false
	}
	body := rest[:tokenLength]
	return checksum(body) == rest[tokenLength:] && !series(body) && known(body) == "" && distinct(body) >= 24
}

func distinct(s string) int {
	seen := map[byte]bool{}
	for i := 0; i < len(s); i++ {
		seen[s[i]] = true
	}
	return len(seen)
}
