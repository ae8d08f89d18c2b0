package guard

import (
	"net/http"
	"testing"
)

func TestReaderDetail(t *testing.T) {
	for _, c := range []struct {
		status         int
		detail, reader string
	}{
		{404, `There is no listing "x" in store chrome. Use the store's own id, as listed by /api/v1/listings?store=chrome.`,
			`There is no listing "x" in store chrome.`},
		{404, `category: chrome has no category "x"; take a name or slug from /api/v1/categories/chrome.`, `Chrome has no category "x".`},
		{404, `tag: there is no topic "x"; take a slug from /api/v1/tags.`, `There is no topic "x".`},
		{400, `cursor: not a cursor this API issued; pass the nextCursor of the previous answer unchanged.`, statusText(400)},
		{400, `limit: "100000" is not a whole number from 1 to 100.`, statusText(400)},
		{400, `Search with 2 or more characters.`, `Search with 2 or more characters.`},
		{404, `See /api/v1/listings.`, statusText(404)},
		{http.StatusMethodNotAllowed, `Use GET on /api/v1/charts.`, statusText(405)},
	} {
		if got := readerDetail(c.status, c.detail); got != c.reader {
			t.Errorf("%d %q:\n got %q\nwant %q", c.status, c.detail, got, c.reader)
		}
		if apiWords.MatchString(readerDetail(c.status, c.detail)) {
			t.Errorf("%q keeps the API's words", c.detail)
		}
	}
}
