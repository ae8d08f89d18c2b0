package trust

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

const token = "GF8nSPJeFDMCaghBZtGq9gxkjUaN9nrIHUnIp1i07BAS0FTU6JFcsI5l0Rt0RdvJ"

var (
	keysOnce sync.Map // token → *Keys: Argon2id costs 64 MiB and a moment
)

func keysOf(t *testing.T, token string) *Keys {
	t.Helper()
	if k, ok := keysOnce.Load(token); ok {
		return k.(*Keys)
	}
	k, err := New(token)
	if err != nil {
		t.Fatal(err)
	}
	keysOnce.Store(token, k)
	return k
}

func TestShortTokensAreRefused(t *testing.T) {
	for _, tok := range []string{"", "short", strings.Repeat("x", MinTokenLen-1)} {
		if _, err := New(tok); err == nil {
			t.Errorf("a token of %d characters was taken", len(tok))
		}
	}
}

// handshake connects a client with client's TLS to a server with
// server's over loopback and returns each side's error and the bytes the
// server read after the handshake.
func handshake(t *testing.T, server, client *tls.Config) (serverErr, clientErr error, got string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			serverErr = err
			return
		}
		defer c.Close()
		tc := tls.Server(c, server)
		if serverErr = tc.Handshake(); serverErr != nil {
			return
		}
		b, _ := io.ReadAll(tc)
		got = string(b)
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), client)
	if err == nil {
		// TLS 1.3: the server checks the client's certificate after the
		// client's handshake ends; the write fails or is never read.
		_, err = c.Write([]byte("secret request"))
		c.Close()
	}
	clientErr = err
	<-done
	return serverErr, clientErr, got
}

// TestOnlyTheFleetShakesHands: two edges with the same token connect;
// an edge with another token, or a client with no certificate, gets no
// byte of a request read, and a server of another fleet is refused
// before the client sends one.
func TestOnlyTheFleetShakesHands(t *testing.T) {
	a, b := keysOf(t, token), keysOf(t, token+"-same")
	same, err := New(token) // derived again: the same authority
	if err != nil {
		t.Fatal(err)
	}
	if serr, cerr, got := handshake(t, a.ServerTLS(), same.ClientTLS()); serr != nil || cerr != nil || got != "secret request" {
		t.Fatalf("same fleet: server %v, client %v, read %q", serr, cerr, got)
	}
	// A client of another fleet: the server refuses it.
	if serr, _, got := handshake(t, a.ServerTLS(), b.ClientTLS()); serr == nil || got != "" {
		t.Errorf("a client of another fleet: server %v, read %q", serr, got)
	}
	// A client with no certificate at all.
	anon := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}
	if serr, _, got := handshake(t, a.ServerTLS(), anon); serr == nil || got != "" {
		t.Errorf("a client without a certificate: server %v, read %q", serr, got)
	}
	// A server of another fleet: the client refuses it and sends nothing.
	if _, cerr, got := handshake(t, b.ServerTLS(), a.ClientTLS()); cerr == nil || got != "" {
		t.Errorf("a server of another fleet: client %v, server read %q", cerr, got)
	}
	var cv *tls.CertificateVerificationError
	if _, cerr, _ := handshake(t, b.ServerTLS(), a.ClientTLS()); !errors.As(cerr, &cv) {
		t.Errorf("a server of another fleet: %v, want a certificate verification error", cerr)
	}
}

func TestSignatures(t *testing.T) {
	a, b := keysOf(t, token), keysOf(t, token+"-same")
	sum := strings.Repeat("ab", 32)
	sig := a.SignState(sum, 7)
	if err := a.VerifyState(sig, sum, 7); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		keys *Keys
		sig  string
		sum  string
		gen  uint64
	}{
		"another fleet":       {b, sig, sum, 7},
		"another generation":  {a, sig, sum, 8},
		"another digest":      {a, sig, strings.Repeat("ab", 31) + "ac", 7},
		"no signature":        {a, "", sum, 7},
		"without its version": {a, strings.TrimPrefix(sig, "v1="), sum, 7},
		"not base64":          {a, "v1=!!", sum, 7},
	} {
		if err := c.keys.VerifyState(c.sig, c.sum, c.gen); !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: %v, want ErrBadSignature", name, err)
		}
	}
	m := a.SignMember("election", "/p", "1a", "edge-1", "https://x")
	if !a.VerifyMember(m, "election", "/p", "1a", "edge-1", "https://x") {
		t.Error("a member's own signature does not verify")
	}
	// Fields are length-prefixed: moving a boundary breaks it.
	if a.VerifyMember(m, "election", "/p", "1a", "edge-1h", "ttps://x") || b.VerifyMember(m, "election", "/p", "1a", "edge-1", "https://x") {
		t.Error("a member's signature verifies for other fields or another fleet")
	}
}

func TestDeltaSignatures(t *testing.T) {
	a, b := keysOf(t, token), keysOf(t, token+"-same")
	sum, base, result := strings.Repeat("ab", 32), `"state-1"`, `"state-2"`
	sig := a.SignDelta(sum, 7, base, result)
	if err := a.VerifyDelta(sig, sum, 7, base, result); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"another fleet":      b.VerifyDelta(sig, sum, 7, base, result),
		"another generation": a.VerifyDelta(sig, sum, 8, base, result),
		"another base":       a.VerifyDelta(sig, sum, 7, `"state-0"`, result),
		"another result":     a.VerifyDelta(sig, sum, 7, base, `"state-3"`),
		"another digest":     a.VerifyDelta(sig, strings.Repeat("ab", 31)+"ac", 7, base, result),
		// Neither kind of signature passes for the other.
		"a whole state's as a delta's": a.VerifyDelta(a.SignState(sum, 7), sum, 7, base, result),
		"a delta's as a whole state's": a.VerifyState(sig, sum, 7),
	} {
		if !errors.Is(err, ErrBadSignature) {
			t.Errorf("%s: %v, want ErrBadSignature", name, err)
		}
	}
}

// TestEachSaltTrustsTheOther: in one fleet, edges that sign with the
// shared salt and with the fleet's own trust one another (handshakes both
// ways, signatures of members, states and deltas), and an edge of an
// earlier release (the shared salt alone) trusts the first; what an edge
// signs with its fleet's own salt is refused by keys of the shared salt
// alone and by another fleet's, so a table of guesses made against the
// shared salt does not serve against it.
func TestEachSaltTrustsTheOther(t *testing.T) {
	newFor := func(fleet string, salt Salt) *Keys {
		k, err := NewFor(token, fleet, salt)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	shared, own := newFor("/edge/fleets/a", SaltShared), newFor("/edge/fleets/a", SaltFleet)
	earlier, otherFleet := keysOf(t, token), newFor("/edge/fleets/b", SaltFleet)
	sum, base, result := strings.Repeat("ab", 32), `"state-1"`, `"state-2"`
	member := []string{"election", "/edge/fleets/a", "1a", "edge-1", "https://x"}
	for _, c := range []struct {
		name       string
		signer     *Keys
		checker    *Keys
		trusted    bool
		handshakes bool // mutual TLS, either one serving: both must trust the other
	}{
		{"shared, checked by own", shared, own, true, true},
		{"own, checked by shared", own, shared, true, true},
		{"shared, checked by an earlier release", shared, earlier, true, true},
		{"earlier release, checked by own", earlier, own, true, false}, // but the earlier release cannot check own's
		{"own, checked by an earlier release", own, earlier, false, false},
		{"own, checked by another fleet's own", own, otherFleet, false, false},
		{"another fleet's own, checked by own", otherFleet, own, false, false},
	} {
		sig := c.signer.SignMember(member...)
		if got := c.checker.VerifyMember(sig, member...); got != c.trusted {
			t.Errorf("%s: a member's signature verifies %v, want %v", c.name, got, c.trusted)
		}
		if err := c.checker.VerifyState(c.signer.SignState(sum, 7), sum, 7); (err == nil) != c.trusted {
			t.Errorf("%s: a state's signature: %v", c.name, err)
		}
		if err := c.checker.VerifyDelta(c.signer.SignDelta(sum, 7, base, result), sum, 7, base, result); (err == nil) != c.trusted {
			t.Errorf("%s: a delta's signature: %v", c.name, err)
		}
		serr, cerr, got := handshake(t, c.checker.ServerTLS(), c.signer.ClientTLS())
		if ok := serr == nil && cerr == nil && got == "secret request"; ok != c.handshakes {
			t.Errorf("%s: the checker serves the signer: server %v, client %v, read %q", c.name, serr, cerr, got)
		}
		serr, cerr, got = handshake(t, c.signer.ServerTLS(), c.checker.ClientTLS())
		if ok := serr == nil && cerr == nil && got == "secret request"; ok != c.handshakes {
			t.Errorf("%s: the signer serves the checker: server %v, client %v, read %q", c.name, serr, cerr, got)
		}
	}
	if _, err := NewFor(token, "", SaltFleet); err == nil {
		t.Error("a fleet's own salt without the fleet's name was taken")
	}
	for _, s := range []string{"shared", "fleet"} {
		if _, err := ParseSalt(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseSalt("own"); err == nil {
		t.Error("an unknown salt was taken")
	}
}
