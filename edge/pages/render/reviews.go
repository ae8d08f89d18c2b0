package render

import "strings"

// ReviewsPage is a page of a listing's stored reviews: the listing, the
// filters, the reviews newest first, and the next page.
type ReviewsPage struct {
	Name, Store, Listing string // the listing's name, store and page
	Collected            bool   // false on a store whose reviews are not stored
	Partial              bool   // the search ran out of its time
	Q                    string
	Stars                []Option
	Reviews              []Review
	Older                string // the next page's address, "" at the end
	Newest               string // the first page's address, "" on the first page
	JSONURL, AtomURL     string
	// StarTable is the listing's ratings by star, as its store counts
	// them (nil where it gives none), and Rating its average in words.
	StarTable *StarTable
	Rating    string
}

// Review is one review as a page shows it; its text and author are a
// store user's words.
type Review struct {
	ID                         string // the store's id of the review
	Stars                      int
	Posted, Author, Text, Lang string
}

// foldAt is how long a review is shown whole: a longer one opens with
// its first words and folds the rest (<details>).
const foldAt = 600

// Long reports whether the review is folded.
func (r Review) Long() bool { return len(r.Text) > foldAt }

// Opening is the start of a folded review: its first 300 bytes or so, cut
// at a space, on a character's boundary.
func (r Review) Opening() string {
	n := min(300, len(r.Text))
	if i := strings.LastIndexByte(r.Text[:n], ' '); i > 100 {
		n = i
	}
	for n > 0 && n < len(r.Text) && r.Text[n]&0xC0 == 0x80 {
		n--
	}
	return r.Text[:n]
}

// StarsText is the review's stars as five characters, filled first.
func (r Review) StarsText() string {
	n := min(max(r.Stars, 0), 5)
	return strings.Repeat("★", n) + strings.Repeat("☆", 5-n)
}

// RenderReviews returns a page of a listing's reviews.
func RenderReviews(d ReviewsPage) ([]byte, error) {
	return execute(reviewsPage, struct {
		ReviewsPage
		Head Head
	}{d, Head{Title: "Reviews of " + d.Name + " (" + d.Store + ")", Description: "What users of " + d.Name + " wrote in the " + d.Store + " store, newest first.",
		Alternates: append([]Alternate{{"application/json", d.JSONURL, "the reviews as JSON"}, {"application/atom+xml", d.AtomURL, "the newest reviews as Atom"}}, Files(d.JSONURL, "this page's reviews")...)}})
}

var reviewsPage = parse("reviews", nil)
