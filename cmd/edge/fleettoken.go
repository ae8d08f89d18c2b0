package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// tokenAlphabet is the alphabet of the tokens newFleetToken makes: letters
// and digits only, which need no quoting in an environment variable, a
// shell, a systemd unit, a URL or YAML (quote it in YAML all the same, as
// any string that might read as a number).
const tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// tokenLength is the length of a new token's random part: 64
// characters of tokenAlphabet hold about 381 bits.
const tokenLength = 64

// newFleetToken returns a new random fleet token from r (crypto/rand's
// Reader): tokenPrefix, tokenLength characters of tokenAlphabet, each
// drawn uniformly (bytes past the largest multiple of the alphabet's size
// are drawn again), and their checksum. A token the check would refuse
// (it never is, in practice) is drawn again, so that what the command
// prints is always accepted.
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
		body := b.String()
		if t := tokenPrefix + body + checksum(body); checkFleetToken(t) == nil {
			return t, nil
		}
	}
}

// runFleet is the fleet command: "edge fleet token" prints a new fleet
// token.
func runFleet(_ context.Context, args []string, stdout, stderr io.Writer) error {
	const use = "usage: edge fleet token\n\nPrints a new random fleet token (eft1_, 64 letters and digits from crypto/rand, about 381 bits, and a checksum) for EDGE_FLEET_TOKEN:\n" +
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
