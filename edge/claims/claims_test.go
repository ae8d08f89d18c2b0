package claims_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge/attempts"
	"github.com/edge-stats/edge/edge/claims"
)

const key = "000102030405060708090a0b0c0d0e0f"

func TestParse(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	keys3 := `["` + key + `","` + key + `","` + key + `"]`
	at := func(d time.Duration) string { return fmt.Sprint(now.Add(d).UnixNano()) }
	for _, c := range []struct {
		name, body string
		bad        string // a part of the error; "" when it parses
	}{
		{"sign-up", `{"op":"signUp","keys":["` + key + `"]}`, ""},
		{"sign-in", `{"op":"signIn","keys":` + keys3 + `}`, ""},
		{"settle", `{"op":"settle","keys":` + keys3 + `,"at":` + at(-time.Second) + `,"failed":true}`, ""},
		{"unknown op", `{"op":"drop","keys":[]}`, "unknown operation"},
		{"too few keys", `{"op":"signIn","keys":["` + key + `"]}`, "takes 3 keys"},
		{"short key", `{"op":"signUp","keys":["0001"]}`, "32 hexadecimal digits"},
		{"not hex", `{"op":"signUp","keys":["` + strings.Repeat("zz", 16) + `"]}`, "key 0"},
		{"unknown field", `{"op":"signUp","keys":["` + key + `"],"admit":true}`, "unknown field"},
		{"two objects", `{"op":"signUp","keys":["` + key + `"]}{}`, "one JSON object"},
		{"settle without time", `{"op":"settle","keys":` + keys3 + `}`, "reservation's time"},
		{"settle in the future", `{"op":"settle","keys":` + keys3 + `,"at":` + at(time.Minute) + `}`, "reservation's time"},
		{"settle too old", `{"op":"settle","keys":` + keys3 + `,"at":` + at(-time.Hour) + `}`, "reservation's time"},
		{"sign-up with a time", `{"op":"signUp","keys":["` + key + `"],"at":5}`, "neither at nor failed"},
		{"huge", `{"op":"signUp","keys":["` + strings.Repeat("a", 4096) + `"]}`, "too long"},
		{"not JSON", `op=signUp`, "read the claim"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := claims.Parse([]byte(c.body), now)
			switch {
			case c.bad == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
				t.Fatalf("got %v, want an error saying %q", err, c.bad)
			}
		})
	}
}

// FuzzParse: no body makes Parse panic, and what it accepts has as many
// keys as its operation takes.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"op":"signUp","keys":["` + key + `"]}`))
	f.Add([]byte(`{"op":"settle","keys":["` + key + `","` + key + `","` + key + `"],"at":1,"failed":true}`))
	f.Add([]byte(`{"op":"signIn","keys":null}`))
	now := time.Now()
	f.Fuzz(func(t *testing.T, body []byte) {
		r, keys, err := claims.Parse(body, now)
		if err != nil {
			return
		}
		if want := map[string]int{claims.OpSignUp: 1, claims.OpSignIn: 3, claims.OpSettle: 3}[r.Op]; len(keys) != want {
			t.Fatalf("%s accepted with %d keys", r.Op, len(keys))
		}
	})
}

// decider records what it is asked and admits the first limit.
type decider struct {
	mu       sync.Mutex
	limit    int
	taken    int
	released int
	failed   int
	at       time.Time
}

func (d *decider) SignUp(context.Context, attempts.Key, time.Time) (int, time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.taken >= d.limit {
		return http.StatusTooManyRequests, 90 * time.Second
	}
	d.taken++
	return 0, 0
}

func (d *decider) Reserve(_ claims.Keys, now time.Time) (bool, time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.taken >= d.limit {
		return false, time.Minute
	}
	d.taken++
	d.at = now
	return true, 0
}

func (d *decider) Settle(_ claims.Keys, at time.Time, failed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !at.Equal(d.at) {
		panic("settled another time than reserved")
	}
	if failed {
		d.failed++
	} else {
		d.released++
		d.taken--
	}
}

// TestClaimsOverHTTP: a client's claims reach the handler's decider, and
// its verdicts come back; a sign-in's reservation is settled at the time
// the leader gave it.
func TestClaimsOverHTTP(t *testing.T) {
	d := &decider{limit: 2}
	srv := httptest.NewServer(claims.Handler(d))
	defer srv.Close()
	c := &claims.Client{Leader: func() string { return srv.URL }, HTTP: srv.Client()}
	ctx := context.Background()
	var k claims.Keys

	v, err := c.Reserve(ctx, k)
	if err != nil || !v.OK || v.At == 0 {
		t.Fatalf("first reserve: %+v %v", v, err)
	}
	if err := c.Settle(ctx, k, v.At, false); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if v, err := c.SignUp(ctx, attempts.Key{}); err != nil || !v.OK {
			t.Fatalf("sign-up %d: %+v %v", i, v, err)
		}
	}
	v, err = c.SignUp(ctx, attempts.Key{})
	if err != nil || v.OK || v.Status != http.StatusTooManyRequests || v.Retry() != 90*time.Second {
		t.Fatalf("sign-up past the limit: %+v %v", v, err)
	}
	v, err = c.Reserve(ctx, k)
	if err != nil || v.OK || v.Status != http.StatusTooManyRequests || v.Retry() != time.Minute {
		t.Fatalf("reserve past the limit: %+v %v", v, err)
	}
	if d.released != 1 || d.failed != 0 {
		t.Fatalf("released %d, failed %d; want 1, 0", d.released, d.failed)
	}
}

// TestClientDecidesHereWhenTheLeaderCannot: every answer but a verdict is
// an error, so that the edge decides the claim itself.
func TestClientDecidesHereWhenTheLeaderCannot(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"not the leader", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "not the leader", http.StatusServiceUnavailable)
		}},
		{"a release without claims", func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) }},
		{"not JSON", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("<html>")) }},
		{"a refusal of no status", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{"ok":false}`)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			cl := &claims.Client{Leader: func() string { return srv.URL }, HTTP: srv.Client()}
			if _, err := cl.SignUp(context.Background(), attempts.Key{}); err == nil {
				t.Fatal("taken as a verdict")
			}
		})
	}
	cl := &claims.Client{Leader: func() string { return "" }, HTTP: http.DefaultClient}
	if _, err := cl.SignUp(context.Background(), attempts.Key{}); !errors.Is(err, claims.ErrNoLeader) {
		t.Fatalf("no leader: %v", err)
	}
}

// TestHandlerRefusesBadClaims: a bad claim gets 400 problem+json that
// says what is wrong, and reaches no decider.
func TestHandlerRefusesBadClaims(t *testing.T) {
	d := &decider{limit: 1}
	srv := httptest.NewServer(claims.Handler(d))
	defer srv.Close()
	for _, body := range []string{`{"op":"signUp","keys":[]}`, strings.Repeat("x", 1<<20)} {
		resp, err := http.Post(srv.URL+claims.Path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Fatalf("%.20s: %d %s", body, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	if d.taken != 0 {
		t.Fatal("a bad claim reached the decider")
	}
}
