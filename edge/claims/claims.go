// Package claims lets the edges of a fleet count the account routes'
// attempts (sign-ups, sign-ins) at one place, the edge that leads, at
// the moment they are made, so that a burst spread over many edges meets
// the limit once and not once an edge.
//
// Each attempt is a claim the following edge sends the leader before it
// acts: a sign-up is admitted or refused at once; a sign-in's attempt is
// reserved before its password is checked, then settled (counted as a
// failure, or taken back when it succeeded). The leader decides with its
// own windows (Decider), which also count what the fleet's attempts log
// brings, and logs what it counted, so that every edge's windows learn
// of it; a sign-up it decides in the log itself (attempts.Log.Admit),
// written there before it answers, so that its death forgets none. A
// claim the leader cannot answer (none, out of reach, a release that
// does not serve Path) is decided by the asking edge itself, as a lone
// edge does: sign-ups then in the log as the leader decides them (exact
// still, though edges deciding one address at once may refuse early),
// sign-ins with the edge's windows and through the log.
//
// The wire carries hashes of the subjects (attempts.Subject), never an
// address, and only between edges that proved they hold the fleet's
// token (the fleet address's TLS).
package claims

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/edge-stats/edge/edge/attempts"
)

// Path is where the leading edge takes claims (POST).
const Path = "/fleet/v1/claims"

// The claims' operations.
const (
	OpSignUp = "signUp" // an account made from an address: one key
	OpSignIn = "signIn" // a sign-in's attempt reserved: its three keys
	OpSettle = "settle" // a reserved sign-in settled: its three keys and the reservation's time
)

// Request is a claim, as it is sent.
type Request struct {
	Op   string   `json:"op"`
	Keys []string `json:"keys"` // the subjects' keys, in hexadecimal
	// At is the reservation's time (Unix nanoseconds) for OpSettle: the
	// leader's clock, as its Verdict gave it.
	At int64 `json:"at,omitempty"`
	// Failed says whether a settled sign-in failed (counted) or succeeded
	// (taken back).
	Failed bool `json:"failed,omitempty"`
}

// Verdict is the leader's answer to a claim.
type Verdict struct {
	OK bool `json:"ok"`
	// Status is the answer a refused claim gets (429: past the limit;
	// 503: the count cannot be trusted now).
	Status int `json:"status,omitempty"`
	// RetryMs is how long to wait before trying again, when refused.
	RetryMs int64 `json:"retryMs,omitempty"`
	// At is when a sign-in's attempt was reserved (Unix nanoseconds, the
	// leader's clock): what its settle sends back.
	At int64 `json:"at,omitempty"`
}

// Retry returns how long a refused claim is to wait.
func (v Verdict) Retry() time.Duration { return time.Duration(v.RetryMs) * time.Millisecond }

// Keys are a sign-in's subjects: the (e-mail address, client address)
// pair, the e-mail address, and the client address.
type Keys [3]attempts.Key

// Decider decides claims with the leading edge's own windows.
type Decider interface {
	// SignUp admits or refuses a sign-up counted under key at now, within
	// ctx (it may write the admission where the fleet keeps it before it
	// answers); a refusal names its status (429 or 503) and when to
	// retry.
	SignUp(ctx context.Context, key attempts.Key, now time.Time) (status int, retry time.Duration)
	// Reserve reserves a sign-in's attempt under keys at now, or none and
	// says when to retry.
	Reserve(keys Keys, now time.Time) (ok bool, retry time.Duration)
	// Settle counts the attempt reserved at at as a failure, or takes it
	// back.
	Settle(keys Keys, at time.Time, failed bool)
}

// maxBody bounds a claim's body: three keys and the rest, with room.
const maxBody = 1 << 10

// maxAge is how far back a settle's reservation may be: a reservation is
// settled within the sign-in that made it (the password check is
// bounded far below this).
const maxAge = 10 * time.Minute

// Parse reads a claim's body: its operation, its keys (one for a
// sign-up, three for a sign-in or a settle, each 32 hexadecimal digits)
// and, for a settle, a reservation time no later than now and not
// older than ten minutes.
func Parse(body []byte, now time.Time) (Request, []attempts.Key, error) {
	var r Request
	if len(body) > maxBody {
		return r, nil, errors.New("the claim is too long")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, nil, fmt.Errorf("read the claim: %w", err)
	}
	if dec.More() {
		return r, nil, errors.New("read the claim: one JSON object only")
	}
	want := map[string]int{OpSignUp: 1, OpSignIn: 3, OpSettle: 3}[r.Op]
	if want == 0 {
		return r, nil, fmt.Errorf("unknown operation %q: want %s, %s or %s", r.Op, OpSignUp, OpSignIn, OpSettle)
	}
	if len(r.Keys) != want {
		return r, nil, fmt.Errorf("%s takes %d keys, got %d", r.Op, want, len(r.Keys))
	}
	keys := make([]attempts.Key, want)
	for i, s := range r.Keys {
		if len(s) != 2*len(keys[i]) {
			return r, nil, fmt.Errorf("key %d: want %d hexadecimal digits", i, 2*len(keys[i]))
		}
		if _, err := hex.Decode(keys[i][:], []byte(s)); err != nil {
			return r, nil, fmt.Errorf("key %d: %w", i, err)
		}
	}
	if r.Op == OpSettle {
		at := time.Unix(0, r.At)
		if r.At <= 0 || at.After(now) || now.Sub(at) > maxAge {
			return r, nil, errors.New("settle: the reservation's time is not one of the last ten minutes")
		}
	} else if r.At != 0 || r.Failed {
		return r, nil, fmt.Errorf("%s takes neither at nor failed", r.Op)
	}
	return r, keys, nil
}

// Handler is the leading edge's side: it decides each claim with d.
// Only the edges of the fleet reach it (the publisher's routes take
// POST from edges that proved they hold the token).
func Handler(d Decider) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			http.Error(w, "read the claim: "+err.Error(), http.StatusBadRequest)
			return
		}
		now := time.Now()
		req, keys, err := Parse(body, now)
		if err != nil {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"type": "about:blank", "title": "Bad claim", "status": http.StatusBadRequest,
				"detail": err.Error() + "."})
			return
		}
		var v Verdict
		switch req.Op {
		case OpSignUp:
			status, retry := d.SignUp(r.Context(), keys[0], now)
			v = Verdict{OK: status == 0, Status: status, RetryMs: retry.Milliseconds()}
		case OpSignIn:
			ok, retry := d.Reserve(Keys(keys), now)
			v = Verdict{OK: ok, RetryMs: retry.Milliseconds(), At: now.UnixNano()}
			if !ok {
				v.Status, v.At = http.StatusTooManyRequests, 0
			}
		case OpSettle:
			d.Settle(Keys(keys), time.Unix(0, req.At), req.Failed)
			v = Verdict{OK: true}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(v)
	})
}

// Client is a following edge's side: it sends claims to the leader.
type Client struct {
	// Leader returns the leader's fleet address, "" when this edge leads
	// or none is known: then every claim is this edge's to decide.
	Leader func() string
	// HTTP is the client to send with: in a fleet with a token, one whose
	// transport proves this edge holds it and requires the leader to
	// prove the same (exchange.Transport). Its timeout, and the
	// context's, bound a claim.
	HTTP *http.Client
}

// ErrNoLeader says no other edge leads: decide the claim here.
var ErrNoLeader = errors.New("no other edge leads")

// SignUp claims a sign-up counted under key.
func (c *Client) SignUp(ctx context.Context, key attempts.Key) (Verdict, error) {
	return c.send(ctx, Request{Op: OpSignUp, Keys: []string{hex.EncodeToString(key[:])}})
}

// Reserve claims a sign-in's attempt under keys; a Verdict that admits
// it holds the reservation's time, for Settle.
func (c *Client) Reserve(ctx context.Context, keys Keys) (Verdict, error) {
	return c.send(ctx, Request{Op: OpSignIn, Keys: hexKeys(keys)})
}

// Settle counts the sign-in reserved at at (the Verdict's At) as a
// failure, or takes it back.
func (c *Client) Settle(ctx context.Context, keys Keys, at int64, failed bool) error {
	_, err := c.send(ctx, Request{Op: OpSettle, Keys: hexKeys(keys), At: at, Failed: failed})
	return err
}

func hexKeys(keys Keys) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = hex.EncodeToString(k[:])
	}
	return out
}

// send posts a claim to the leader and reads its verdict. Any answer but
// a verdict is an error: the claim is then the asking edge's to decide.
func (c *Client) send(ctx context.Context, r Request) (Verdict, error) {
	var v Verdict
	addr := c.Leader()
	if addr == "" {
		return v, ErrNoLeader
	}
	body, _ := json.Marshal(r)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, addr+Path, bytes.NewReader(body))
	if err != nil {
		return v, fmt.Errorf("claim: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return v, fmt.Errorf("claim: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return v, fmt.Errorf("claim: the leader answered %s", resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<10)).Decode(&v); err != nil {
		return v, fmt.Errorf("claim: read the verdict: %w", err)
	}
	if !v.OK && v.Status != http.StatusTooManyRequests && v.Status != http.StatusServiceUnavailable {
		return v, fmt.Errorf("claim: a refusal of status %d", v.Status)
	}
	return v, nil
}
