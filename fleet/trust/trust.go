// Package trust is how the edges of a fleet prove to one another that
// they hold the fleet's token (EDGE_FLEET_TOKEN) without ever sending it.
//
// Every key is derived from the token, stretched with Argon2id so that a
// token guessed offline costs what a password hash costs, once with the
// salt every release shares and once with the fleet's own (NewFor, Salt):
// an edge signs with one set and accepts both.
//
//   - a certificate authority: an Ed25519 key that every edge derives
//     alike. Each edge makes a certificate of its own at start, signed by
//     it, and the fleet's addresses speak TLS 1.3 with both sides'
//     certificates required and checked against it (mutual TLS). A
//     follower so knows that the address it dials is an edge of the fleet
//     before it sends a byte of a request, and the leader knows the same
//     of the follower before it reads one; the channel is encrypted.
//   - a key that signs each state's digest (SignState): a follower reads
//     only a state the fleet signed, whatever the channel it came by.
//   - a key that signs each election node (SignMember), so that a node
//     that someone else wrote into ZooKeeper takes no part in it; the
//     node names the pin of its edge's certificate (Pin), so that a
//     follower takes at the elected address that edge and no other of
//     the fleet.
//
// The threat model is in docs/operations.md, *Trust within a fleet*.
package trust

import (
	"crypto/ed25519"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"runtime"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"
)

// MinTokenLen is the shortest fleet token accepted: `openssl rand -base64
// 32` makes one of 44 characters.
const MinTokenLen = 32

// ServerName is the name every edge's certificate carries and every
// follower asks for: an edge is trusted for holding the fleet's key, not
// for its host name or address.
const ServerName = "fleet.edge.invalid"

// Keys are what an edge derives from the fleet's token.
type Keys struct {
	server, client *tls.Config
	// sets are the key sets this edge accepts; it signs with the first.
	sets []keySet
	pin  string // this edge's certificate's (Pin)
}

// keySet is the signing keys one salt derives from the token (its
// certificate authority goes into the TLS configurations' pools).
type keySet struct {
	member, state []byte
}

// Salt names a salt that the token is stretched with.
type Salt int

const (
	// SaltShared is the fixed salt that every release so far derives
	// and earlier ones sign with: one table of guesses serves against
	// every fleet that signs with it.
	SaltShared Salt = iota
	// SaltFleet is the fleet's own: its name (the election's path).
	SaltFleet
)

// ParseSalt reads a salt's name: "shared" or "fleet".
func ParseSalt(s string) (Salt, error) {
	switch s {
	case "shared":
		return SaltShared, nil
	case "fleet":
		return SaltFleet, nil
	}
	return 0, fmt.Errorf("salt %q: want shared (the fixed salt, which the release before reads too) or fleet (the fleet's own)", s)
}

// New derives the fleet's keys from token with the shared salt only and
// makes this edge's certificate (NewFor's with no fleet name).
func New(token string) (*Keys, error) { return NewFor(token, "", SaltShared) }

// NewFor derives the fleet's keys from token and makes this edge's
// certificate. A token shorter than MinTokenLen is refused.
//
// With a fleet name (the election's path), two sets are derived: the
// shared salt's and the fleet's own. The edge accepts either set's
// signatures and certificates, and signs (and has its certificate
// signed) with sign's: edges that sign with either trust one another, so
// that a fleet moves from the shared salt to its own one edge at a time
// (docs/operations.md, *The salt*).
func NewFor(token, fleet string, sign Salt) (*Keys, error) {
	if len(token) < MinTokenLen {
		return nil, fmt.Errorf("the fleet token has %d characters, fewer than %d: make a random one with `edge fleet token` (or `openssl rand -base64 48`)", len(token), MinTokenLen)
	}
	if sign == SaltFleet && fleet == "" {
		return nil, errors.New("trust: a fleet's own salt needs the fleet's name")
	}
	type salted struct{ salt, authority string }
	salts := []salted{{"edge fleet v1", "edge fleet authority"}}
	if fleet != "" {
		// Length-prefixed past the shared salt's text: no fleet's name
		// gives the shared salt.
		salts = append(salts, salted{fmt.Sprintf("edge fleet v2 %d %s", len(fleet), fleet), "edge fleet authority (the fleet's own salt)"})
		if sign == SaltFleet {
			salts[0], salts[1] = salts[1], salts[0]
		}
	}
	k := &Keys{}
	pool := x509.NewCertPool()
	var signer ed25519.PrivateKey
	var signerCA *x509.Certificate
	for i, salt := range salts {
		// Argon2id (RFC 9106's second recommended option: 64 MiB, 3
		// passes) once a salt at start: every key below is a cheap
		// derivation from it.
		master := argon2.IDKey([]byte(token), []byte(salt.salt), 3, 64<<10, 1, 32)
		if i+1 < len(salts) {
			// The next set's 64 MiB then reuses this one's: the peak
			// stays one Argon2id's, not two.
			runtime.GC()
		}
		derive := func(purpose string) []byte {
			k, err := hkdf.Key(sha256.New, master, nil, "edge fleet v1 "+purpose, 32)
			if err != nil {
				panic(err) // only for a length past 255 hashes
			}
			return k
		}
		caKey := ed25519.NewKeyFromSeed(derive("ca"))
		ca, err := caCert(caKey, salt.authority)
		if err != nil {
			return nil, err
		}
		pool.AddCert(ca)
		if i == 0 {
			signer, signerCA = caKey, ca
		}
		k.sets = append(k.sets, keySet{member: derive("member"), state: derive("state")})
	}
	leaf, err := leafCert(signerCA, signer)
	if err != nil {
		return nil, err
	}
	parsed, err := x509.ParseCertificate(leaf.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("trust: this edge's certificate: %w", err)
	}
	k.pin = PinOf(parsed)
	k.server = &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{leaf},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
	k.client = &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{leaf},
		RootCAs: pool, ServerName: ServerName}
	return k, nil
}

// epoch and farFuture bound the authority's certificate: it is made
// alike on every edge, so nothing in it may depend on the clock.
var (
	epoch     = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	farFuture = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// caCert makes the fleet's authority under name: an edge's certificate
// names its issuer, and an earlier release finds its authority by that
// name, so the shared salt's keeps the name it always had.
func caCert(key ed25519.PrivateKey, name string) (*x509.Certificate, error) {
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             epoch,
		NotAfter:              farFuture,
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("trust: the fleet's authority: %w", err)
	}
	return x509.ParseCertificate(der)
}

// leafCert makes this edge's certificate, with a key of its own, for
// both ends of a connection.
func leafCert(ca *x509.Certificate, caKey ed25519.PrivateKey) (tls.Certificate, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("trust: this edge's key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("trust: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "edge"},
		NotBefore:    now.Add(-time.Hour), // clocks of a fleet differ a little
		NotAfter:     farFuture,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{ServerName},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("trust: this edge's certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}, nil
}

// Pin returns the pin of this edge's certificate (PinOf): its election
// node names it, so that a follower holds the edge at the elected
// address to the elected edge's key, not to any edge of the fleet's.
func (k *Keys) Pin() string { return k.pin }

// PinOf returns a certificate's pin: the SHA-256 of its public key
// (SubjectPublicKeyInfo), base64url. Each edge makes a key of its own at
// start.
func PinOf(c *x509.Certificate) string {
	sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// ErrNotElected says the edge at the leader's address shows a
// certificate of the fleet, but not the one the elected edge's node
// names.
var ErrNotElected = errors.New("the edge at the leader's address is not the elected one: its certificate is not the one its election node names")

// ServerTLS returns the configuration of a fleet address: TLS 1.3, and
// a client certificate of the fleet required.
func (k *Keys) ServerTLS() *tls.Config { return k.server.Clone() }

// ClientTLS returns the configuration of a connection to a fleet
// address: the other end must show a certificate of the fleet, and this
// edge shows its own.
func (k *Keys) ClientTLS() *tls.Config { return k.client.Clone() }

// sign returns the MAC of fields under key, each field length-prefixed so
// that no two lists of fields sign alike.
func sign(key []byte, fields ...string) []byte {
	m := hmac.New(sha256.New, key)
	var n [8]byte
	for _, f := range fields {
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		m.Write(n[:])
		m.Write([]byte(f))
	}
	return m.Sum(nil)
}

func verify(key []byte, sig string, fields ...string) bool {
	got, err := base64.RawURLEncoding.DecodeString(sig)
	return err == nil && hmac.Equal(got, sign(key, fields...))
}

// SignMember signs an election node's fields (its path, the session that
// owns it, the edge's ID and fleet address).
func (k *Keys) SignMember(fields ...string) string {
	return base64.RawURLEncoding.EncodeToString(sign(k.sets[0].member, fields...))
}

// VerifyMember reports whether sig is SignMember's of fields, with any
// set of keys this edge accepts.
func (k *Keys) VerifyMember(sig string, fields ...string) bool {
	for _, set := range k.sets {
		if verify(set.member, sig, fields...) {
			return true
		}
	}
	return false
}

// verifyState reports whether v is a state key's MAC of fields, with any
// set of keys this edge accepts.
func (k *Keys) verifyState(v string, fields ...string) bool {
	for _, set := range k.sets {
		if verify(set.state, v, fields...) {
			return true
		}
	}
	return false
}

// StateHeader is the header a leader sends a state's signature in.
const StateHeader = "Edge-State-Signature"

// SignState signs a state's SHA-256 (hex) and generation.
func (k *Keys) SignState(sum string, generation uint64) string {
	return "v1=" + base64.RawURLEncoding.EncodeToString(sign(k.sets[0].state, sum, fmt.Sprint(generation)))
}

// ErrBadSignature says a state's signature is missing or wrong.
var ErrBadSignature = errors.New("not signed with the fleet's key")

// VerifyState checks a state's signature (SignState's, as sent in
// StateHeader) against its SHA-256 and generation.
func (k *Keys) VerifyState(sig, sum string, generation uint64) error {
	v, ok := strings.CutPrefix(sig, "v1=")
	if !ok || !k.verifyState(v, sum, fmt.Sprint(generation)) {
		return ErrBadSignature
	}
	return nil
}

// SignDelta signs a delta between two states: the SHA-256 of its bytes,
// the generation it gives, and the tags of the state it applies to and
// of the state it gives. Its fields differ from a whole state's
// (SignState), so neither signature passes for the other.
func (k *Keys) SignDelta(sum string, generation uint64, base, result string) string {
	return "v1=" + base64.RawURLEncoding.EncodeToString(sign(k.sets[0].state, "delta", sum, fmt.Sprint(generation), base, result))
}

// VerifyDelta checks a delta's signature (SignDelta's, as sent in
// StateHeader).
func (k *Keys) VerifyDelta(sig, sum string, generation uint64, base, result string) error {
	v, ok := strings.CutPrefix(sig, "v1=")
	if !ok || !k.verifyState(v, "delta", sum, fmt.Sprint(generation), base, result) {
		return ErrBadSignature
	}
	return nil
}
