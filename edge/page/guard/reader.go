package guard

import (
	"net/http"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// apiWords find what a page must not tell a reader: the API's paths,
// query parameters and fields, which the problems of the API's handlers
// (which the pages share) name for API clients.
var apiWords = regexp.MustCompile(`/api/|/v1/|[?&][a-zA-Z]+=|\b(?:limit|cursor|offset|parameter|JSON|nextCursor)\b`)

// fieldPrefix is the "name: " a problem's detail starts with when it is
// about one query parameter.
var fieldPrefix = regexp.MustCompile(`^[a-zA-Z]+: `)

// readerDetail returns a problem's detail in a reader's words: the
// detail itself when it names nothing of the API; else the clauses of it
// that name nothing of the API (a detail about a parameter the reader
// never typed keeps none), or what the status means to a reader.
func readerDetail(status int, detail string) string {
	if !apiWords.MatchString(detail) {
		return detail
	}
	field := fieldPrefix.FindString(detail)
	rest := strings.TrimPrefix(detail, field)
	var kept []string
	if field == "" || status == http.StatusNotFound {
		// A thing that is not there is said in a reader's words already
		// ("chrome has no category …"); how to look one up is the API's.
		for _, sentence := range strings.SplitAfter(rest, ". ") {
			for _, clause := range strings.Split(sentence, "; ") {
				clause = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(clause), "."))
				if clause != "" && !apiWords.MatchString(clause) {
					kept = append(kept, clause)
				}
			}
		}
	}
	if len(kept) == 0 {
		return statusText(status)
	}
	return capitalize(strings.Join(kept, ". ")) + "."
}

// statusText says what a status means to a reader of a page.
func statusText(status int) string {
	switch status {
	case http.StatusNotFound:
		return "There is nothing at this address: what it names may be gone, or spelled another way."
	case http.StatusBadRequest:
		return "This page's address asks for something the page cannot show. Follow the links and use the forms of the pages rather than editing the address."
	case http.StatusMethodNotAllowed:
		return "This page can be read, not sent to."
	}
	return "This page cannot be shown now."
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
