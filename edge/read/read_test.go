package read

import (
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// TestPick: format= names a codec (an unknown one is a 400); else the
// codec Accept weighs most, the first among equals and when it accepts
// none; an escaped or empty format names none.
func TestPick(t *testing.T) {
	codecs := []Codec[struct{}]{{Name: "json", Type: "application/json"}, {Name: "csv", Type: "text/csv"}, {Name: "ndjson", Type: "application/x-ndjson"}}
	app := fiber.New()
	for _, c := range []struct {
		uri, accept string
		want        int
		bad         bool
	}{
		{"/x", "", 0, false},
		{"/x?format=csv", "", 1, false},
		{"/x?format=ndjson", "text/csv", 2, false},
		{"/x?format=json", "text/csv", 0, false},
		{"/x?format=xml", "", 0, true},
		{"/x?format=", "text/csv", 1, false},
		{"/x", "text/csv", 1, false},
		{"/x", "text/csv;q=0.5, application/json", 0, false},
		{"/x", "application/x-ndjson, text/csv;q=0.9", 2, false},
		{"/x", "*/*", 0, false},
		{"/x", "image/png", 0, false},
		{"/x", "text/html,application/xhtml+xml,*/*;q=0.8", 0, false},
		{"/x?reformat=csv", "", 0, false},
	} {
		var rc fasthttp.RequestCtx
		rc.Request.SetRequestURI(c.uri)
		if c.accept != "" {
			rc.Request.Header.Set("Accept", c.accept)
		}
		ctx := app.AcquireCtx(&rc)
		got, err := Pick(ctx, codecs)
		app.ReleaseCtx(ctx)
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("%s Accept %q: codec %d, %v; want %d (bad %v)", c.uri, c.accept, got, err, c.want, c.bad)
		}
	}
}

// FuzzPick: no query or Accept field makes Pick panic or name a codec
// there is not; an error is always a 400 problem.
func FuzzPick(f *testing.F) {
	codecs := []Codec[struct{}]{{Name: "json", Type: "application/json"}, {Name: "csv", Type: "text/csv"}}
	app := fiber.New()
	f.Add("format=csv", "text/csv;q=0.5")
	f.Add("format=%63sv&format=json", "*/*;q=0")
	f.Add("a=1&format", ",,;q=")
	f.Fuzz(func(t *testing.T, query, acceptField string) {
		var rc fasthttp.RequestCtx
		rc.Request.SetRequestURI("/x?" + query)
		rc.Request.Header.Set("Accept", acceptField)
		ctx := app.AcquireCtx(&rc)
		defer app.ReleaseCtx(ctx)
		i, err := Pick(ctx, codecs)
		if err == nil && (i < 0 || i >= len(codecs)) {
			t.Fatalf("codec %d of %d", i, len(codecs))
		}
		if p, ok := err.(interface{ Error() string }); ok && err != nil && !strings.Contains(p.Error(), "format") {
			t.Fatalf("a refusal that does not name format: %v", err)
		}
	})
}
