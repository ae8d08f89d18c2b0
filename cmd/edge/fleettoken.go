package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/trustelem/zxcvbn"
)

// minTokenBits is the least strength a fleet token may show, in bits of
// estimated guesses (tokenBits). The fleet port shows a certificate made
// from the token, so a guess can be checked offline at any speed: 128
// bits is the margin of a key, not of a password.
const minTokenBits = 128

// maxEstimated is how much of a token the estimate reads: zxcvbn's
// matching grows faster than the length, and a token is refused, never
// admitted, for what lies past it.
const maxEstimated = 128

// checkFleetToken refuses a fleet token a guesser would find: one that
// zxcvbn (a Go port of Dropbox's estimator, which knows dictionaries,
// names, common passwords, keyboard walks, sequences, repeated blocks,
// dates and l33t spellings) estimates at fewer than minTokenBits bits of
// guesses, or whose hex or base64 decodes to text of fewer bits (the hex
// of a phrase is as weak as the phrase). zxcvbn counts a stretch it
// recognises nothing in at 10 guesses a character, never more, so it
// underrates a random token (a random base64 token of 43 or 44
// characters estimates at about 135-146 bits) but never overrates a
// patterned one; a token of fewer than 39 characters cannot pass,
// whatever its alphabet.
func checkFleetToken(token string) error {
	if bits := tokenBits(token); bits < minTokenBits {
		return fmt.Errorf("the fleet token is guessable (estimated at about %.0f bits of guesses, at least %d wanted; "+
			"words, names, repeated blocks, sequences and keyboard walks count for little): make a random one with "+
			"`edge fleet token` and set it as EDGE_FLEET_TOKEN, the same on every edge of the fleet", bits, minTokenBits)
	}
	return nil
}

// tokenBits estimates the strength of token in bits: log2 of zxcvbn's
// guesses, of token and of the text its hex or base64 decodes to, the
// least of them.
func tokenBits(token string) float64 {
	bits := zxcvbnBits(token)
	for _, text := range decodedTexts(token) {
		bits = min(bits, zxcvbnBits(text))
	}
	return bits
}

// zxcvbnBits is log2 of zxcvbn's guesses for the first maxEstimated bytes
// of s (0 for bytes that are not UTF-8, which zxcvbn does not read).
func zxcvbnBits(s string) float64 {
	if len(s) > maxEstimated {
		s = s[:maxEstimated]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	g := zxcvbn.PasswordStrength(s, nil).Guesses
	if g < 1 {
		return 0
	}
	return math.Log2(g)
}

// decodedTexts returns what token decodes to as hex and as base64
// (standard or URL alphabet, padded or not), each only when it is
// printable text: 32 random bytes are all printable once in about 10^14.
func decodedTexts(token string) []string {
	var out []string
	add := func(b []byte, err error) {
		if err == nil && len(b) > 0 && printable(b) {
			out = append(out, string(b))
		}
	}
	add(hex.DecodeString(token))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		add(enc.DecodeString(token))
	}
	return out
}

// printable reports whether b is UTF-8 text of printable characters and
// spaces.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if !unicode.IsPrint(r) && !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// tokenAlphabet is the alphabet of the tokens newFleetToken makes: letters
// and digits only, which need no quoting in an environment variable, a
// shell, a systemd unit, a URL or YAML (quote it in YAML all the same, as
// any string that might read as a number).
const tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// tokenLength is the length of a new token: 64 characters of
// tokenAlphabet hold about 381 bits, and zxcvbn estimates one at about
// 200, far from the floor.
const tokenLength = 64

// newFleetToken returns a new random fleet token from r (crypto/rand's
// Reader): tokenLength characters of tokenAlphabet, each drawn uniformly
// (bytes past the largest multiple of the alphabet's size are drawn
// again). A token the check would refuse (it never is, in practice) is
// drawn again, so that what the command prints is always accepted.
func newFleetToken(r io.Reader) (string, error) {
	const limit = 256 - 256%len(tokenAlphabet)
	for {
		var b strings.Builder
		buf := make([]byte, 2*tokenLength)
		for b.Len() < tokenLength {
			if _, err := io.ReadFull(r, buf); err != nil {
				return "", fmt.Errorf("reading random bytes: %w", err)
			}
			for _, c := range buf {
				if int(c) < limit && b.Len() < tokenLength {
					b.WriteByte(tokenAlphabet[int(c)%len(tokenAlphabet)])
				}
			}
		}
		if t := b.String(); checkFleetToken(t) == nil {
			return t, nil
		}
	}
}

// runFleet is the fleet command: "edge fleet token" prints a new fleet
// token.
func runFleet(_ context.Context, args []string, stdout, stderr io.Writer) error {
	const use = "usage: edge fleet token\n\nPrints a new random fleet token (64 letters and digits, about 381 bits from crypto/rand) for EDGE_FLEET_TOKEN:\n" +
		"give the same one to every edge of the fleet, as a variable or a secret file, never as a flag (flags show in the process list).\n"
	switch {
	case len(args) == 1 && args[0] == "token":
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help"):
		fmt.Fprint(stderr, use)
		return flag.ErrHelp
	default:
		fmt.Fprint(stderr, use)
		return errors.New("want the subcommand token")
	}
	t, err := newFleetToken(rand.Reader)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, t)
	return err
}
