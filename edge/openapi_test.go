package edge_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"

	"github.com/edge-stats/edge/edge/limits"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/listq"
)

// openapiValidator parses the served description with libopenapi and
// checks it against the OpenAPI 3.1 schema.
func openapiValidator(t *testing.T, spec []byte) validator.Validator {
	t.Helper()
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatalf("parse openapi.json: %v", err)
	}
	v, errs := validator.NewValidator(doc, config.WithFormatAssertions(), config.WithContentAssertions())
	if len(errs) > 0 {
		t.Fatalf("openapi.json: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("openapi.json is not valid OpenAPI 3.1: %s: %s (%s)", e.Message, e.Reason, e.HowToFix)
		}
		t.FailNow()
	}
	return v
}

// TestOpenAPIDescriptionIsValid checks the description on its own: valid
// OpenAPI 3.1, every operation and parameter described, every object
// schema closed (so the live checks catch an undocumented field).
func TestOpenAPIDescriptionIsValid(t *testing.T) {
	spec, err := v1.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	openapiValidator(t, spec)
	type operation struct {
		OperationID string `json:"operationId"`
		Description string `json:"description"`
		Parameters  []struct {
			Ref         string `json:"$ref"`
			Description string `json:"description"`
		} `json:"parameters"`
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
		// Each path's operations by method; "servers" (the account
		// routes' own root) is not an operation.
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	want := []string{"/listings", "/listings/{store}/{id}", "/listings/{store}/{id}/history", "/listings/{store}/{id}/reviews",
		"/reviews/search", "/charts/{store}", "/tags", "/tags/{slug}/{store}", "/categories/{store}", "/stores/{store}/stats",
		"/week", "/week/{id}", "/weeks", "/openapi.json", "/listings/{store}/{id}/growth", "/listings/{store}/{id}/history.csv",
		"/compare", "/compare.csv", "/definitions", "/changes", "/exports", "/exports/{day}/{file}",
		"/exports/{day}/parquet/{table}/{storePartition}/{datePartition}/part-0.parquet", "/exports/{day}/parquet/{table}/schema.json",
		"/exports/latest/parquet/{table}/{storePartition}/part-0.parquet", "/exports/latest/{set}/parquet/{table}/{storePartition}/part-0.parquet",
		"/listings/{store}/{id}/changes", "/listings/{store}/{id}/changes.csv", "/events", "/events.csv", "/events/stream",
		"/developers/{store}/{developer}", "/permissions", "/categories/{store}/{category}"}
	// The account's webhook routes, at the service's root (their own
	// servers), by method.
	account := map[string][]string{"/account/webhooks": {"get", "post"}, "/account/webhooks/{id}": {"get", "delete"},
		"/account/webhooks/{id}/enable": {"post"}, "/account/webhooks/{id}/test": {"post"}}
	if len(doc.Paths) != len(want)+len(account) {
		t.Errorf("%d paths, want %d", len(doc.Paths), len(want)+len(account))
	}
	check := func(method, p string) {
		raw, ok := doc.Paths[p][method]
		if !ok {
			t.Errorf("no %s %s", method, p)
			return
		}
		var op operation
		if err := json.Unmarshal(raw, &op); err != nil {
			t.Fatal(err)
		}
		if op.OperationID == "" || op.Description == "" {
			t.Errorf("%s %s: operationId %q, description %q", method, p, op.OperationID, op.Description)
		}
		for i, prm := range op.Parameters {
			if prm.Ref == "" && prm.Description == "" {
				t.Errorf("%s %s: parameter %d has no description", method, p, i)
			}
		}
	}
	for _, p := range want {
		check("get", p)
	}
	for p, methods := range account {
		var servers []struct{ URL string }
		if json.Unmarshal(doc.Paths[p]["servers"], &servers) != nil || len(servers) != 1 || servers[0].URL != "/" {
			t.Errorf("%s: not at the service's root: %s", p, doc.Paths[p]["servers"])
		}
		for _, m := range methods {
			check(m, p)
		}
	}
	// Every object schema says which properties it has and admits no other.
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "object" && v["properties"] != nil && v["additionalProperties"] != false {
				t.Errorf("%s: object schema is open (additionalProperties is not false)", where)
			}
			for k, c := range v {
				walk(where+"/"+k, c)
			}
		case []any:
			for _, c := range v {
				walk(where, c)
			}
		}
	}
	walk("#/components/schemas", doc.Components.Schemas)
}

// TestOpenAPIDescribesLiveAnswers asks every endpoint, its happy paths
// and its errors, and validates each request and answer (status, headers,
// body) against the served description with libopenapi-validator.
func TestOpenAPIDescribesLiveAnswers(t *testing.T) {
	cfg := seeded(t)
	cold := start(t, cfg) // never loaded: its background figures answer 503
	h := start(t, cfg)
	for _, job := range []string{"views", "editions", "ranks", "exports"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(err)
		}
	}
	a := get(t, "GET", h.Base+"/api/v1/openapi.json")
	if a.status != 200 || a.header.Get("Content-Type") != "application/json" || !strings.HasPrefix(a.header.Get("ETag"), `W/"`) {
		t.Fatalf("openapi.json: %d %v", a.status, a.header)
	}
	v := openapiValidator(t, a.body)

	st := h.State.Load()
	f := st.Figures
	var firefox, chrome views.Listing
	for _, l := range st.Replica.OfStore(views.Firefox) {
		if l.Live() {
			firefox = l
			break
		}
	}
	chrome = st.Replica.OfStore(views.Chrome)[0]
	tag := f.Topics()[0].Slug
	category := f.Categories(views.Chrome)[0].Name
	week := h.Editions.Load().Latest().Week
	name := []rune(firefox.Name)

	paths := []string{
		"/listings",
		"/listings?store=chrome&sort=rankclimb&limit=3",
		"/listings?store=apple&minSize=10&maxSize=100000&sort=rating&order=asc",
		"/listings?sort=name&limit=100",
		"/listings?q=" + url.QueryEscape(string(name[:min(3, len(name))])),
		"/listings?tag=" + url.QueryEscape(tag) + "&category=" + url.QueryEscape(category),
		"/listings/firefox/" + firefox.ID,
		"/listings/chrome/" + chrome.ID,
		"/listings/firefox/" + firefox.ID + "/history",
		"/listings/firefox/" + firefox.ID + "/history?days=3",
		"/listings/firefox/" + firefox.ID + "/reviews",
		"/listings/firefox/" + firefox.ID + "/reviews?stars=critical&q=app",
		"/listings/chrome/" + chrome.ID + "/reviews",
		"/reviews/search?q=the",
		"/reviews/search?q=" + url.QueryEscape(`"the app" OR crash*`) + "&stars=all&store=firefox",
		"/charts/chrome",
		"/charts/edge?chart=climbers",
		"/charts/chrome?chart=trending",
		"/charts/edge?chart=rising",
		"/charts/chrome?chart=top-rated&category=" + url.QueryEscape(category),
		"/tags",
		"/tags/" + url.PathEscape(tag) + "/chrome",
		"/categories/apple",
		"/stores/chrome/stats",
		"/stores/apple/stats",
		"/week",
		"/week/" + week,
		"/weeks",
		"/openapi.json",
		"/definitions",
		"/changes?limit=3",
		"/listings?alsoIn=firefox&store=chrome",
		"/exports",
		"/changes?since=2026-02-27",
		"/listings/firefox/" + firefox.ID + "/growth?from=" + (views.DayOf(st.Replica.Info().ReadingsMark) - 5).String(),
		"/listings/firefox/" + firefox.ID + "/growth?from=" + url.QueryEscape(st.Replica.Info().ReadingsMark.Add(-7*24*time.Hour).Format(time.RFC3339)),
		"/compare?listings=" + url.QueryEscape("firefox:"+firefox.ID+",chrome:"+chrome.ID) + "&days=20",
		"/compare.csv?listings=" + url.QueryEscape("firefox:"+firefox.ID+",chrome:"+chrome.ID),
		"/listings/firefox/" + firefox.ID + "/history.csv",
		"/listings/firefox/" + firefox.ID + "/changes",
		"/listings/chrome/" + chrome.ID + "/changes.csv?limit=3",
		"/events?limit=5",
		"/events?since=2026-02-27&kind=version,name&store=chrome,edge",
		"/events?permission=tabs",
		"/events.csv?limit=3",
		// Errors.
		"/events?kind=nope",
		"/events?since=nonsense",
		"/events?since=2026-02-27&cursor=x",
		"/events?permission=tabs&kind=name",
		"/listings/chrome/" + chrome.ID + "/changes?cursor=x",
		"/listings/firefox/" + firefox.ID + "/growth",
		"/listings/firefox/" + firefox.ID + "/growth?from=2020-13-01",
		"/listings/firefox/" + firefox.ID + "/growth?from=2020-01-01T00:00:00",
		"/compare?listings=chrome:x",
		"/changes?since=nonsense",
		"/listings?limit=0",
		"/listings?sort=best",
		"/listings?minSize=5",
		"/listings?q=x",
		"/listings?cursor=nonsense",
		"/listings/safari/x",
		"/listings/chrome/no-such-listing",
		"/listings/firefox/" + firefox.ID + "/history?days=731",
		"/listings/firefox/" + firefox.ID + "/reviews?stars=some",
		"/reviews/search?q=" + url.QueryEscape(`"unclosed`),
		"/reviews/search?q=crash&category=Tools",
		"/reviews/search?q=crash&tag=no-such-topic",
		"/charts/chrome?chart=best",
		"/tags/no-such-topic/chrome",
		"/categories/safari",
		"/week/2026-W60",
		"/week/1999-W05",
		// An unknown topic or category is a 404; so is a category
		// the store does not have.
		"/listings?tag=no-such-topic",
		"/listings?category=no-such-category",
		"/listings?store=apple&category=" + url.QueryEscape(category),
		"/charts/chrome?category=no-such-category",
		// A word of q over 64 bytes.
		"/reviews/search?q=" + strings.Repeat("a", 65),
	}
	covered := map[string]bool{}
	// validateAt asks method root+path of base (root: /api/v1, or "" for
	// the account routes) and validates the answer. A 405 is validated as
	// the GET operation's answer, where the description declares it: the
	// validator finds operations by method.
	validateAt := func(method, base, root, path string, header http.Header) int {
		req, err := http.NewRequest(method, base+root+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, vs := range header {
			req.Header[k] = vs
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		// The validator matches paths under the description's server, /api/v1.
		vmethod := method
		if resp.StatusCode == http.StatusMethodNotAllowed {
			vmethod = "GET"
		}
		vreq, _ := http.NewRequest(vmethod, "http://edge.test"+root+path, nil)
		vreq.Header = req.Header
		// A request the server refuses may break the description's
		// parameter rules too; its answer must still be as described.
		check := v.ValidateHttpRequestResponse
		if resp.StatusCode >= 400 {
			check = v.ValidateHttpResponse
		}
		if ok, errs := check(vreq, resp); !ok {
			for _, e := range errs {
				t.Errorf("%s %s (%d): %s: %s", method, root+path, resp.StatusCode, e.Message, e.Reason)
				for _, se := range e.SchemaValidationErrors {
					t.Errorf("    at %s (%s): %s", se.FieldPath, se.KeywordLocation, se.Reason)
				}
			}
			t.Logf("body: %.400s", body)
		}
		if resp.StatusCode == 200 && method == "GET" && root == "/api/v1" {
			covered[template(path)] = true
		}
		return resp.StatusCode
	}
	validate := func(base, path string, header http.Header) int {
		return validateAt("GET", base, "/api/v1", path, header)
	}
	for _, p := range paths {
		validate(h.Base, p, nil)
	}
	// 304 with the answer's ETag.
	etag := get(t, "GET", h.Base+"/api/v1/stores/chrome/stats").header.Get("ETag")
	if code := validate(h.Base, "/stores/chrome/stats", http.Header{"If-None-Match": {etag}}); code != 304 {
		t.Errorf("revalidation: %d", code)
	}
	// 503 before the background figures exist.
	for _, p := range []string{"/categories/chrome", "/stores/chrome/stats", "/week", "/listings"} {
		if code := validate(cold.Base, p, nil); code != 503 {
			t.Errorf("cold %s: %d", p, code)
		}
	}
	// Keys and limits: 401 for a wrong key, 400 for a key in the URL, 429
	// past the minute's limit.
	if code := validate(h.Base, "/tags", http.Header{"Authorization": {"Bearer wrong"}}); code != 401 {
		t.Errorf("wrong key: %d", code)
	}
	if code := validate(h.Base, "/tags?api_key=x", nil); code != 400 {
		t.Errorf("key in the URL: %d", code)
	}
	tight := start(t, cfg, withLimits(limits.Policy{PerMinute: 1, PerDay: 100}, limits.Policy{PerMinute: 1, PerDay: 100}))
	validate(tight.Base, "/tags", nil)
	if code := validate(tight.Base, "/tags", nil); code != 429 {
		t.Errorf("past the minute: %d", code)
	}
	// Every other method than GET, HEAD and OPTIONS: 405 with Allow, as
	// every operation declares.
	for _, m := range []struct{ method, path string }{{"POST", "/listings"}, {"PUT", "/listings/chrome/" + chrome.ID},
		{"DELETE", "/tags"}, {"PATCH", "/week"}, {"POST", "/openapi.json"}, {"DELETE", "/exports"}} {
		if code := validateAt(m.method, h.Base, "/api/v1", m.path, nil); code != 405 {
			t.Errorf("%s %s: %d, want 405", m.method, m.path, code)
		}
	}
	// Every file /exports lists, asked with a key: the request (its file
	// name against the description's pattern) and the answer.
	key, _ := signUpWithKey(t, h, "openapi@example.com")
	keyed := http.Header{"Authorization": {"Bearer " + key}}
	var exports struct {
		Days []struct {
			Files []struct{ URL string }
		}
	}
	if err := json.Unmarshal(get(t, "GET", h.Base+"/api/v1/exports").body, &exports); err != nil || len(exports.Days) == 0 {
		t.Fatalf("exports: %v %+v", err, exports)
	}
	for _, f := range exports.Days[0].Files {
		if code := validate(h.Base, strings.TrimPrefix(f.URL, "/api/v1"), keyed); code != 200 {
			t.Errorf("%s: %d", f.URL, code)
		}
	}
	// The webhook routes while webhooks are off (cold has no key for
	// them): 503 with Retry-After, as described.
	for _, m := range []struct{ method, path string }{{"GET", "/account/webhooks"}, {"GET", "/account/webhooks/wh_x"}, {"DELETE", "/account/webhooks/wh_x"}} {
		if code := validateAt(m.method, cold.Base, "", m.path, nil); code != 503 {
			t.Errorf("webhooks off: %s %s: %d, want 503", m.method, m.path, code)
		}
	}
	for _, p := range []string{"/listings", "/listings/{store}/{id}", "/listings/{store}/{id}/history", "/listings/{store}/{id}/reviews",
		"/reviews/search", "/charts/{store}", "/tags", "/tags/{slug}/{store}", "/categories/{store}", "/stores/{store}/stats",
		"/week", "/week/{id}", "/weeks", "/openapi.json", "/definitions", "/listings/{store}/{id}/growth", "/compare",
		"/compare.csv", "/listings/{store}/{id}/history.csv", "/changes", "/exports"} {
		if !covered[p] {
			t.Errorf("no 200 of %s was validated", p)
		}
	}
}

// template returns the description's path template that path (with its
// query) is an address of.
func template(path string) string {
	path, _, _ = strings.Cut(path, "?")
	for _, r := range []struct{ re, tmpl string }{
		{`^/listings/[^/]+/[^/]+/history$`, "/listings/{store}/{id}/history"},
		{`^/listings/[^/]+/[^/]+/growth$`, "/listings/{store}/{id}/growth"},
		{`^/listings/[^/]+/[^/]+/history\.csv$`, "/listings/{store}/{id}/history.csv"},
		{`^/listings/[^/]+/[^/]+/reviews$`, "/listings/{store}/{id}/reviews"},
		{`^/listings/[^/]+/[^/]+$`, "/listings/{store}/{id}"},
		{`^/charts/[^/]+$`, "/charts/{store}"},
		{`^/tags/[^/]+/[^/]+$`, "/tags/{slug}/{store}"},
		{`^/categories/[^/]+$`, "/categories/{store}"},
		{`^/stores/[^/]+/stats$`, "/stores/{store}/stats"},
		{`^/week/[^/]+$`, "/week/{id}"},
	} {
		if regexp.MustCompile(r.re).MatchString(path) {
			return r.tmpl
		}
	}
	return path
}

// TestSortsFollowTheCatalogue: every surface that names the v1 sorts
// names the catalogue's (views.V1SortNames), in its order: the OpenAPI
// description's enum, the search_listings tool's enum, and the text of
// the 400 an unknown sort gets; the legacy API's page names every
// legacy sort.
func TestSortsFollowTheCatalogue(t *testing.T) {
	want := listq.V1SortNames()
	spec, err := v1.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage // operations, and a path's servers
	}
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	var listOp struct {
		Parameters []struct {
			Name   string
			Schema struct{ Enum []string }
		}
	}
	if err := json.Unmarshal(doc.Paths["/listings"]["get"], &listOp); err != nil {
		t.Fatal(err)
	}
	var openapi []string
	for _, p := range listOp.Parameters {
		if p.Name == "sort" {
			openapi = p.Schema.Enum
		}
	}
	if !slices.Equal(openapi, want) {
		t.Errorf("the OpenAPI description's sorts %v, the catalogue's %v", openapi, want)
	}
	h := start(t, synthetic(t))
	list := rpc(t, h, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	var tools struct {
		Result struct {
			Tools []struct {
				Name        string
				InputSchema struct {
					Properties map[string]struct{ Enum []string }
				}
			}
		}
	}
	if err := json.Unmarshal(list.body, &tools); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Result.Tools {
		if tool.Name == "search_listings" && !slices.Equal(tool.InputSchema.Properties["sort"].Enum, want) {
			t.Errorf("search_listings' sorts %v, the catalogue's %v", tool.InputSchema.Properties["sort"].Enum, want)
		}
	}
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	d := problem(t, get(t, "GET", h.Base+"/api/v1/listings?sort=size"), 400)
	if !strings.Contains(d, strings.Join(want, ", ")) {
		t.Errorf("the 400 of an unknown sort: %q, want the catalogue's %v", d, want)
	}
	legacyPage, err := os.ReadFile("../docs/api-legacy.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range listq.SortNames {
		if !strings.Contains(string(legacyPage), "`"+name+"`") {
			t.Errorf("docs/api-legacy.md does not name the legacy sort %s", name)
		}
	}
}
