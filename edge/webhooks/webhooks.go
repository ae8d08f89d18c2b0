// Package webhooks pushes the change events to endpoints that accounts
// register under /account/webhooks: each event a signed POST as the
// Standard Webhooks convention has it (webhook-id, webhook-timestamp,
// webhook-signature: v1,<base64 HMAC-SHA256>), in the feed's order per
// endpoint, at least once, retried with exponential backoff for a day
// before the endpoint is disabled, each attempt in the endpoint's
// delivery log.
//
// In a fleet the edge that leads (the ZooKeeper election of package
// fleet/leader) delivers, alone; where each endpoint stands is kept in
// ClickHouse after each delivery, so that a restarted edge, or the next
// leader, goes on from there. Endpoints' URLs are checked by package
// egress when registered and at every connection (no server-side
// request forgery). Signing secrets are stored sealed with the
// operator's key (AES-GCM), never in the clear, and shown once.
package webhooks

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/egress"
)

// Config holds the webhooks' settings.
type Config struct {
	// Key seals the endpoints' signing secrets (32 bytes, given base64);
	// without it webhooks are off.
	Key string
	// Deliver makes this edge deliver while it leads its fleet (or alone).
	Deliver      bool
	PerAccount   int           // endpoints one account may register (default 10)
	Workers      int           // deliveries at once to endpoints that answer (default 64)
	RetryWorkers int           // deliveries at once to endpoints that fail (default 8): they cannot take the others' turns
	Timeout      time.Duration // one delivery: connect, send, answer (default 10 s)
	// FirstTimeout bounds an event's first attempt, made by the workers
	// of endpoints that answer (default 2 s): an endpoint that hangs holds
	// one of them that long, once, then waits for the retry lane.
	FirstTimeout time.Duration
	GiveUp       time.Duration // an endpoint failing this long is disabled (default 24 h)
	Reload       time.Duration // how often the delivering edge reads the endpoints again (default 5 s)
	Policy       egress.Policy // where deliveries may go
}

// Defaults returns c with every zero field set to its default.
func (c Config) Defaults() Config {
	if c.PerAccount <= 0 {
		c.PerAccount = 10
	}
	if c.Workers <= 0 {
		c.Workers = 64
	}
	if c.RetryWorkers <= 0 {
		c.RetryWorkers = 8
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.FirstTimeout <= 0 {
		c.FirstTimeout = min(2*time.Second, c.Timeout)
	}
	if c.GiveUp <= 0 {
		c.GiveUp = 24 * time.Hour
	}
	if c.Reload <= 0 {
		c.Reload = 5 * time.Second
	}
	return c
}

// sealer seals and opens signing secrets with the operator's key.
type sealer struct{ aead cipher.AEAD }

// CheckKey reports whether key is a usable webhook key (Config.Key): 32
// bytes, base64.
func CheckKey(key string) error {
	_, err := newSealer(key)
	return err
}

// newSealer returns the sealer of a base64 key of 32 bytes.
func newSealer(key string) (*sealer, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(key))
	if err != nil || len(k) != 32 {
		return nil, errors.New("the webhook key must be 32 random bytes, base64 (openssl rand -base64 32)")
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("webhook key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("webhook key: %w", err)
	}
	return &sealer{aead}, nil
}

// seal returns secret sealed, as base64 of a nonce and the sealed bytes;
// id, the endpoint's, is bound to it, so a sealed secret moved to another
// endpoint does not open.
func (s *sealer) seal(id, secret string) string {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	return base64.StdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, []byte(secret), []byte(id)))
}

// open returns the secret sealed for endpoint id.
func (s *sealer) open(id, sealed string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(b) < s.aead.NonceSize() {
		return "", errors.New("a sealed secret that is not one")
	}
	plain, err := s.aead.Open(nil, b[:s.aead.NonceSize()], b[s.aead.NonceSize():], []byte(id))
	if err != nil {
		return "", errors.New("a sealed secret that does not open with this key")
	}
	return string(plain), nil
}

// secretPrefix starts every signing secret, as the convention's libraries
// expect.
const secretPrefix = "whsec_"

// newSecret returns a new signing secret: 24 random bytes.
func newSecret() string {
	b := make([]byte, 24)
	rand.Read(b)
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Sign returns the webhook-signature of a message: "v1," and the base64
// HMAC-SHA256, keyed with the secret's bytes, of id, the timestamp and the
// body joined by dots.
func Sign(secret, id string, at time.Time, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil {
		return "", errors.New("a secret that is not base64")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(at.Unix(), 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// newID returns a new endpoint id.
func newID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return "wh_" + base64.RawURLEncoding.EncodeToString(b)
}

// BulkEndpoints returns count new enabled endpoints of account email, at
// base + "/<n>", filtered by stores and kinds, their secrets sealed with
// key, and a "/<n><TAB>secret" line each: for benchmarks, which register
// thousands without signing in for each.
func BulkEndpoints(key, email, base string, count int, stores, kinds string) ([]analytics.WebhookRow, []string, error) {
	s, err := newSealer(key)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]analytics.WebhookRow, count)
	lines := make([]string, count)
	now := time.Now().UTC().Truncate(time.Second)
	for i := range rows {
		path := "/" + strconv.Itoa(i)
		secret := newSecret()
		r := analytics.WebhookRow{ID: newID(), Email: email, URL: base + path, Stores: stores, Kinds: kinds, CreatedAt: now, Enabled: true}
		r.Secret = s.seal(r.ID, secret)
		rows[i], lines[i] = r, path+"\t"+secret
	}
	return rows, lines, nil
}
