package exchange

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/fleet/trust"
	"github.com/edge-stats/edge/internal/follow"
	"github.com/edge-stats/edge/views/replica"
)

// The tests' fleet tokens.
const (
	testToken  = "u6qMl18dt8pe2kswYBVaMY0NNbqESS09KIx9xbDtQLZPzZGs6apM0WnqnGW0U6Lo"
	otherToken = "SRld1uGc0WC5NY6mpM5a7piW8vl1HER8EhFAeJqcT26ASWpT4Rbk6OPcyPjdvnju"
)

var keyCache sync.Map

// keysOf derives a token's keys once per test binary (Argon2id costs
// 64 MiB and a moment).
func keysOf(t *testing.T, token string) *trust.Keys {
	t.Helper()
	if k, ok := keyCache.Load(token); ok {
		return k.(*trust.Keys)
	}
	k, err := trust.New(token)
	if err != nil {
		t.Fatal(err)
	}
	keyCache.Store(token, k)
	return k
}

func withKeys(cfg Config, k *trust.Keys) Config {
	cfg.Keys, cfg.Metrics = k, NewMetrics()
	return cfg
}

// recorder is a fake leader on loopback: it records every byte it is
// sent and answers anything that reads as an HTTP request with a state
// of its own (a real snapshot, self-consistent: its ETag is its SHA-256).
type recorder struct {
	ln    net.Listener
	mu    sync.Mutex
	got   bytes.Buffer
	conns atomic.Int64
}

func startRecorder(t *testing.T, forged []byte, etag string) *recorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r.conns.Add(1)
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 64<<10)
				n, _ := c.Read(buf)
				r.mu.Lock()
				r.got.Write(buf[:n])
				r.mu.Unlock()
				if bytes.HasPrefix(buf[:n], []byte("GET ")) {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nETag: "+etag+"\r\nEdge-Generation: 1\r\nContent-Length: "+strconv.Itoa(len(forged))+"\r\n\r\n")
					c.Write(forged)
				}
				io.Copy(io.Discard, c)
			}()
		}
	}()
	return r
}

func (r *recorder) received() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got.String()
}

// forgedState returns a real snapshot and its ETag, as a leader writes
// them, from a publisher of its own.
func forgedState(t *testing.T) ([]byte, string) {
	t.Helper()
	l := startLeader(t, DefaultConfig())
	l.offer(t, synth(40, 1), 1)
	resp, err := http.Get(l.url + StatePath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b, resp.Header.Get("ETag")
}

// TestFollowerNeverSendsTheToken points a follower with the fleet's keys
// at fake leaders: one that speaks plain HTTP, one with a certificate of
// its own, one of another fleet. None gets the token or a request, and
// the follower takes none of their states: it loads from ClickHouse
// (ErrNoSource) and keeps what it serves meanwhile.
func TestFollowerNeverSendsTheToken(t *testing.T) {
	forged, etag := forgedState(t)
	keys := keysOf(t, testToken)
	fetch := func(cfg Config, addr string) error {
		r, _, _, err := follower(t, cfg, addr, false).Fetch(context.Background(), `"kept"`, replica.ReadOptions{Generation: 2, Prev: synth(5, 1)})
		if r != nil {
			t.Errorf("%s: a state was taken", addr)
		}
		return err
	}

	// A plain HTTP address: not even dialled.
	plain := startRecorder(t, forged, etag)
	cfg := withKeys(DefaultConfig(), keys)
	if err := fetch(cfg, "http://"+plain.ln.Addr().String()); !errors.Is(err, follow.ErrNoSource) {
		t.Errorf("an http:// leader: %v, want ErrNoSource", err)
	}
	if plain.conns.Load() != 0 || cfg.Metrics.Refused("address") != 1 {
		t.Errorf("an http:// leader was dialled (%d connections), or not counted (%v)", plain.conns.Load(), cfg.Metrics.Refused("address"))
	}
	// The same fake at https://: it gets a ClientHello and nothing else.
	if err := fetch(cfg, "https://"+plain.ln.Addr().String()); !errors.Is(err, follow.ErrNoSource) {
		t.Errorf("a fake that speaks plain HTTP at https://: %v, want ErrNoSource", err)
	}
	if got := plain.received(); strings.Contains(got, testToken) || strings.Contains(got, "GET ") || strings.Contains(got, "Authorization") {
		t.Errorf("the fake leader received %q", got)
	}

	// A TLS server with a certificate of its own, and a real leader of
	// another fleet: each is refused in the handshake, before a request.
	var asked atomic.Int64
	own := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Header().Set("ETag", etag)
		w.Header().Set("Edge-Generation", "1")
		w.Write(forged)
	}))
	defer own.Close()
	other := startLeader(t, withKeys(DefaultConfig(), keysOf(t, otherToken)))
	other.offer(t, synth(40, 1), 1)
	for _, addr := range []string{own.URL, other.url} {
		before := cfg.Metrics.Refused("handshake")
		if err := fetch(cfg, addr); !errors.Is(err, follow.ErrNoSource) || !strings.Contains(err.Error(), "did not prove") {
			t.Errorf("%s: %v, want a handshake's ErrNoSource", addr, err)
		}
		if cfg.Metrics.Refused("handshake") != before+1 {
			t.Errorf("%s: the refusal was not counted", addr)
		}
	}
	if asked.Load() != 0 {
		t.Errorf("a leader with a certificate of its own was sent %d requests", asked.Load())
	}

	// A follower without keys believes only a loopback http:// leader.
	for _, addr := range []string{"https://127.0.0.1:1", "http://10.1.2.3:8081", "http://example.com:8081", "http://127.0.0.1:1/x?y", "http://user@127.0.0.1:1"} {
		if err := CheckAddress(addr, nil); err == nil {
			t.Errorf("%s: believed by an edge without a token", addr)
		}
	}
	for _, addr := range []string{"http://127.0.0.1:1", "http://[::1]:1", "http://localhost:1", "http://127.0.0.2:80/"} {
		if err := CheckAddress(addr, nil); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
}

// TestFollowerRefusesAnUnsignedState: a state from an edge of the fleet
// whose signature is missing, of another generation or of another fleet
// is refused before it is taken, and counted.
func TestFollowerRefusesAnUnsignedState(t *testing.T) {
	keys := keysOf(t, testToken)
	l := startLeader(t, withKeys(DefaultConfig(), keys))
	l.offer(t, synth(300, 1), 1)
	good := l.pub.cur.Load()
	if good.sig == "" {
		t.Fatal("the leader did not sign its state")
	}
	for _, c := range []struct {
		name   string
		header func(http.Header)
	}{
		{"no signature", func(h http.Header) { h.Del(trust.StateHeader) }},
		{"another generation", func(h http.Header) { h.Set("Edge-Generation", "2") }},
		{"another fleet's", func(h http.Header) {
			h.Set(trust.StateHeader, keysOf(t, otherToken).SignState(strings.Trim(good.etag, `"`), good.gen))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				l.pub.ServeHTTP(rec, r)
				maps.Copy(w.Header(), rec.Header())
				c.header(w.Header())
				w.WriteHeader(rec.Code)
				w.Write(rec.Body.Bytes())
			}))
			srv.TLS = keys.ServerTLS()
			srv.StartTLS()
			defer srv.Close()
			cfg := withKeys(DefaultConfig(), keys)
			r, _, _, err := follower(t, cfg, srv.URL, false).Fetch(context.Background(), "", replica.ReadOptions{Generation: 1})
			if r != nil || !errors.Is(err, follow.ErrNoSource) {
				t.Fatalf("taken: %v, %v", r, err)
			}
			if cfg.Metrics.Refused("signature") != 1 {
				t.Errorf("counted %v", cfg.Metrics.Refused("signature"))
			}
		})
	}
	// The leader itself: taken.
	cfg := withKeys(DefaultConfig(), keys)
	if r, _, _, err := follower(t, cfg, l.url, false).Fetch(context.Background(), "", replica.ReadOptions{Generation: 1}); err != nil || r == nil {
		t.Fatalf("the fleet's own leader: %v", err)
	}
}

// TestRoutesThatNeedTheFleetsKeys: with keys every route answers only an
// edge that proved it holds the token (a bearer token is no proof, and no
// client without the fleet's certificate gets a request read); without
// keys the routes that need them are off; the routes added answer only
// while the edge leads.
func TestRoutesThatNeedTheFleetsKeys(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })
	keys := keysOf(t, testToken)
	l := startLeader(t, withKeys(DefaultConfig(), keys))
	l.pub.Handle("/fleet/v1/secret", ok, true)
	l.pub.Handle("/fleet/v1/open", ok, false)
	noToken := startLeader(t, DefaultConfig())
	noToken.pub.Handle("/fleet/v1/secret", ok, true)

	fleetClient := &http.Client{Transport: Transport(keys)}
	otherClient := &http.Client{Transport: Transport(keysOf(t, otherToken))}
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: keys.ClientTLS()}}
	anon.Transport.(*http.Transport).TLSClientConfig.Certificates = nil // checks the leader, shows nothing
	ask := func(c *http.Client, base, path, auth string) int {
		req, _ := http.NewRequest("GET", base+path, nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := c.Do(req)
		if err != nil {
			return -1 // refused in the handshake
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		name   string
		client *http.Client
		base   string
		path   string
		auth   string
		want   int
	}{
		{"an edge of the fleet", fleetClient, l.url, "/fleet/v1/secret", "", 200},
		{"a route that needs no token", fleetClient, l.url, "/fleet/v1/open", "", 200},
		{"the state", fleetClient, l.url, StatePath, "", 503},
		{"no certificate, the token as a bearer", anon, l.url, "/fleet/v1/secret", "Bearer " + testToken, -1},
		{"no certificate, the state", anon, l.url, StatePath, "", -1},
		{"an edge of another fleet", otherClient, l.url, "/fleet/v1/open", "", -1},
		{"plain HTTP", http.DefaultClient, "http://" + strings.TrimPrefix(l.url, "https://"), "/fleet/v1/open", "", 400},
		{"an edge with no token", http.DefaultClient, noToken.url, "/fleet/v1/secret", "", 404},
	} {
		if got := ask(c.client, c.base, c.path, c.auth); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	// A follower with the keys takes the state; one without is refused.
	l.offer(t, synth(50, 1), 1)
	if r, _, _, err := follower(t, withKeys(DefaultConfig(), keys), l.url, false).Fetch(context.Background(), "", replica.ReadOptions{Generation: 1}); err != nil || r == nil {
		t.Errorf("a follower with the keys: %v", err)
	}
	if _, _, _, err := follower(t, DefaultConfig(), l.url, false).Fetch(context.Background(), "", replica.ReadOptions{Generation: 1}); err == nil {
		t.Error("a follower without the keys took the state")
	}
	l.leading.Store(false)
	if got := ask(fleetClient, l.url, "/fleet/v1/secret", ""); got != 503 {
		t.Errorf("not leading: %d, want 503", got)
	}
}

// TestFollowerBoundsTheState: a state whose length is past the bound is
// refused before a byte of it is taken.
func TestFollowerBoundsTheState(t *testing.T) {
	l := startLeader(t, DefaultConfig())
	l.offer(t, synth(300, 1), 1)
	cfg := withKeys(DefaultConfig(), nil)
	cfg.MaxBytes = 1000
	if _, _, _, err := follower(t, cfg, l.url, false).Fetch(context.Background(), "", replica.ReadOptions{Generation: 1}); err == nil || cfg.Metrics.Refused("size") != 1 {
		t.Fatalf("a state past the bound: %v, counted %v", err, cfg.Metrics.Refused("size"))
	}
}

// TestARouteThatTakesPost: a route added for POST (the account claims)
// answers an edge of the fleet's POST, refuses GET with 405 and the
// method it takes, and shows nothing to a client without the fleet's
// certificate.
func TestARouteThatTakesPost(t *testing.T) {
	keys := keysOf(t, testToken)
	l := startLeader(t, withKeys(DefaultConfig(), keys))
	l.pub.HandleMethod(http.MethodPost, "/fleet/v1/claims", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, r.Body)
	}), true)
	fleetClient := &http.Client{Transport: Transport(keys)}
	resp, err := fleetClient.Post(l.url+"/fleet/v1/claims", "application/json", strings.NewReader(`{"op":"signUp"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != `{"op":"signUp"}` {
		t.Fatalf("POST: %d %q", resp.StatusCode, body)
	}
	resp, err = fleetClient.Get(l.url + "/fleet/v1/claims")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Fatalf("GET: %d, Allow %q; want 405 and POST", resp.StatusCode, resp.Header.Get("Allow"))
	}
	anon := &http.Client{Transport: &http.Transport{TLSClientConfig: keys.ClientTLS()}}
	anon.Transport.(*http.Transport).TLSClientConfig.Certificates = nil
	if resp, err := anon.Post(l.url+"/fleet/v1/claims", "application/json", strings.NewReader(`{}`)); err == nil {
		resp.Body.Close()
		t.Fatalf("a client without the fleet's certificate got %d", resp.StatusCode)
	}
}
