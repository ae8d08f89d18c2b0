package answer

import (
	"net/url"
	"strings"
	"testing"
)

func TestAppendPageLink(t *testing.T) {
	const tail = `>; rel="alternate"; type="text/html"`
	for _, c := range []struct {
		path, query string
		p           Page
		want        string // the target; "" for no link
	}{
		{"/api/v1/charts/chrome", "chart=top&category=Social%20%26%20Communication", SamePage, "/charts/chrome?chart=top&category=Social%20%26%20Communication"},
		{"/api/v1/events.csv", "store=chrome&kind=permissions,developer", SamePage, "/events?store=chrome&kind=permissions%2Cdeveloper"},
		{"/api/v1/listings/chrome/abc/history.csv", "from=2026-01-01", ParentPage, "/listings/chrome/abc"},
		{"/api/v1/stores/edge/stats", "", ParentPage, "/stores/edge"},
		{"/api/v1/tags", "", SamePage, "/tags"},
		// What a caller sends cannot end the target or add a parameter.
		{"/api/v1/listings", `q=a>; rel="x", <//evil>`, SamePage, "/listings?q=a%3E%3B%20rel=%22x%22%2C%20%3C//evil%3E"},
		{"/api/v1/listings/chrome/a b?#%", "", SamePage, "/listings/chrome/a%20b%3F%23%25"},
		{"/api/v1/listings", "q=\r\nX-Evil: 1\x00\xff", SamePage, "/listings?q=%0D%0AX-Evil:%201%00%FF"},
		{"/api/summary", "", SamePage, ""},
		{"/api/v1/x", "", NoPage, ""},
		{"/api/v1/", "", ParentPage, ""},
	} {
		got := string(AppendPageLink([]byte("D"), []byte(c.path), []byte(c.query), c.p))
		want := "D"
		if c.want != "" {
			want = "D, <" + c.want + tail
		}
		if got != want {
			t.Errorf("%s?%s (%d): %q, want %q", c.path, c.query, c.p, got, want)
		}
	}
}

// FuzzAppendPageLink: whatever path and query a caller sends, the link is
// one link-value whose target is a URI reference of the allowed bytes,
// whose path decodes to the page's path.
func FuzzAppendPageLink(f *testing.F) {
	f.Add("/api/v1/charts/chrome", "chart=top", uint8(SamePage))
	f.Add("/api/v1/listings/chrome/x/history.csv", "", uint8(ParentPage))
	f.Add("/api/v1/listings", "q=%3E>,;\"", uint8(SamePage))
	f.Fuzz(func(t *testing.T, path, query string, p uint8) {
		page := Page(p % 3)
		out := string(AppendPageLink(nil, []byte(path), []byte(query), page))
		if out == "" {
			return
		}
		target, ok := strings.CutPrefix(out, ", <")
		target, ok2 := strings.CutSuffix(target, `>; rel="alternate"; type="text/html"`)
		if !ok || !ok2 {
			t.Fatalf("not one link-value: %q", out)
		}
		for i := 0; i < len(target); i++ {
			if c := target[i]; !uriSafe(c) && c != '%' && c != '?' {
				t.Fatalf("byte %q in the target %q", c, target)
			}
		}
		pathPart, _, _ := strings.Cut(target, "?")
		decoded, err := url.PathUnescape(pathPart)
		if err != nil {
			t.Fatalf("path %q: %v", pathPart, err)
		}
		want := strings.TrimPrefix(path, "/api/v1")
		if page == SamePage {
			want = strings.TrimSuffix(want, ".csv")
		} else {
			want = want[:strings.LastIndexByte(want, '/')]
		}
		if decoded != want {
			t.Fatalf("path %q has the page %q, want %q", path, decoded, want)
		}
	})
}
