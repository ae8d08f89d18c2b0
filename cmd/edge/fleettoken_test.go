package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// seeded is a reproducible stream of random bytes, so that the tables of
// random tokens are the same on every run.
func seeded(seed byte) *mrand.ChaCha8 {
	var s [32]byte
	s[0] = seed
	return mrand.NewChaCha8(s)
}

// TestWeakFleetTokensRefused: tokens a guesser tries are
// refused, with an error that says how to make a good one, however many
// distinct bytes they count (each of the three passed the check
// of bytes' frequencies).
func TestWeakFleetTokensRefused(t *testing.T) {
	block := "Xk3!q9Zr"
	weak := []string{
		"changeme-changeme-changeme-changeme",
		"edge-fleet-token-edge-fleet-token",
		"0123456789abcdef0123456789abcdef",
		strings.Repeat("a", 32),
		strings.Repeat(" ", 40),
		strings.Repeat("password", 5),
		"correcthorsebatterystaplecorrecthorsebatterystaple",
		"the-fleet-token-of-the-serve-tests-0123456789", // the tests' token until now
		"Production-Fleet-Secret-For-Edge-Servers-2026",
		"iloveyou-sunshine-dragon-monkey-football-princess",
		strings.Repeat(block, 6),                                                     // a random block, repeated
		strings.Repeat("7f3a9c", 8),                                                  // a short hex block, repeated
		"qwertyuiopasdfghjklzxcvbnmqwertyuiopasdfghjkl",                              // a keyboard walk
		"1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p1qaz2wsx",                               // another, in columns
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTU",                            // sequences
		"2026-01-01-2026-02-02-2026-03-03-2026-04-04",                                // dates
		hex.EncodeToString([]byte("our fleet token for production, do not share")),   // the hex of a phrase
		base64.StdEncoding.EncodeToString([]byte("our fleet token for production!")), // its base64
		hex.EncodeToString(make([]byte, 32)),                                         // 64 × 0
		"8c1f0e5b7a92d3c6f4e1a0b9c8d7e6f5",                                           // 32 random hex digits: too short
	}
	weak = append(weak, attackersTokens()...)
	for _, tok := range weak {
		err := checkFleetToken(tok)
		if err == nil {
			t.Errorf("%q (%.0f bits) is taken as a fleet token", tok, tokenBits(tok))
			continue
		}
		if !strings.Contains(err.Error(), "edge fleet token") || !strings.Contains(err.Error(), "EDGE_FLEET_TOKEN") {
			t.Errorf("%q is refused without saying what to do: %v", tok, err)
		}
	}
}

// TestRandomFleetTokensAccepted: random tokens of the usual forms are
// taken, 50 of each: the command's, 32 random bytes in base64 (43 or 44
// characters, the shortest form that clears the floor, by about 7 bits at
// the worst of these) and in hex.
func TestRandomFleetTokensAccepted(t *testing.T) {
	if err := checkFleetToken(fleetToken); err != nil {
		t.Errorf("the tests' own fleet token is refused: %v", err)
	}
	r := seeded(74)
	seen := map[string]bool{}
	for i := range 30 {
		made, err := newFleetToken(r)
		if err != nil {
			t.Fatal(err)
		}
		if len(made) != len(tokenPrefix)+tokenLength+tokenCheckLen || !strings.HasPrefix(made, tokenPrefix) || seen[made] {
			t.Fatalf("token %d %q: want %d new characters of %s", i, made, tokenLength, tokenAlphabet)
		}
		seen[made] = true
		b := make([]byte, 32+i%17)
		r.Read(b)
		for _, tok := range []string{made, base64.StdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b),
			hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b))} {
			if err := checkFleetToken(tok); err != nil {
				t.Errorf("the random token %q is refused: %v", tok, err)
			}
		}
	}
}

// TestFleetTokenCommand: edge fleet token prints a new token, from
// crypto/rand, that the check takes; without its subcommand it says how
// it is used.
func TestFleetTokenCommand(t *testing.T) {
	ctx := context.Background()
	var printed []string
	for range 2 {
		code, out, errs := runCmd(t, ctx, "fleet", "token")
		tok := strings.TrimSuffix(out, "\n")
		if code != 0 || strings.Count(out, "\n") != 1 || !strings.HasPrefix(tok, tokenPrefix) || len(tok) != len(tokenPrefix)+tokenLength+tokenCheckLen {
			t.Fatalf("edge fleet token: %d %q %q, want one line of %d letters and digits", code, out, errs, tokenLength)
		}
		if err := checkFleetToken(tok); err != nil {
			t.Errorf("the check refuses the command's token %q: %v", tok, err)
		}
		printed = append(printed, tok)
	}
	if printed[0] == printed[1] {
		t.Errorf("edge fleet token printed %q twice", printed[0])
	}
	if code, _, errs := runCmd(t, ctx, "fleet"); code != 1 || !strings.Contains(errs, "usage: edge fleet token") {
		t.Errorf("edge fleet: %d %q, want 1 and its usage", code, errs)
	}
	if code, _, errs := runCmd(t, ctx, "fleet", "--help"); code != 0 || !strings.Contains(errs, "EDGE_FLEET_TOKEN") {
		t.Errorf("edge fleet --help: %d %q", code, errs)
	}
	if _, err := newFleetToken(rand.Reader); err != nil {
		t.Error(err)
	}
}

// TestServeRefusesWeakFleetToken: the edge binary, given the weak
// tokens as EDGE_FLEET_TOKEN, refuses to start, saying what to do, and
// starts past the check with the command's token (it then stops at the
// busy listen address).
func TestServeRefusesWeakFleetToken(t *testing.T) {
	ctx := context.Background()
	_, good, _ := runCmd(t, ctx, "fleet", "token")
	for _, c := range []struct {
		token, want string
	}{
		{"changeme-changeme-changeme-changeme", "guessable"},
		{"edge-fleet-token-edge-fleet-token", "guessable"},
		{"0123456789abcdef0123456789abcdef", "guessable"},
		{strings.TrimSpace(good), "--listen"},
	} {
		cmd := exec.CommandContext(ctx, os.Args[0], "serve", "--zk", "127.0.0.1:2181", "--listen", "127.0.0.1:99999")
		cmd.Env = append(os.Environ(), envTestAsEdge+"=1", "EDGE_FLEET_TOKEN="+c.token)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), c.want) || strings.Contains(string(out), c.token) {
			t.Errorf("edge serve with EDGE_FLEET_TOKEN=%q: %v %s, want exit 1 naming %s (and not the token)", c.token, err, out, c.want)
		}
		if c.want == "guessable" && !strings.Contains(string(out), "edge fleet token") {
			t.Errorf("edge serve with EDGE_FLEET_TOKEN=%q does not say how to make a token: %s", c.token, out)
		}
	}
}
