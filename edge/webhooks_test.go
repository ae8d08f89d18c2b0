package edge_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/edge/egress"
	"github.com/edge-stats/edge/edge/webhooks"
	"github.com/edge-stats/edge/views"
)

// allowOnly is the allow list that names each receiver at urls (an
// http://address:port) with its port: the narrow form every example
// gives (docs/api-v1.md, Webhooks).
func allowOnly(urls ...string) []egress.Rule {
	var out []egress.Rule
	for _, u := range urls {
		ap := netip.MustParseAddrPort(strings.TrimPrefix(u, "http://"))
		out = append(out, egress.Rule{Prefix: netip.PrefixFrom(ap.Addr(), ap.Addr().BitLen()), Port: ap.Port()})
	}
	return out
}

const testWebhookKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=" // 32 bytes

// hookMessage is a delivery a receiver verified.
type hookMessage struct {
	ID   string
	Type string
	Data eventJSON
}

// hookReceiver is a loopback receiver that verifies every delivery's
// signature by the Standard Webhooks rules with each path's secret, and
// keeps the messages of each path in the order they came.
type hookReceiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	secrets map[string]string
	got     map[string][]hookMessage
	bad     []string
	status  map[string]int // a path answering this status instead of 204
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{secrets: map[string]string{}, got: map[string][]hookMessage{}, status: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		path := req.URL.Path
		if s, ok := r.status[path]; ok {
			w.WriteHeader(s)
			return
		}
		id, ts, sigs := req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp"), req.Header.Get("webhook-signature")
		key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(r.secrets[path], "whsec_"))
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + ts + "." + string(body)))
		want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
		sec, _ := strconv.ParseInt(ts, 10, 64)
		if !slices.Contains(strings.Fields(sigs), want) || len(key) == 0 || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
			r.bad = append(r.bad, path+": "+sigs)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var m hookMessage
		json.Unmarshal(body, &m)
		m.ID = id
		r.got[path] = append(r.got[path], m)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) messages(path string) []hookMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got[path])
}

// waitUntil polls cond until it holds, or fails after wait.
func waitUntil(t *testing.T, wait time.Duration, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(wait); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %s", what, wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type webhookDoc struct {
	ID, URL, Secret, DisabledWhy string
	Enabled                      bool
}

// hookRow is a new metadata version of l at at, changed by change.
func hookRow(l views.Listing, at time.Time, change func(r *analytics.ListingRow)) analytics.ListingRow {
	r := analytics.ListingRow{Store: l.Store, ID: l.ID, CrawledAt: at, Name: l.Name, Developer: l.Developer, Category: l.Category,
		Kind: l.Kind, Description: l.Description, Icon: l.Icon, Version: l.Version, FirstSeen: time.Unix(l.FirstSeen, 0),
		Featured: l.Featured, ManifestVersion: l.ManifestVersion, AccessLevel: l.AccessLevel, Permissions: l.Permissions,
		HostAccess: l.HostAccess, Topics: l.Topics}
	change(&r)
	return r
}

// TestWebhooks registers endpoints over HTTP and checks their deliveries
// at a loopback receiver that verifies each signature: a test delivery on
// demand; a refresh's events in the feed's order, filtered; an endpoint
// that answers 500 retried and logged while the others are delivered,
// then disabled after its give-up time, and enabled again by its owner,
// getting what it missed; in a fleet of two edges, deliveries by the
// leader alone, and the second edge, once it leads, going on from where
// the first stopped, with nothing lost.
func TestWebhooks(t *testing.T) {
	cfg := seeded(t)
	rcv := newHookReceiver(t)
	lead := [2]atomic.Bool{}
	lead[0].Store(true)
	hook := func(c *edge.Config) {
		c.Webhooks = webhooks.Config{Key: testWebhookKey, Deliver: true, Reload: 100 * time.Millisecond, GiveUp: 2 * time.Second,
			Timeout: 2 * time.Second, Policy: egress.Policy{Allow: allowOnly(rcv.srv.URL), AllowHTTP: true}}
	}
	edges := [2]*harness{}
	for i := range edges {
		edges[i] = edgetest.StartWith(t, cfg, nil, func(s *edge.Sources) { s.Leading = lead[i].Load }, hook)
		if err := edges[i].Jobs.RunNow("views"); err != nil {
			t.Fatal(err)
		}
	}
	a, b := edges[0], edges[1]
	email := "hooks@example.com"
	signUpWithKey(t, a, email)
	auth := basic(email, "long enough password")
	register := func(h *harness, body string) webhookDoc {
		t.Helper()
		r := call(t, "POST", h.Base+"/account/webhooks", auth, body)
		if r.status != 201 {
			t.Fatalf("register %s: %d %s", body, r.status, r.body)
		}
		var d webhookDoc
		json.Unmarshal(r.body, &d)
		if !strings.HasPrefix(d.Secret, "whsec_") || !d.Enabled {
			t.Fatalf("registered: %+v", d)
		}
		rcv.mu.Lock()
		rcv.secrets[strings.TrimPrefix(d.URL, rcv.srv.URL)] = d.Secret
		rcv.mu.Unlock()
		return d
	}
	all := register(b, `{"url": "`+rcv.srv.URL+`/all"}`) // made on the edge that does not deliver
	owners := register(a, `{"url": "`+rcv.srv.URL+`/owners", "kind": "developer"}`)
	rcv.status["/down"] = 500
	down := register(a, `{"url": "`+rcv.srv.URL+`/down", "store": "chrome"}`)
	problem(t, get(t, "GET", a.Base+"/account/webhooks"), 401)
	if r := call(t, "GET", a.Base+"/account/webhooks", auth, ""); r.status != 200 || strings.Contains(string(r.body), "whsec_") {
		t.Fatalf("the list: %d %s (secrets are shown once)", r.status, r.body)
	}

	// A test delivery on demand.
	r := call(t, "POST", a.Base+"/account/webhooks/"+all.ID+"/test", auth, "")
	if r.status != 200 || !strings.Contains(string(r.body), `"delivered":true`) || len(rcv.messages("/all")) != 1 || rcv.messages("/all")[0].Type != "webhook.test" {
		t.Fatalf("test delivery: %d %s; received %+v", r.status, r.body, rcv.messages("/all"))
	}

	// Events: a new owner of one chrome listing, a new version of another.
	st := a.State.Load()
	now := st.Replica.Info().ReadingsMark.Add(time.Hour).Truncate(time.Second)
	l1, l2 := firstLive(t, a, views.Chrome), firstLive(t, a, views.Firefox)
	cfg.Add(t, []analytics.ListingRow{
		hookRow(l1, now, func(r *analytics.ListingRow) { r.Developer = "Buyer Inc." }),
		hookRow(l2, now, func(r *analytics.ListingRow) { r.Version += ".1" }),
	}, nil)
	for _, h := range edges {
		if err := h.Jobs.RunNow("refresh"); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, 10*time.Second, "deliveries to /all", func() bool { return len(rcv.messages("/all")) == 3 })
	got := rcv.messages("/all")[1:]
	if got[0].Data.ID != l1.ID || got[0].Type != "listing.developer" || got[1].Data.ID != l2.ID || got[1].Type != "listing.version" ||
		got[0].ID != got[0].Data.EventID {
		t.Fatalf("delivered %+v", got)
	}
	waitUntil(t, 5*time.Second, "the developer change to /owners", func() bool { return len(rcv.messages("/owners")) == 1 })
	if m := rcv.messages("/owners")[0]; m.Data.Kind != "developer" || *m.Data.After != "Buyer Inc." {
		t.Fatalf("/owners got %+v", m)
	}
	// The endpoint that answers 500: retried, logged, then disabled.
	waitUntil(t, 15*time.Second, "the failing endpoint disabled", func() bool {
		var d struct{ Webhook webhookDoc }
		r := call(t, "GET", a.Base+"/account/webhooks/"+down.ID, auth, "")
		json.Unmarshal(r.body, &d)
		return !d.Webhook.Enabled && strings.Contains(d.Webhook.DisabledWhy, "HTTP 500")
	})
	var log struct {
		Deliveries []struct {
			Status  int
			Attempt int
			Error   string
		}
	}
	waitUntil(t, 5*time.Second, "the failing endpoint's attempts logged", func() bool {
		json.Unmarshal(call(t, "GET", a.Base+"/account/webhooks/"+down.ID, auth, "").body, &log)
		return len(log.Deliveries) >= 2
	})
	if log.Deliveries[0].Status != 500 || log.Deliveries[0].Attempt != 2 || log.Deliveries[1].Attempt != 1 || log.Deliveries[0].Error != "HTTP 500" {
		t.Fatalf("the failing endpoint's log: %+v", log.Deliveries)
	}
	if len(rcv.bad) > 0 {
		t.Fatalf("signatures that did not verify: %v", rcv.bad)
	}

	// The first edge stops leading (as when it dies); the second leads and
	// goes on from where the first stood. The endpoint that was down is
	// back, enabled again, and gets the event it missed.
	lead[0].Store(false)
	rcv.mu.Lock()
	delete(rcv.status, "/down")
	rcv.mu.Unlock()
	if r := call(t, "POST", b.Base+"/account/webhooks/"+down.ID+"/enable", auth, ""); r.status != 200 {
		t.Fatalf("enable: %d %s", r.status, r.body)
	}
	later := now.Add(time.Hour)
	cfg.Add(t, []analytics.ListingRow{hookRow(l1, later, func(r *analytics.ListingRow) { r.Developer, r.Name = "Buyer Inc.", "Renamed Later" })}, nil)
	lead[1].Store(true)
	for _, h := range edges {
		if err := h.Jobs.RunNow("refresh"); err != nil {
			t.Fatal(err)
		}
	}
	waitUntil(t, 10*time.Second, "the rename to /all from the second edge", func() bool { return len(rcv.messages("/all")) >= 4 })
	waitUntil(t, 10*time.Second, "what /down missed", func() bool { return len(rcv.messages("/down")) >= 2 })
	time.Sleep(500 * time.Millisecond)
	seen := map[string]int{}
	for _, m := range rcv.messages("/all") {
		seen[m.ID]++
	}
	last := rcv.messages("/all")[len(rcv.messages("/all"))-1]
	if last.Data.Kind != "name" || len(seen) != 4 {
		t.Fatalf("after the second edge took over: %+v", rcv.messages("/all"))
	}
	if d := rcv.messages("/down"); d[0].Data.ID != l1.ID || d[0].Type != "listing.developer" || d[1].Type != "listing.name" {
		t.Fatalf("the endpoint enabled again got %+v, want the developer change it missed, then the rename", d)
	}
	if len(rcv.bad) > 0 {
		t.Fatalf("signatures that did not verify: %v", rcv.bad)
	}
	if r := call(t, "DELETE", a.Base+"/account/webhooks/"+owners.ID, auth, ""); r.status != 204 {
		t.Fatalf("delete: %d", r.status)
	}
}

// TestWebhookURLsRefused: with no range allowed, registration refuses
// every URL that reaches the edge's own network, and http; of an address,
// the caller is told only that it is not allowed (not which kind it is).
func TestWebhookURLsRefused(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.Webhooks = webhooks.Config{Key: testWebhookKey} })
	email := "ssrf@example.com"
	signUpWithKey(t, h, email)
	auth := basic(email, "long enough password")
	for url, why := range map[string]string{
		"http://93.184.216.34/x":                   "use https",
		"https://127.0.0.1/x":                      "not allowed for webhooks",
		"https://localhost:8443/x":                 "not allowed for webhooks",
		"https://[::1]/x":                          "not allowed for webhooks",
		"https://[::ffff:127.0.0.1]/x":             "not allowed for webhooks",
		"https://10.1.2.3/x":                       "not allowed for webhooks",
		"https://192.168.0.10/x":                   "not allowed for webhooks",
		"https://169.254.169.254/latest/meta-data": "not allowed for webhooks",
		"https://[fe80::1]/x":                      "not allowed for webhooks",
		"https://0.0.0.0/x":                        "not allowed for webhooks",
		"https://user:pass@93.184.216.34/x":        "no user name",
		"file:///etc/passwd":                       "https URL",
	} {
		r := call(t, "POST", h.Base+"/account/webhooks", auth, `{"url": "`+url+`"}`)
		if d := problem(t, r, 400); !strings.Contains(d, why) {
			t.Errorf("%s: %q, want it to say %q", url, d, why)
		}
	}
	// A refused address gets one detail, whatever the reason: what to
	// give instead, and that the operator's log says why; README.md,
	// docs/api-v1.md and the OpenAPI description quote it.
	refused := problem(t, call(t, "POST", h.Base+"/account/webhooks", auth, `{"url": "https://127.0.0.1/x"}`), 400)
	if !strings.HasPrefix(refused, "url: This address is not allowed for webhooks: give the URL of a receiver of your own at a public address (") ||
		!strings.Contains(refused, "unless this service's operator admits them") || !strings.HasSuffix(refused, "its log says why this one was).") {
		t.Errorf("a refused address: %q, want what to give instead and where the operator reads why", refused)
	}
	opening := refused[:strings.Index(refused, " (")]
	for page, quote := range map[string]string{
		"../README.md":      `"` + opening + ` …"`,
		"../docs/api-v1.md": `"` + opening + `…"`,
		"v1/openapi.yaml":   `"detail": "` + refused + `"`,
	} {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(strings.Fields(string(text)), " "), quote) {
			t.Errorf("%s does not quote the refusal of an address: %s", page, quote)
		}
	}
	// A body refused names what to change: the unknown field, the field
	// of the wrong type, the length; and shows the body it takes.
	example := `Send a JSON object of at most 8 KiB: {"url": "https://hooks.example.com/edge"`
	for body, why := range map[string]string{
		`{"url": "https://93.184.216.34/", "kind": "nope"}`: "nope",
		`{"url": 5}`: "url: give a string, not a number. " + example,
		`{"url": "https://93.184.216.34/", "extra": 1}`:      `The body has an unknown field "extra": leave it out (the fields are url, store, kind and permission). ` + example,
		`{"url": "https://93.184.216.34/", "Kinds": "name"}`: `unknown field "Kinds"`,
		`[]`:                                   "The body is a JSON array: send an object. " + example,
		`{"url": "https://93.184.216.34/"} {}`: "more than one JSON value",
		`{"url": `:                             "ends inside its JSON object",
		`url=https://93.184.216.34/`:           "The body is not JSON (invalid character 'u'",
		` `:                                    "The body is empty (or white space only).",
		`{"url": "https://93.184.216.34/", "store": "` + strings.Repeat("x", 8<<10) + `"}`: "more than 8 KiB",
	} {
		if d := problem(t, call(t, "POST", h.Base+"/account/webhooks", auth, body), 400); !strings.Contains(d, why) {
			t.Errorf("%.60s: %q, want it to say %q", body, d, why)
		}
	}
	form := call(t, "POST", h.Base+"/account/webhooks", map[string]string{"Authorization": auth["Authorization"], "Content-Type": "text/plain"}, `{"url": "https://93.184.216.34/"}`)
	problem(t, form, 415)
	// Webhooks off: every route answers 503 with when to ask again.
	off := start(t, seeded(t))
	for _, r := range []struct{ method, path string }{{"GET", "/account/webhooks"}, {"POST", "/account/webhooks"},
		{"GET", "/account/webhooks/x"}, {"DELETE", "/account/webhooks/x"}, {"POST", "/account/webhooks/x/enable"}, {"POST", "/account/webhooks/x/test"}} {
		a := call(t, r.method, off.Base+r.path, auth, "")
		if problem(t, a, 503); a.header.Get("Retry-After") != "3600" {
			t.Errorf("webhooks off: %s %s: Retry-After %q, want 3600", r.method, r.path, a.header.Get("Retry-After"))
		}
	}
}

// TestWebhookLimitsHoldUnderRaces: creates racing on two edges of a
// fleet (four at once on each) leave the account with its most
// endpoints, never more; test
// deliveries are bounded per account (429 with Retry-After), one at a
// time, whatever their receiver does.
func TestWebhookLimitsHoldUnderRaces(t *testing.T) {
	ch := chtestMigrated(t)
	release := make(chan struct{})
	var hung atomic.Int64
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			hung.Add(1)
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer slow.Close()
	defer close(release)
	hook := func(c *edge.Config) {
		c.Webhooks = webhooks.Config{Key: testWebhookKey, PerAccount: 3, Timeout: 5 * time.Second,
			Policy: egress.Policy{Allow: allowOnly(slow.URL), AllowHTTP: true}}
	}
	a, b := start(t, ch, hook), start(t, ch, hook)
	email := "racer@example.com"
	signUpWithKey(t, a, email)
	auth := basic(email, "long enough password")
	var wg sync.WaitGroup
	var created atomic.Int64
	// Four at once on each edge: a fifth sign-in at once on one edge is
	// throttled (each sign-in holds a place among the failures allowed
	// until it succeeds).
	codes := make(chan int, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := [2]*harness{a, b}[i%2]
			r := call(t, "POST", h.Base+"/account/webhooks", auth, `{"url": "`+slow.URL+`/r`+strconv.Itoa(i)+`"}`)
			if r.status == 201 {
				created.Add(1)
			}
			if r.status == 503 && r.header.Get("Retry-After") != "" {
				// ClickHouse slower than the read budget on a loaded
				// machine: a refusal to retry, which must leave no
				// endpoint behind (the count below).
				t.Logf("a racing create answered 503 (retry after %ss): %s", r.header.Get("Retry-After"), r.body)
				r.status = 409
			}
			codes <- r.status
		}()
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 201 && c != 409 {
			t.Errorf("a racing create answered %d", c)
		}
	}
	var list struct{ Webhooks []webhookDoc }
	r := call(t, "GET", b.Base+"/account/webhooks", auth, "")
	json.Unmarshal(r.body, &list)
	if len(list.Webhooks) > 3 || int64(len(list.Webhooks)) != created.Load() || created.Load() == 0 {
		t.Fatalf("8 racing creates with a most of 3: %d listed, %d answered 201", len(list.Webhooks), created.Load())
	}
	// Creates that gave up under contention leave room: asked again
	// alone, they fill it, and no more.
	for i := len(list.Webhooks); i < 4; i++ {
		want := 201
		if i == 3 {
			want = 409
		}
		if r := call(t, "POST", a.Base+"/account/webhooks", auth, `{"url": "`+slow.URL+`/again"}`); r.status != want {
			t.Fatalf("create %d alone: %d %s", i+1, r.status, r.body)
		}
	}
	r = call(t, "GET", b.Base+"/account/webhooks", auth, "")
	list.Webhooks = nil
	json.Unmarshal(r.body, &list)

	// Test deliveries: one at a time per account, then a few a minute.
	hang := call(t, "DELETE", a.Base+"/account/webhooks/"+list.Webhooks[0].ID, auth, "")
	if hang.status != 204 {
		t.Fatalf("delete: %d", hang.status)
	}
	h := call(t, "POST", a.Base+"/account/webhooks", auth, `{"url": "`+slow.URL+`/hang"}`)
	var hangDoc webhookDoc
	json.Unmarshal(h.body, &hangDoc)
	done := make(chan answer, 1)
	go func() { done <- call(t, "POST", a.Base+"/account/webhooks/"+hangDoc.ID+"/test", auth, "") }()
	waitUntil(t, 5*time.Second, "the hanging test delivery", func() bool { return hung.Load() == 1 })
	busy := call(t, "POST", a.Base+"/account/webhooks/"+list.Webhooks[1].ID+"/test", auth, "")
	problem(t, busy, 429)
	if busy.header.Get("Retry-After") == "" {
		t.Error("a refused test delivery has no Retry-After")
	}
	release <- struct{}{}
	if r := <-done; r.status != 200 {
		t.Fatalf("the hanging test: %d %s", r.status, r.body)
	}
	statuses := []int{}
	for range TestBurstForTests + 1 {
		statuses = append(statuses, call(t, "POST", a.Base+"/account/webhooks/"+list.Webhooks[1].ID+"/test", auth, "").status)
	}
	if statuses[0] != 200 || statuses[len(statuses)-1] != 429 {
		t.Errorf("test deliveries in a row: %v, want the budget spent and then 429", statuses)
	}
}

// TestBurstForTests is the per-account burst of test deliveries.
const TestBurstForTests = webhooks.TestBurst
