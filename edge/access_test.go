package edge_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/apikey"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/edge/keys"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/fleet/relay"
)

// call sends a request with headers and an optional body.
func call(t testing.TB, method, url string, hdr map[string]string, body string) answer {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json") // the bodies sent here are JSON unless hdr says otherwise
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, b}
}

func basic(email, password string) map[string]string {
	return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(email+":"+password))}
}

func bearer(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

// withLimits sets the v1 limits of a test server.
func withLimits(anon, keyed limits.Policy) func(*edge.Config) {
	return func(c *edge.Config) { c.Limits.Anonymous, c.Limits.Keyed = anon, keyed }
}

// signUpWithKey makes an account on h and one key for it.
func signUpWithKey(t testing.TB, h *harness, email string) (key, id string) {
	t.Helper()
	// A 503 says the fleet's count of sign-ups is not current on this
	// edge yet (its sync of the attempts log lags on a loaded machine):
	// asked again after its Retry-After, as the API tells clients to,
	// three times at most.
	a := call(t, "POST", h.Base+"/account", nil, `{"email":"`+email+`","password":"long enough password"}`)
	for tries := 0; a.status == http.StatusServiceUnavailable && tries < 3; tries++ {
		wait, _ := strconv.Atoi(a.header.Get("Retry-After"))
		time.Sleep(time.Duration(min(max(wait, 1), 5)) * time.Second)
		a = call(t, "POST", h.Base+"/account", nil, `{"email":"`+email+`","password":"long enough password"}`)
	}
	if a.status != 201 {
		t.Fatalf("sign up: %d %s", a.status, a.body)
	}
	a = call(t, "POST", h.Base+"/account/keys", basic(email, "long enough password"), "")
	if a.status != 201 {
		t.Fatalf("create key: %d %s", a.status, a.body)
	}
	var k struct{ Key, ID string }
	if err := json.Unmarshal(a.body, &k); err != nil {
		t.Fatal(err)
	}
	return k.Key, k.ID
}

func rateHeaders(a answer) (limit, remaining, reset int, policy string) {
	limit, _ = strconv.Atoi(a.header.Get("RateLimit-Limit"))
	remaining, _ = strconv.Atoi(a.header.Get("RateLimit-Remaining"))
	reset, _ = strconv.Atoi(a.header.Get("RateLimit-Reset"))
	return limit, remaining, reset, a.header.Get("RateLimit-Policy")
}

func TestAccountSelfService(t *testing.T) {
	h := start(t, chtestMigrated(t), withLimits(limits.Policy{PerMinute: 1000, PerDay: 1000}, limits.DefaultConfig().Keyed),
		func(c *edge.Config) { c.SignInFailures = 3 })
	const pw = "correct horse battery"
	signUp := func(body string) answer { return call(t, "POST", h.Base+"/account", nil, body) }

	if a := signUp(`{"email":"Ana@Example.com","password":"` + pw + `"}`); a.status != 201 || !strings.Contains(string(a.body), `"ana@example.com"`) {
		t.Fatalf("sign up: %d %s", a.status, a.body)
	}
	problem(t, signUp(`{"email":"ana@example.com","password":"another password"}`), http.StatusConflict)
	problem(t, signUp(`{"email":"not an address","password":"`+pw+`"}`), http.StatusBadRequest)
	problem(t, signUp(`{"email":"bo@example.com","password":"short"}`), http.StatusBadRequest)
	problem(t, signUp(`not json`), http.StatusBadRequest)
	if a := call(t, "GET", h.Base+"/account", nil, ""); a.status != 405 {
		t.Fatalf("GET /account: %d", a.status)
	}

	cred := basic("ana@example.com", pw)
	var made []string
	for i := range keys.MaxKeys {
		a := call(t, "POST", h.Base+"/account/keys", cred, "")
		if a.status != 201 {
			t.Fatalf("key %d: %d %s", i, a.status, a.body)
		}
		var k struct {
			Key, ID    string
			DailyLimit int
		}
		json.Unmarshal(a.body, &k)
		if id, ok := apikey.ID(k.Key); !ok || id != k.ID || k.DailyLimit != 20000 {
			t.Fatalf("key answer %s", a.body)
		}
		made = append(made, k.Key)
		// The new key works on this edge at once.
		if a := call(t, "GET", h.Base+"/api/v1/week/2026-W01", bearer(k.Key), ""); a.status == 401 {
			t.Fatalf("a new key was refused: %s", a.body)
		}
	}
	problem(t, call(t, "POST", h.Base+"/account/keys", cred, ""), http.StatusConflict)

	list := call(t, "GET", h.Base+"/account/keys", cred, "")
	var l struct {
		Keys []struct {
			ID      string
			Key     string
			Revoked bool
		}
	}
	if err := json.Unmarshal(list.body, &l); err != nil || list.status != 200 || len(l.Keys) != 3 {
		t.Fatalf("list: %d %s", list.status, list.body)
	}
	for i, k := range l.Keys {
		if k.Key != "" || k.Revoked || strings.Contains(string(list.body), made[i]) {
			t.Fatal("the key list shows a key")
		}
	}
	revokeID, _ := apikey.ID(made[0])
	if a := call(t, "DELETE", h.Base+"/account/keys/"+revokeID, cred, ""); a.status != 204 {
		t.Fatalf("revoke: %d %s", a.status, a.body)
	}
	if a := call(t, "GET", h.Base+"/account/keys", cred, ""); strings.Count(string(a.body), `"revoked":true`) != 1 {
		t.Fatalf("list after a revocation: %s", a.body)
	}
	problem(t, call(t, "DELETE", h.Base+"/account/keys/edge_nosuchid", cred, ""), http.StatusNotFound)
	problem(t, call(t, "GET", h.Base+"/api/v1/week/2026-W01", bearer(made[0]), ""), http.StatusUnauthorized)
	if a := call(t, "POST", h.Base+"/account/keys", cred, ""); a.status != 201 {
		t.Fatalf("a key after a revocation: %d %s", a.status, a.body)
	}

	// Another account cannot revoke Ana's keys.
	signUp(`{"email":"bo@example.com","password":"` + pw + `"}`)
	otherID, _ := apikey.ID(made[1])
	problem(t, call(t, "DELETE", h.Base+"/account/keys/"+otherID, basic("bo@example.com", pw), ""), http.StatusNotFound)

	// Wrong credentials: 401 with a Basic challenge; then throttled per address.
	a := call(t, "GET", h.Base+"/account/keys", nil, "")
	problem(t, a, http.StatusUnauthorized)
	if !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Basic") {
		t.Fatalf("WWW-Authenticate %q", a.header.Get("WWW-Authenticate"))
	}
	for range 3 {
		problem(t, call(t, "GET", h.Base+"/account/keys", basic("ana@example.com", "wrong password!"), ""), http.StatusUnauthorized)
	}
	a = call(t, "GET", h.Base+"/account/keys", cred, "")
	problem(t, a, http.StatusTooManyRequests)
	if a.header.Get("Retry-After") == "" {
		t.Fatal("throttled sign-in without Retry-After")
	}
	// Bo's address was not the one guessed at: per e-mail address only Ana is throttled.
	if a := call(t, "GET", h.Base+"/account/keys", basic("bo@example.com", pw), ""); a.status != 200 {
		t.Fatalf("bo: %d %s", a.status, a.body)
	}
}

func srvNeed(t *testing.T) *chtest.Server { return chtest.Need(t, srv) }

// chtestMigrated returns a fresh migrated database.
func chtestMigrated(t *testing.T) edgetest.Dataset {
	t.Helper()
	cfg, _ := srvNeed(t).Migrated(t)
	return edgetest.Dataset{CH: &cfg}
}

func TestKeyRules(t *testing.T) {
	ch := chtestMigrated(t)
	var logs bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &logMu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := startLogged(t, ch, log, withLimits(limits.Policy{PerMinute: 1000, PerDay: 5000}, limits.Policy{PerMinute: 1000, PerDay: 20000}))
	key, _ := signUpWithKey(t, h, "keys@example.com")
	other, _ := signUpWithKey(t, h, "disabled@example.com")
	url := h.Base + "/api/v1/week/2026-W01" // 404 or 503 until built; what matters is auth

	check := func(name string, hdr map[string]string, wantStatus int, wantLimit int) answer {
		t.Helper()
		a := call(t, "GET", url, hdr, "")
		if wantStatus == 401 {
			problem(t, a, 401)
			if w := a.header.Get("WWW-Authenticate"); !strings.HasPrefix(w, "Bearer ") || !strings.Contains(w, "error=") {
				t.Errorf("%s: WWW-Authenticate %q", name, w)
			}
			if a.header.Get("RateLimit-Limit") != "" {
				t.Errorf("%s: a refused key got RateLimit headers (a fallback to anonymous limits?)", name)
			}
			return a
		}
		if a.status == 401 || a.status == 400 || a.status == 429 {
			t.Fatalf("%s: %d %s", name, a.status, a.body)
		}
		if limit, _, _, _ := rateHeaders(a); limit != wantLimit {
			t.Errorf("%s: RateLimit-Limit %d, want %d", name, limit, wantLimit)
		}
		return a
	}
	check("no key", nil, 0, 5000)
	check("bearer", bearer(key), 0, 20000)
	check("bearer, lower-case scheme", map[string]string{"Authorization": "bearer " + key}, 0, 20000)
	check("x-api-key", map[string]string{"X-Api-Key": key}, 0, 20000)
	// Authorization wins when both are sent.
	check("bearer valid, x-api-key wrong", map[string]string{"Authorization": "Bearer " + key, "X-Api-Key": "wrong"}, 0, 20000)
	check("bearer wrong, x-api-key valid", map[string]string{"Authorization": "Bearer wrong", "X-Api-Key": key}, 401, 0)
	wrong := check("wrong key", bearer("edge_aaaaaaaa_"+strings.Repeat("a", 32)), 401, 0)
	check("garbage key", map[string]string{"X-Api-Key": "x"}, 401, 0)
	if a := check("basic scheme", map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("a:b"))}, 401, 0); !strings.Contains(a.header.Get("WWW-Authenticate"), "invalid_request") {
		t.Errorf("other scheme: %q", a.header.Get("WWW-Authenticate"))
	}
	check("empty bearer", map[string]string{"Authorization": "Bearer "}, 401, 0)

	// A disabled account's key stops within a key reload, and its refusal
	// reads exactly like an unknown key's.
	accts := keys.NewAccounts(analytics.NewLazy(*ch.CH), 1, nil)
	if err := accts.SetDisabled(context.Background(), "disabled@example.com", true); err != nil {
		t.Fatal(err)
	}
	var disabled answer
	waitFor(t, func() bool { disabled = call(t, "GET", url, bearer(other), ""); return disabled.status == 401 })
	if problem(t, disabled, 401) != problem(t, wrong, 401) || disabled.header.Get("WWW-Authenticate") != wrong.header.Get("WWW-Authenticate") {
		t.Error("a disabled account's key is refused differently from an unknown key")
	}

	// A revocation written on a machine whose clock is an hour behind
	// still wins over the key's row.
	keyID, _ := apikey.ID(key)
	behind := keys.NewAccounts(analytics.NewLazy(*ch.CH), 1, func() time.Time { return time.Now().Add(-time.Hour) })
	if err := behind.Revoke(context.Background(), "", keyID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return call(t, "GET", url, bearer(key), "").status == 401 })

	// A key in the URL is refused and never logged.
	for _, q := range []string{"?api_key=abc", "?KEY=abc", "?token=abc", "?q=" + key, "?" + key + "=1"} {
		d := problem(t, call(t, "GET", h.Base+"/api/v1/listings"+q, nil, ""), http.StatusBadRequest)
		if !strings.Contains(d, "Authorization: Bearer") || strings.Contains(d, key) {
			t.Errorf("%s: detail %q", q, d)
		}
	}
	// A key pasted into a path, whole or percent-encoded, is never
	// quoted back by the problem, in its detail or its instance.
	enc := strings.ReplaceAll(key, "_", "%5F")
	fresh, _ := signUpWithKey(t, h, "paths@example.com")
	for _, p := range []string{"/api/v1/listings/chrome/" + key, "/api/v1/nonexistent/" + key, "/api/v1/exports/2026-12-02/" + key,
		"/api/v1/exports/2026-12-02/" + enc, "/api/v1/exports/" + enc + "/x", "/api/v1/exports/latest/%65" + key[1:],
		"/api/v1/listings/chrome/" + enc} {
		a := call(t, "GET", h.Base+p, bearer(fresh), "")
		if a.status < 400 || strings.Contains(string(a.body), key[14:]) || strings.Contains(string(a.body), enc[16:]) {
			t.Errorf("%s: %d %s", p, a.status, a.body)
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	if strings.Contains(logs.String(), key) || strings.Contains(logs.String(), key[14:]) {
		t.Fatal("a key reached the log")
	}
}

// TestOpenAPINeedsNoKeyAndCountsNothing: past the anonymous limits, and
// with a wrong key, the description still answers, without RateLimit
// headers, and the calls do not count.
func TestOpenAPINeedsNoKeyAndCountsNothing(t *testing.T) {
	h := start(t, synthetic(t), withLimits(limits.Policy{PerMinute: 2, PerDay: 3}, limits.Policy{PerMinute: 2, PerDay: 3}))
	for i := range 10 {
		for _, hdr := range []map[string]string{nil, bearer("wrong")} {
			a := call(t, "GET", h.Base+"/api/v1/openapi.json", hdr, "")
			if a.status != 200 || a.header.Get("RateLimit-Limit") != "" {
				t.Fatalf("openapi call %d: %d %v", i, a.status, a.header)
			}
		}
	}
	a := call(t, "GET", h.Base+"/api/v1/tags", nil, "")
	if _, remaining, _, _ := rateHeaders(a); remaining != 2 {
		t.Fatalf("after 20 description calls and one call: remaining %d, want 2", remaining)
	}
}

func TestInvalidKeyLimiter(t *testing.T) {
	h := start(t, chtestMigrated(t))
	key, _ := signUpWithKey(t, h, "limiter@example.com")
	url := h.Base + "/api/v1/tags"
	for i := range 30 {
		problem(t, call(t, "GET", url, bearer("wrong-"+strconv.Itoa(i)), ""), http.StatusUnauthorized)
	}
	// The 31st invalid key, and now even a valid one, are refused unread.
	for _, k := range []string{"wrong-31", key} {
		a := call(t, "GET", url, bearer(k), "")
		problem(t, a, http.StatusTooManyRequests)
		if ra, _ := strconv.Atoi(a.header.Get("Retry-After")); ra < 1 || ra > 61 {
			t.Errorf("Retry-After %q", a.header.Get("Retry-After"))
		}
	}
	// Calls without a key are not refused.
	if a := call(t, "GET", url, nil, ""); a.status == 429 || a.status == 401 {
		t.Fatalf("keyless call: %d %s", a.status, a.body)
	}
}

func TestMinuteAndDayLimits(t *testing.T) {
	cfg := seeded(t)
	h := start(t, cfg, withLimits(limits.Policy{PerMinute: 3, PerDay: 100}, limits.Policy{PerMinute: 100, PerDay: 6}))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	url := h.Base + "/api/v1/tags"

	// Anonymous: 3 a minute; a call refused for the minute does not count against the day.
	for i := range 3 {
		a := call(t, "GET", url, nil, "")
		limit, remaining, reset, policy := rateHeaders(a)
		if a.status != 200 || limit != 100 || remaining != 99-i || policy != "3;w=60, 100;w=86400" || reset < 1 || reset > 86400 {
			t.Fatalf("anonymous call %d: %d limit %d remaining %d reset %d policy %q", i, a.status, limit, remaining, reset, policy)
		}
	}
	for range 2 {
		a := call(t, "GET", url, nil, "")
		problem(t, a, http.StatusTooManyRequests)
		if ra, _ := strconv.Atoi(a.header.Get("Retry-After")); ra < 1 || ra > 61 {
			t.Fatalf("minute Retry-After %q", a.header.Get("Retry-After"))
		}
		if _, remaining, _, _ := rateHeaders(a); remaining != 97 {
			t.Fatalf("minute-refused call counted against the day: remaining %d", remaining)
		}
	}

	// A key with 6 a day: a 200, a 304, a 404 and a 400 all count.
	key, _ := signUpWithKey(t, h, "day@example.com")
	first := call(t, "GET", url, bearer(key), "")
	steps := []struct {
		url  string
		hdr  map[string]string
		want int
	}{
		{url, map[string]string{"If-None-Match": first.header.Get("ETag")}, 304},
		{h.Base + "/api/v1/listings/chrome/no-such-listing", nil, 404},
		{h.Base + "/api/v1/listings?limit=0", nil, 400},
		{url, nil, 200},
		{url, nil, 200},
	}
	for i, s := range steps {
		hdr := map[string]string{"Authorization": "Bearer " + key}
		for k, v := range s.hdr {
			hdr[k] = v
		}
		a := call(t, "GET", s.url, hdr, "")
		if _, remaining, _, _ := rateHeaders(a); a.status != s.want || remaining != 4-i {
			t.Fatalf("keyed call %d: %d remaining %d, want %d remaining %d", i, a.status, remaining, s.want, 4-i)
		}
	}
	a := call(t, "GET", url, bearer(key), "")
	problem(t, a, http.StatusTooManyRequests)
	_, remaining, reset, _ := rateHeaders(a)
	if ra, _ := strconv.Atoi(a.header.Get("Retry-After")); remaining != 0 || ra != reset || ra < 1 {
		t.Fatalf("day refusal: remaining %d reset %d Retry-After %q", remaining, reset, a.header.Get("Retry-After"))
	}
	// A caller whose day is used up is told to wait until midnight,
	// however often it asks: more refused calls than its minute holds
	// (100) are each refused for the day, not for the minute.
	for i := range 110 {
		a := call(t, "GET", url, bearer(key), "")
		_, remaining, reset, _ := rateHeaders(a)
		ra, _ := strconv.Atoi(a.header.Get("Retry-After"))
		if a.status != http.StatusTooManyRequests || remaining != 0 || ra < reset-1 || ra > reset+1 || !strings.Contains(string(a.body), "day") {
			t.Fatalf("refused call %d after the day was used: %d remaining %d reset %d Retry-After %d: %s", i, a.status, remaining, reset, ra, a.body)
		}
	}
}

func TestDayRestartsAtMidnightUTC(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 22, 23, 59, 58, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	h := start(t, synthetic(t), withLimits(limits.Policy{PerMinute: 100, PerDay: 2}, limits.Policy{PerMinute: 100, PerDay: 2}),
		func(c *edge.Config) { c.Limits.Now = now })
	url := h.Base + "/api/v1/tags"
	call(t, "GET", url, nil, "")
	call(t, "GET", url, nil, "")
	a := call(t, "GET", url, nil, "")
	problem(t, a, http.StatusTooManyRequests)
	if a.header.Get("Retry-After") != "2" || a.header.Get("RateLimit-Reset") != "2" {
		t.Fatalf("at 23:59:58: Retry-After %q Reset %q, want 2", a.header.Get("Retry-After"), a.header.Get("RateLimit-Reset"))
	}
	clock.Store(time.Date(2026, 11, 23, 0, 0, 1, 0, time.UTC).UnixNano())
	a = call(t, "GET", url, nil, "")
	if _, remaining, reset, _ := rateHeaders(a); a.status == 429 || remaining != 1 || reset != 86399 {
		t.Fatalf("after midnight: %d remaining %d reset %d", a.status, remaining, reset)
	}
}

func TestSearchPool(t *testing.T) {
	cfg := synthetic(t)
	h := start(t, cfg, func(c *edge.Config) { c.Limits.SearchSlots, c.Limits.SearchRate = 1, 0.0001 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	if a := call(t, "GET", h.Base+"/api/v1/listings?q=ab", nil, ""); a.status != 200 {
		t.Fatalf("first search: %d %s", a.status, a.body)
	}
	h.Server.WaitAnswers() // the cache keeps answers asynchronously
	for _, path := range []string{"/api/v1/listings?q=cd", "/api/v1/reviews/search?q=great"} {
		a := call(t, "GET", h.Base+path, nil, "")
		problem(t, a, http.StatusTooManyRequests)
		if a.header.Get("Retry-After") != "5" {
			t.Fatalf("%s: Retry-After %q, want 5", path, a.header.Get("Retry-After"))
		}
	}
	// An answer searched before comes from the cache without the pool,
	// and reads that do not search never use it.
	for _, path := range []string{"/api/v1/listings?q=ab", "/api/v1/listings", "/api/v1/tags"} {
		if a := call(t, "GET", h.Base+path, nil, ""); a.status != 200 {
			t.Fatalf("%s: %d %s", path, a.status, a.body)
		}
	}
}

func TestClientAddressBehindTrustedProxy(t *testing.T) {
	ch := synthetic(t)
	anon := limits.Policy{PerMinute: 2, PerDay: 100}
	trusted := start(t, ch, withLimits(anon, anon), func(c *edge.Config) {
		c.TrustedProxies = clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32")}
	})
	untrusted := start(t, ch, withLimits(anon, anon))
	from := func(h *harness, xff string) int {
		return call(t, "GET", h.Base+"/api/v1/tags", map[string]string{"X-Forwarded-For": xff}, "").status
	}
	// Through the trusted proxy each client has its own minute.
	for _, xff := range []string{"198.51.100.7", "198.51.100.7", "203.0.113.9, 198.51.100.8", "198.51.100.8"} {
		if s := from(trusted, xff); s == 429 {
			t.Fatalf("%s refused", xff)
		}
	}
	if s := from(trusted, "198.51.100.7"); s != 429 {
		t.Fatalf("third call of 198.51.100.7: %d, want 429", s)
	}
	// From an untrusted connection the header is ignored: one address.
	from(untrusted, "198.51.100.1")
	from(untrusted, "198.51.100.2")
	if s := from(untrusted, "198.51.100.3"); s != 429 {
		t.Fatalf("forged X-Forwarded-For got its own limit: %d", s)
	}
}

// TestConcurrentCallersNeverOverAdmit: 200 clients at once against one
// key admit exactly its daily limit, and anonymous ones exactly the
// minute's limit.
func TestConcurrentCallersNeverOverAdmit(t *testing.T) {
	ch := chtestMigrated(t)
	h := start(t, ch, withLimits(limits.Policy{PerMinute: 30, PerDay: 1000}, limits.Policy{PerMinute: 1000, PerDay: 20000}))
	key, id := signUpWithKey(t, h, "burst@example.com")
	accts := keys.NewAccounts(analytics.NewLazy(*ch.CH), 1, nil)
	if err := accts.SetLimit(context.Background(), id, 50); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		l, _, _, _ := rateHeaders(call(t, "GET", h.Base+"/api/v1/tags", bearer(key), ""))
		return l == 50
	})
	// A keyed call that finds nothing reserved waits for a reservation
	// (limits' reserve.go); one that waits too long on a loaded machine
	// is refused for a moment (503, Retry-After: 5), never admitted.
	var unsettled atomic.Int64
	count := func(hdr map[string]string) (ok, refused int64) {
		var wg sync.WaitGroup
		var okN, refusedN atomic.Int64
		for range 200 {
			wg.Go(func() {
				req, _ := http.NewRequest("GET", h.Base+"/api/v1/tags", nil)
				for k, v := range hdr {
					req.Header.Set(k, v)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == 429:
					refusedN.Add(1)
				case resp.StatusCode == 503 && resp.Header.Get("RateLimit-Limit") == "" && resp.Header.Get("Retry-After") == "5":
					unsettled.Add(1)
				default:
					okN.Add(1)
				}
			})
		}
		wg.Wait()
		return okN.Load(), refusedN.Load()
	}
	used := call(t, "GET", h.Base+"/api/v1/tags", bearer(key), "")
	_, remaining, _, _ := rateHeaders(used)
	// Once one is refused for the day, every call reserved was used:
	// exactly what was left is admitted.
	if ok, refused := count(bearer(key)); ok > int64(remaining) || refused > 0 && ok != int64(remaining) || ok+refused+unsettled.Load() != 200 {
		t.Fatalf("keyed: %d admitted, %d refused, %d refused for a moment; want at most %d admitted, exactly once one is refused for the day", ok, refused, unsettled.Load(), remaining)
	}
	if ok, refused := count(nil); ok != 30 || refused != 170 {
		t.Fatalf("anonymous: %d admitted, %d refused; want exactly 30", ok, refused)
	}
}

// TestRestartKeepsTheDay: a graceful stop flushes the day's calls, and the
// next edge starts from them.
func TestRestartKeepsTheDay(t *testing.T) {
	ch := chtestMigrated(t)
	anon := limits.Policy{PerMinute: 100, PerDay: 10}
	slowSync := func(c *edge.Config) { c.UsageEvery = time.Hour } // only the stop's flush writes
	first := start(t, ch, withLimits(anon, anon), slowSync)
	for range 4 {
		call(t, "GET", first.Base+"/api/v1/tags", nil, "")
	}
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	second := start(t, ch, withLimits(anon, anon), slowSync)
	if _, remaining, _, _ := rateHeaders(call(t, "GET", second.Base+"/api/v1/tags", nil, "")); remaining != 5 {
		t.Fatalf("after a restart: remaining %d, want 5 (4 calls before, 1 now)", remaining)
	}
}

// TestTwoEdgesShareKeysAndTheDay: a key made on one edge works on the
// other within a key reload, and the day's limit holds across both.
func TestTwoEdgesShareKeysAndTheDay(t *testing.T) {
	twoEdgesShareKeysAndTheDay(t, chtestMigrated(t))
}

// twoEdgesShareKeysAndTheDay is TestTwoEdgesShareKeysAndTheDay over the
// database ch: one server, or a cluster (TestClusterAnswersAsOneServer).
func twoEdgesShareKeysAndTheDay(t *testing.T, ch edgetest.Dataset) {
	pol := limits.Policy{PerMinute: 100, PerDay: 1000}
	a := start(t, ch, withLimits(pol, pol))
	b := start(t, ch, withLimits(pol, pol))
	shareKeysAndTheDay(t, ch, a, b)
}

// TestFollowingEdgeSharesKeysAndTheDay is TestTwoEdgesShareKeysAndTheDay
// with edge b following edge a as a fleet's leader (package relay): b
// reads the usage log's changes from a, and reloads its keys when a's key
// list changed, over HTTP; the keys and the day's limit are shared the
// same, and b's reads of the log were answered by a.
func TestFollowingEdgeSharesKeysAndTheDay(t *testing.T) {
	ch := chtestMigrated(t)
	pol := limits.Policy{PerMinute: 100, PerDay: 1000}
	mux := http.NewServeMux()
	fleet := httptest.NewServer(mux)
	defer fleet.Close()
	a := edgetest.StartWith(t, ch, nil, func(src *edge.Sources) {
		rec := relay.NewRecorder(usagelog.ClickHouse(src.SyncDB))
		src.Usage = rec
		mux.Handle(relay.UsagePath, rec)
	}, withLimits(pol, pol))
	mux.Handle(relay.KeysPath, relay.KeysHandler(a.Server.KeysVersion))
	var follower *relay.Store
	b := edgetest.StartWith(t, ch, nil, func(src *edge.Sources) {
		client := &relay.Client{Leader: func() string { return fleet.URL }}
		follower = relay.NewStore(usagelog.ClickHouse(src.SyncDB), client)
		src.Usage = follower
		src.KeysGate = relay.NewKeysGate(client, 5*time.Minute, edgetest.Config().KeysEvery)
	}, withLimits(pol, pol))
	shareKeysAndTheDay(t, ch, a, b)
	relayed, directly := follower.Reads()
	if relayed == 0 || directly > relayed/10 {
		t.Errorf("edge b read the usage log %d times through a and %d times itself", relayed, directly)
	}
	// The leader answers sums; a follower takes rows when it cannot apply
	// them exactly, which must stay the exception.
	if sums, rows := follower.Forms(); sums == 0 || rows > sums/10 {
		t.Errorf("of edge b's %d reads through a, %d came as sums and %d as rows", relayed, sums, rows)
	} else {
		t.Logf("edge b's reads through a: %d as sums, %d as rows", sums, rows)
	}
}

// unsettled reports whether a is a refusal for a moment by the limits:
// a 503 without RateLimit headers (an admitted call's 503, of a route
// whose data is not ready, has them).
func unsettled(a answer) bool {
	return a.status == http.StatusServiceUnavailable && a.header.Get("RateLimit-Limit") == ""
}

// shareKeysAndTheDay checks that a key made on edge a works on edge b,
// and that the day's limit holds across both.
func shareKeysAndTheDay(t *testing.T, ch edgetest.Dataset, a, b *harness) {
	const dayLimit = 20
	key, id := signUpWithKey(t, a, "fleet@example.com")
	// Every call of the key, and those admitted (neither refused nor
	// unknown): a call may be refused for a moment (503, Retry-After: 5)
	// while its edge writes a reservation of the key's calls (limits'
	// reserve.go).
	made := 0
	call := func(t testing.TB, method, url string, hdr map[string]string, body string) answer {
		a := call(t, method, url, hdr, body)
		if a.status != 401 && a.status != 429 && !unsettled(a) {
			made++
		}
		return a
	}
	waitFor(t, func() bool { return call(t, "GET", b.Base+"/api/v1/tags", bearer(key), "").status != 401 })
	if err := keys.NewAccounts(analytics.NewLazy(*ch.CH), 1, nil).SetLimit(context.Background(), id, dayLimit); err != nil {
		t.Fatal(err)
	}
	for _, h := range []*harness{a, b} {
		waitFor(t, func() bool {
			l, _, _, _ := rateHeaders(call(t, "GET", h.Base+"/api/v1/tags", bearer(key), ""))
			return l == dayLimit
		})
	}
	// Let both edges flush their calls so far (the stored count stops
	// changing) and read the fleet's totals back.
	conn, err := analytics.Open(context.Background(), *ch.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stored := func() uint64 {
		u, err := analytics.LoadUsage(context.Background(), conn, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return u["key:"+id]
	}
	used := stored()
	waitFor(t, func() bool {
		time.Sleep(400 * time.Millisecond)
		n := stored()
		settled := n == used
		used = n
		return settled
	})
	time.Sleep(400 * time.Millisecond)
	if used < 3 {
		t.Fatalf("usage of the key in ClickHouse: %d, want the calls of both edges (3 or more)", used)
	}
	// Edge a uses the rest of the day; within a few syncs edge b refuses too.
	// (The waits above call as often as a slow machine needs: they may
	// have used the whole day already.)
	// The count stored holds the calls each edge reserved for the key:
	// edge a admits what is left of it and what it reserved and has not
	// used, no more, and the day's limit holds over both edges.
	before, admitted := made, 0
	for i, waits := 0, 0; i < dayLimit+2 && waits < 100; {
		switch r := call(t, "GET", a.Base+"/api/v1/tags", bearer(key), ""); {
		case unsettled(r):
			waits++
			continue
		case r.status != http.StatusTooManyRequests:
			admitted++
		}
		i++
	}
	if want := max(0, dayLimit-int(used)); admitted < want || before+admitted > dayLimit {
		t.Fatalf("edge a admitted %d after %d calls admitted (%d stored), want at least %d and the day's %d in all", admitted, before, used, want, dayLimit)
	}
	var r answer
	waitFor(t, func() bool { // a few syncs, however slow this machine
		r = call(t, "GET", b.Base+"/api/v1/tags", bearer(key), "")
		return r.status == http.StatusTooManyRequests
	})
	problem(t, r, http.StatusTooManyRequests)
	if _, remaining, _, _ := rateHeaders(r); remaining != 0 {
		t.Fatalf("edge b: remaining %d, want 0", remaining)
	}
}

// TestUsageStaleFailsOpen: with ClickHouse down, calls go on being
// admitted from the last usage totals and this edge's own counts once
// the totals are stale, with their RateLimit headers; only an
// edge that never read the day's totals answers 503 Retry-After: 5, and
// it admits calls as soon as ClickHouse is back.
func TestUsageStaleFailsOpen(t *testing.T) {
	srv := srvNeed(t)
	ch := chtestMigrated(t)
	h := start(t, ch, func(c *edge.Config) { c.Limits.StaleAfter = time.Second })
	url := h.Base + "/api/v1/no-such-route" // a 404 once admitted
	if a := call(t, "GET", url, nil, ""); a.status != 404 {
		t.Fatalf("before: %d %s", a.status, a.body)
	}
	srv.Pause()
	resumed := false
	defer func() {
		if !resumed {
			srv.Resume()
		}
	}()
	waitFor(t, func() bool { return !usageFresh(t, h, 1500*time.Millisecond) })
	for range 5 {
		a := call(t, "GET", url, nil, "")
		if a.status != 404 || a.header.Get("RateLimit-Remaining") == "" {
			t.Fatalf("stale usage: %d %s, RateLimit-Remaining %q", a.status, a.body, a.header.Get("RateLimit-Remaining"))
		}
	}
	// A new edge cannot read the day at all.
	cold := start(t, ch)
	a := call(t, "GET", cold.Base+"/api/v1/no-such-route", nil, "")
	if d := problem(t, a, 503); !strings.Contains(d, "usage") || a.header.Get("Retry-After") != "5" {
		t.Fatalf("never read: %q Retry-After %q", d, a.header.Get("Retry-After"))
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	waitFor(t, func() bool { return call(t, "GET", cold.Base+"/api/v1/no-such-route", nil, "").status == 404 })
	waitFor(t, func() bool { return usageFresh(t, h, time.Second) })
}

// TestNewCallersAtTheBoundGetAnAnswer: with
// EDGE_LIMITS_MAX_ACTIVE callers holding calls not yet in the fleet's
// totals, a new caller got no answer while the edge spun a core (until
// ClickHouse came back, in an outage). Now it gets one: admitted once a
// sync lets others go, else 503 with Retry-After; with ClickHouse cut,
// nothing can be let go, so a 503.
func TestNewCallersAtTheBoundGetAnAnswer(t *testing.T) {
	srv := srvNeed(t)
	ch := chtestMigrated(t)
	proxy := clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32")}
	h := start(t, ch, func(c *edge.Config) {
		c.Limits.MaxActive, c.Limits.StaleAfter, c.TrustedProxies = 40, time.Hour, proxy
	})
	client := &http.Client{Timeout: 10 * time.Second}
	ask := func(i int) (int, http.Header, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", h.Base+"/api/v1/no-such-route", nil) // a 404 once admitted
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("198.18.%d.%d", i>>8, i&255))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("caller %d got no answer: %v", i, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b
	}
	crowded := func(i int, status int, hdr http.Header, body []byte) {
		t.Helper()
		d := problem(t, answer{status, hdr, body}, 503)
		if !strings.Contains(d, "as many callers") || hdr.Get("Retry-After") == "" {
			t.Fatalf("caller %d: %q, Retry-After %q", i, d, hdr.Get("Retry-After"))
		}
	}
	// Store up: every new caller gets an answer, admitted or asked to
	// come back.
	for i := range 60 {
		if status, hdr, body := ask(i); status != 404 {
			crowded(i, status, hdr, body)
		}
	}
	// Store down: the callers' calls stay unwritten, nothing can be let go.
	srv.Pause()
	resumed := false
	defer func() {
		if !resumed {
			srv.Resume()
		}
	}()
	for i := 100; i < 160; i++ {
		ask(i)
	}
	for i := 200; i < 210; i++ {
		status, hdr, body := ask(i)
		crowded(i, status, hdr, body)
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	// ClickHouse back: the calls are written, the callers let go, and a
	// new caller is counted again.
	waitFor(t, func() bool { status, _, _ := ask(300); return status == 404 })
}

// TestSignUpTakesJSONOnly: a sign-up body of any other type
// is refused with 415, before anything is counted or made: a page
// elsewhere can make its visitors' browsers post a form or text/plain
// body without a preflight, each visitor's address with its own sign-up
// budget.
func TestSignUpTakesJSONOnly(t *testing.T) {
	h := start(t, chtestMigrated(t))
	body := `{"email":"cross-site@example.com","password":"long enough password"}`
	for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
		"multipart/form-data; boundary=x", "", "application/jsonx", "json", "application/json;;;"} {
		hdr := map[string]string{"Content-Type": ct}
		b := body
		if strings.HasPrefix(ct, "multipart/") { // a form's text field holding the JSON
			b = "--x\r\nContent-Disposition: form-data; name=\"" + body + "\"\r\n\r\nx\r\n--x--\r\n"
		}
		a := call(t, "POST", h.Base+"/account", hdr, b)
		if d := problem(t, a, http.StatusUnsupportedMediaType); !strings.Contains(d, "Content-Type: application/json") ||
			a.header.Get("Accept-Post") != "application/json" {
			t.Fatalf("Content-Type %q: %q, Accept-Post %q", ct, d, a.header.Get("Accept-Post"))
		}
	}
	// Nothing was made: the address is still free, and JSON works.
	for i, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"} {
		hdr := map[string]string{"Content-Type": ct}
		email := fmt.Sprintf("json%d@example.com", i)
		if a := call(t, "POST", h.Base+"/account", hdr, `{"email":"`+email+`","password":"long enough password"}`); a.status != 201 {
			t.Fatalf("Content-Type %q: %d %s", ct, a.status, a.body)
		}
	}
}

// waitFor polls cond for up to 15 seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	waitWithin(t, 15*time.Second, cond)
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestNoLimitsServesWithoutKeysOrCounting(t *testing.T) {
	h := start(t, synthetic(t), withLimits(limits.Policy{PerMinute: 1, PerDay: 1}, limits.Policy{PerMinute: 1, PerDay: 1}),
		func(c *edge.Config) { c.NoLimits = true })
	for range 3 {
		a := call(t, "GET", h.Base+"/api/v1/tags", bearer("not a key"), "")
		if a.status == 401 || a.status == 429 || a.header.Get("RateLimit-Limit") != "" {
			t.Fatalf("with limits off: %d %v", a.status, a.header)
		}
	}
}

// TestForgedClientAddressLines attacks the client address through real
// HTTP: behind a trusted proxy that appends its own X-Forwarded-For line
// (HAProxy's option forwardfor), a client sends a forged first line with
// a new address each time; it must still be counted as the address the
// proxy saw. With EDGE_CLIENT_HEADER=forwarded, a forged X-Forwarded-For
// is ignored and Forwarded's for= counts.
func TestForgedClientAddressLines(t *testing.T) {
	d := synthetic(t)
	anon := limits.Policy{PerMinute: 2, PerDay: 100}
	proxy := clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32")}
	xff := start(t, d, withLimits(anon, anon), func(c *edge.Config) { c.TrustedProxies = proxy })
	fwd := start(t, d, withLimits(anon, anon), func(c *edge.Config) { c.TrustedProxies, c.ClientHeader = proxy, "forwarded" })
	send := func(base string, lines [][2]string) int {
		req, err := http.NewRequest("GET", base+"/api/v1/tags", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			req.Header.Add(l[0], l[1]) // one header line each
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, h := range []*harness{xff, fwd} {
		if err := h.Jobs.RunNow("views"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		forged := "203.0.113." + strconv.Itoa(i+1)
		got := send(xff.Base, [][2]string{{"X-Forwarded-For", forged}, {"X-Forwarded-For", "198.51.100.7"}})
		if want := map[bool]int{true: 200, false: 429}[i < 2]; got != want {
			t.Fatalf("X-Forwarded-For call %d with a forged first line %s: %d, want %d (the proxy's line names the caller)", i+1, forged, got, want)
		}
	}
	for i := range 4 {
		forged := "203.0.113." + strconv.Itoa(i+1)
		got := send(fwd.Base, [][2]string{{"X-Forwarded-For", forged}, {"Forwarded", `for="198.51.100.8:1234";proto=https`}})
		if want := map[bool]int{true: 200, false: 429}[i < 2]; got != want {
			t.Fatalf("Forwarded call %d with a forged X-Forwarded-For %s: %d, want %d", i+1, forged, got, want)
		}
	}
}

// TestIPv6CallersAreTheirPrefix attacks the anonymous limits through HTTP
// with rotating addresses inside one /64 (sent through a trusted proxy's
// X-Forwarded-For): they share one minute; another /64 has its own, and
// so does each IPv4 address. Fair use of the legacy API counts the /64
// too.
func TestIPv6CallersAreTheirPrefix(t *testing.T) {
	anon := limits.Policy{PerMinute: 3, PerDay: 100}
	h := start(t, synthetic(t), withLimits(anon, anon), func(c *edge.Config) {
		c.TrustedProxies = clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32")}
		c.FairUseRate, c.FairUseBurst = 0.001, 2
	})
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	from := func(path, addr string) int {
		return call(t, "GET", h.Base+path, map[string]string{"X-Forwarded-For": addr}, "").status
	}
	for i := range 6 {
		addr := fmt.Sprintf("2001:db8:aa:bb:%x::%x", i*977+1, i+1) // a new address each time, one /64
		if got, want := from("/api/v1/tags", addr), map[bool]int{true: 200, false: 429}[i < 3]; got != want {
			t.Fatalf("call %d from %s: %d, want %d (the /64 has 3 calls a minute)", i+1, addr, got, want)
		}
	}
	if got := from("/api/v1/tags", "2001:db8:aa:bc::1"); got != 200 {
		t.Fatalf("another /64: %d, want 200", got)
	}
	for i := range 3 {
		if got := from("/api/v1/tags", fmt.Sprintf("198.51.100.%d", i+1)); got != 200 {
			t.Fatalf("IPv4 address %d: %d, want 200 (IPv4 addresses are counted one by one)", i+1, got)
		}
	}
	for i := range 4 {
		addr := fmt.Sprintf("2001:db8:cc:dd::%x", i+1)
		if got, want := from("/api/summary", addr), map[bool]int{true: 200, false: 429}[i < 2]; got != want {
			t.Fatalf("legacy call %d from %s: %d, want %d (fair use counts the /64)", i+1, addr, got, want)
		}
	}
}
