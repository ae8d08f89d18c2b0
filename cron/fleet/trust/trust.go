// Package trust is how the edges of a fleet prove to one another that
// they hold the fleet's token (EDGE_FLEET_TOKEN) without ever sending it.
//
// Every key is derived from the token, stretched once with Argon2id so
// that a token guessed offline costs what a password hash costs:
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
//     that someone else wrote into ZooKeeper takes no part in it.
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
	member, state  []byte
}

// New derives the fleet's keys from token and makes this edge's
// certificate. A token shorter than MinTokenLen is refused.
func New(token string) (*Keys, error) {
	if len(token) < MinTokenLen {
		return nil, fmt.Errorf("the fleet token has %d characters: use at least %d random ones (openssl rand -base64 32)", len(token), MinTokenLen)
	}
	// Argon2id (RFC 9106's second recommended option: 64 MiB, 3 passes)
	// once at start: every key below is a cheap derivation from it.
	master := argon2.IDKey([]byte(token), []byte("edge fleet v1"), 3, 64<<10, 1, 32)
	derive := func(purpose string) []byte {
		k, err := hkdf.Key(sha256.New, master, nil, "edge fleet v1 "+purpose, 32)
		if err != nil {
			panic(err) // only for a length past 255 hashes
		}
		return k
	}
	caKey := ed25519.NewKeyFromSeed(derive("ca"))
	ca, err := caCert(caKey)
	if err != nil {
		return nil, err
	}
	leaf, err := leafCert(ca, caKey)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	k := &Keys{member: derive("member"), state: derive("state")}
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

func caCert(key ed25519.PrivateKey) (*x509.Certificate, error) {
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "edge fleet authority"},
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
	return base64.RawURLEncoding.EncodeToString(sign(k.member, fields...))
}

// VerifyMember reports whether sig is SignMember's of fields.
func (k *Keys) VerifyMember(sig string, fields ...string) bool {
	return verify(k.member, sig, fields...)
}

// StateHeader is the header a leader sends a state's signature in.
const StateHeader = "Edge-State-Signature"

// SignState signs a state's SHA-256 (hex) and generation.
func (k *Keys) SignState(sum string, generation uint64) string {
	return "v1=" + base64.RawURLEncoding.EncodeToString(sign(k.state, sum, fmt.Sprint(generation)))
}

// ErrBadSignature says a state's signature is missing or wrong.
var ErrBadSignature = errors.New("not signed with the fleet's key")

// VerifyState checks a state's signature (SignState's, as sent in
// StateHeader) against its SHA-256 and generation.
func (k *Keys) VerifyState(sig, sum string, generation uint64) error {
	v, ok := strings.CutPrefix(sig, "v1=")
	if !ok || !verify(k.state, v, sum, fmt.Sprint(generation)) {
		return ErrBadSignature
	}
	return nil
}

// SignDelta signs a delta between two states: the SHA-256 of its bytes,
// the generation it gives, and the tags of the state it applies to and
// of the state it gives. Its fields differ from a whole state's
// (SignState), so neither signature passes for the other.
func (k *Keys) SignDelta(sum string, generation uint64, base, result string) string {
	return "v1=" + base64.RawURLEncoding.EncodeToString(sign(k.state, "delta", sum, fmt.Sprint(generation), base, result))
}

// VerifyDelta checks a delta's signature (SignDelta's, as sent in
// StateHeader).
func (k *Keys) VerifyDelta(sig, sum string, generation uint64, base, result string) error {
	v, ok := strings.CutPrefix(sig, "v1=")
	if !ok || !verify(k.state, v, "delta", sum, fmt.Sprint(generation), base, result) {
		return ErrBadSignature
	}
	return nil
}
