package v1

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/edge-stats/edge/views"
)

// FuzzListCursor: no string makes the listings cursor's decoder panic, and
// every cursor it accepts is within the bounds of the cursors the API
// issues.
func FuzzListCursor(f *testing.F) {
	for _, c := range []listCursor{
		{Version: 1, Query: 42, Limit: 50, Page: 1, After: views.ListPos{}},
		{Version: 1, Query: 1 << 63, Limit: 100, Page: 199},
		{Version: 1, Query: 7, Limit: 1 << 30, Page: 1},
		{Version: 1, Query: 7, Limit: 5, Page: -1},
	} {
		f.Add(*encodeCursor(c))
	}
	f.Add("")
	f.Add("!!!")
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"l":1e999,"p":1}`)))
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := decodeListCursor(s)
		if !ok {
			return
		}
		if c.Version != 1 || c.Limit < 1 || c.Limit > listMaxLimit || c.Page < 1 || c.Page >= listMaxPages {
			b, _ := json.Marshal(c)
			t.Fatalf("accepted a cursor out of bounds: %s", b)
		}
	})
}
