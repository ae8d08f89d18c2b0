package edge_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/egress"
	"github.com/edge-stats/edge/edge/webhooks"
)

// TestAccountChangesRefusedCrossSite: a page elsewhere cannot make a
// visitor's browser, which keeps the edge's HTTP Basic credentials, change
// the account: every state-changing route under /account
// refuses a request whose Origin or Sec-Fetch-Site names another site
// unless it is JSON (which a browser sends across sites only after a
// preflight /account never grants), with a 403 that says what to send;
// programs (no Origin), the edge's own origin and JSON still pass.
func TestAccountChangesRefusedCrossSite(t *testing.T) {
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer rcv.Close()
	h := start(t, chtestMigrated(t), func(c *edge.Config) {
		c.PublicURL = "https://stats.example"
		c.Webhooks = webhooks.Config{Key: testWebhookKey, Reload: 100 * time.Millisecond, Timeout: 2 * time.Second,
			Policy: egress.Policy{Allow: allowOnly(rcv.URL), AllowHTTP: true}}
	})
	const email, pw = "victim@example.com", "long enough password"
	if a := call(t, "POST", h.Base+"/account", nil, `{"email":"`+email+`","password":"`+pw+`"}`); a.status != 201 {
		t.Fatalf("sign up: %d %s", a.status, a.body)
	}
	with := func(hdr map[string]string) map[string]string {
		out := basic(email, pw)
		for k, v := range hdr {
			out[k] = v
		}
		return out
	}
	keyCount := func() int {
		t.Helper()
		a := call(t, "GET", h.Base+"/account/keys", basic(email, pw), "")
		var doc struct{ Keys []struct{ Revoked bool } }
		if err := json.Unmarshal(a.body, &doc); a.status != 200 || err != nil {
			t.Fatalf("list keys: %d %s", a.status, a.body)
		}
		n := 0
		for _, k := range doc.Keys {
			if !k.Revoked {
				n++
			}
		}
		return n
	}

	// Programs: curl as the README has it (no Origin, no Content-Type).
	made := call(t, "POST", h.Base+"/account/keys", basic(email, pw), "")
	var key struct{ ID string }
	if json.Unmarshal(made.body, &key); made.status != 201 || key.ID == "" {
		t.Fatalf("POST /account/keys from a program: %d %s", made.status, made.body)
	}
	hook := call(t, "POST", h.Base+"/account/webhooks", basic(email, pw), `{"url":"`+rcv.URL+`/hook"}`)
	var endpoint struct{ ID string }
	if json.Unmarshal(hook.body, &endpoint); hook.status != 201 || endpoint.ID == "" {
		t.Fatalf("POST /account/webhooks from a program: %d %s", hook.status, hook.body)
	}

	// The attack, as the issue made it, and its kin.
	evil := map[string]string{"Origin": "https://evil.example", "Content-Type": "text/plain"}
	attacks := []struct {
		name         string
		hdr          map[string]string
		method, path string
		body         string
	}{
		{"the issue's", evil, "POST", "/account/keys", ""},
		{"a form", map[string]string{"Origin": "https://evil.example", "Content-Type": "application/x-www-form-urlencoded"}, "POST", "/account/keys", "a=b"},
		{"no Content-Type", map[string]string{"Origin": "https://evil.example"}, "POST", "/account/keys", ""},
		{"Sec-Fetch-Site cross-site", map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "text/plain"}, "POST", "/account/keys", ""},
		{"Sec-Fetch-Site same-site", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": h.Base}, "POST", "/account/keys", ""},
		{"an opaque origin", map[string]string{"Origin": "null"}, "POST", "/account/keys", ""},
		{"a text webhook", evil, "POST", "/account/webhooks", `{"url":"` + rcv.URL + `/evil"}`},
		{"a test delivery", evil, "POST", "/account/webhooks/" + endpoint.ID + "/test", ""},
		{"an enable", evil, "POST", "/account/webhooks/" + endpoint.ID + "/enable", ""},
		{"a webhook's removal", evil, "DELETE", "/account/webhooks/" + endpoint.ID, ""},
		{"a key's revocation", evil, "DELETE", "/account/keys/" + key.ID, ""},
	}
	for _, a := range attacks {
		r := call(t, a.method, h.Base+a.path, with(a.hdr), a.body)
		if r.status != 403 || r.header.Get("Content-Type") != "application/problem+json" || !strings.Contains(string(r.body), "Content-Type: application/json") {
			t.Errorf("%s attack, %s %s: %d %s %s, want a 403 problem saying what to send", a.name, a.method, a.path, r.status, r.header.Get("Content-Type"), r.body)
		}
	}
	if n := keyCount(); n != 1 {
		t.Errorf("%d keys after the attacks, want the 1 made before", n)
	}
	if r := call(t, "GET", h.Base+"/account/webhooks", basic(email, pw), ""); r.status != 200 || strings.Count(string(r.body), `"id"`) != 1 {
		t.Errorf("the webhooks after the attacks: %d %s, want the 1 made before", r.status, r.body)
	}

	// What passes: the edge's own origin (by Origin, by Sec-Fetch-Site,
	// or by the public address behind a proxy), JSON from anywhere (a
	// browser sends it across sites only after a preflight), and reads.
	for _, c := range []struct {
		name         string
		hdr          map[string]string
		method, path string
		want         int
	}{
		{"the edge's own Origin", map[string]string{"Origin": h.Base, "Content-Type": "text/plain"}, "POST", "/account/keys", 201},
		{"Sec-Fetch-Site same-origin", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "https://evil.example"}, "DELETE", "/account/keys/" + key.ID, 204},
		{"JSON from another origin", map[string]string{"Origin": "https://evil.example", "Content-Type": "application/json"}, "POST", "/account/keys", 201},
		{"the public address's Origin", map[string]string{"Origin": "https://stats.example"}, "POST", "/account/webhooks/" + endpoint.ID + "/test", 200},
		{"Sec-Fetch-Site none", map[string]string{"Sec-Fetch-Site": "none"}, "POST", "/account/webhooks/" + endpoint.ID + "/enable", 200},
		{"a read from another origin", map[string]string{"Origin": "https://evil.example"}, "GET", "/account/keys", 200},
	} {
		if r := call(t, c.method, h.Base+c.path, with(c.hdr), ""); r.status != c.want {
			t.Errorf("%s, %s %s: %d %s, want %d", c.name, c.method, c.path, r.status, r.body, c.want)
		}
	}
	if n := keyCount(); n != 2 {
		t.Errorf("%d keys, want 2 (1 + 2 made - 1 revoked)", n)
	}
}
