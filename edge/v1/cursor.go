package v1

import (
	"net/http"

	"github.com/edge-stats/edge/edge/problem"
)

// notACursor is the detail of a 400 for a cursor this API did not issue,
// or one whose fields are out of bounds, whatever the list.
const notACursor = "cursor: not a cursor this API issued; pass the nextCursor of the previous answer unchanged."

// staleNext is the reader's words for a link to a next page that does not
// fit the page's other choices.
const staleNext = "This link to a further page belongs to another search or order. Start again from the first page."

// BadCursor is the 400 of a cursor this API did not issue.
func BadCursor() *problem.Problem {
	return problem.New(http.StatusBadRequest, notACursor).
		ForReaders("This link to a further page is not one these pages made: it may be cut short. Start again from the first page.")
}
