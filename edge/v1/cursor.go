package v1

import (
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/edge-stats/edge/edge/problem"
)

// notACursor is the detail of a 400 for a cursor this API did not issue,
// or one whose fields are out of bounds, whatever the list.
const notACursor = "cursor: not a cursor this API issued; pass the nextCursor of the previous answer unchanged."

// staleNext is the reader's words for a link to a next page that does not
// fit the page's other choices.
const staleNext = "This link to a further page belongs to another search or order. Start again from the first page."

// badCursor is the 400 of a cursor this API did not issue.
func badCursor() *problem.Problem {
	return problem.New(http.StatusBadRequest, notACursor).
		ForReaders("This link to a further page is not one these pages made: it may be cut short. Start again from the first page.")
}

// maxCursor bounds a decoded cursor, so a crafted one costs nothing.
const maxCursor = 4096

// encodeCursor returns a nextCursor: v as base64url-encoded JSON. Cursors
// are opaque to callers; each list checks its own fields on the way back.
func encodeCursor(v any) *string {
	b, _ := json.Marshal(v)
	s := base64.RawURLEncoding.EncodeToString(b)
	return &s
}

// decodeCursor reads a cursor encodeCursor made; ok is false for anything
// else.
func decodeCursor[T any](s string) (v T, ok bool) {
	if len(s) > base64.RawURLEncoding.EncodedLen(maxCursor) {
		return v, false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) > maxCursor || json.Unmarshal(b, &v) != nil {
		return v, false
	}
	return v, true
}
