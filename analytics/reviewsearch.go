package analytics

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/ext"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
)

// Limits of a review search query.
const (
	maxSearchTerms   = 12
	maxSearchTermLen = 64
	maxSearchLen     = 256
)

// SearchTerm is one term of a review search: a word, a phrase of words, or
// a word prefix. Words match whole words, ignoring case.
type SearchTerm struct {
	Words  []string
	Prefix bool // the last word is a prefix (written with a trailing *)
}

// SearchQuery is a parsed review search: reviews matching every term of at
// least one group (groups are joined by OR).
type SearchQuery struct {
	Groups [][]SearchTerm
}

// ParseSearchQuery parses the review search syntax: words (all must
// match), "a quoted phrase", OR between alternatives, and a prefix with a
// trailing * (at least 2 characters before it). The error says what is
// wrong, for a 400 answer.
func ParseSearchQuery(q string) (SearchQuery, error) {
	var out SearchQuery
	raw := q
	q = strings.TrimSpace(q)
	switch {
	case raw != "" && q == "":
		return out, fmt.Errorf("q: %.40q is only spaces; give words, a \"quoted phrase\", alternatives joined by OR, or a prefix*", raw)
	case q == "":
		return out, errors.New("q is required: give words, a \"quoted phrase\", alternatives joined by OR, or a prefix*")
	case len(q) > maxSearchLen:
		return out, fmt.Errorf("q is longer than %d bytes; shorten it", maxSearchLen)
	case !utf8.ValidString(q):
		return out, errors.New("q is not valid UTF-8")
	}
	var group []SearchTerm
	terms := 0
	lastOR := false
	for i := 0; i < len(q); {
		r, size := utf8.DecodeRuneInString(q[i:])
		switch {
		case unicode.IsSpace(r):
			i += size
			continue
		case r == '"':
			end := strings.IndexByte(q[i+1:], '"')
			if end < 0 {
				return out, errors.New("q has a quoted phrase that is not closed; add the closing \"")
			}
			words := strings.Fields(q[i+1 : i+1+end])
			if len(words) == 0 {
				return out, errors.New("q has an empty quoted phrase; put words between the quotes")
			}
			for _, w := range words {
				if err := checkWord(w); err != nil {
					return out, err
				}
			}
			group = append(group, SearchTerm{Words: words})
			terms++
			i += end + 2
			lastOR = false
			continue
		}
		end := i
		for end < len(q) {
			r, size := utf8.DecodeRuneInString(q[end:])
			if unicode.IsSpace(r) || r == '"' {
				break
			}
			end += size
		}
		word := q[i:end]
		i = end
		if word == "OR" {
			if len(group) == 0 {
				return out, errors.New("q has OR without a term before it; write it between two alternatives, as in crash OR freeze")
			}
			out.Groups = append(out.Groups, group)
			group = nil
			lastOR = true
			continue
		}
		t := SearchTerm{Words: []string{word}}
		if strings.HasSuffix(word, "*") {
			t.Words[0], t.Prefix = strings.TrimSuffix(word, "*"), true
			if utf8.RuneCountInString(t.Words[0]) < 2 {
				return out, fmt.Errorf("q has the prefix %q: give at least 2 characters before the *", word)
			}
		}
		if err := checkWord(t.Words[0]); err != nil {
			return out, err
		}
		group = append(group, t)
		terms++
		lastOR = false
	}
	if lastOR {
		return out, errors.New("q ends with OR; add the alternative after it or remove the OR")
	}
	if len(group) > 0 {
		out.Groups = append(out.Groups, group)
	}
	if terms > maxSearchTerms {
		return out, fmt.Errorf("q has %d terms; use at most %d", terms, maxSearchTerms)
	}
	return out, nil
}

func checkWord(w string) error {
	if strings.Contains(w, "*") {
		return fmt.Errorf("q has %q: * may only end a word, as a prefix", w)
	}
	if len(w) > maxSearchTermLen {
		return fmt.Errorf("q has a word longer than %d bytes", maxSearchTermLen)
	}
	return nil
}

// String returns the query in a canonical form (for cache keys).
func (q SearchQuery) String() string {
	var b strings.Builder
	for gi, g := range q.Groups {
		if gi > 0 {
			b.WriteString(" OR ")
		}
		for ti, t := range g {
			if ti > 0 {
				b.WriteByte(' ')
			}
			w := strings.ToLower(strings.Join(t.Words, " "))
			if len(t.Words) > 1 {
				w = `"` + w + `"`
			}
			if t.Prefix {
				w += "*"
			}
			b.WriteString(w)
		}
	}
	return b.String()
}

// pattern returns the RE2 pattern of a term, for text in lower case: its
// words in lower case and quoted (so no character of the query is a
// regular expression operator), whole words (a boundary where a word starts or ends with a
// letter or digit), any white space between the words of a phrase.
func (t SearchTerm) pattern() string {
	var b strings.Builder
	for i, w := range t.Words {
		w = strings.ToLower(w) // matched against lowerUTF8(text): ClickHouse 18.16 ignores (?i) in its substring prefilter
		if i > 0 {
			b.WriteString(`\s+`)
		}
		if i == 0 && isWordRune(w, true) {
			b.WriteString(`\b`)
		}
		b.WriteString(regexp.QuoteMeta(w))
	}
	if last := t.Words[len(t.Words)-1]; !t.Prefix && isWordRune(last, false) {
		b.WriteString(`\b`)
	}
	return b.String()
}

func isWordRune(w string, first bool) bool {
	var r rune
	if first {
		r, _ = utf8.DecodeRuneInString(w)
	} else {
		r, _ = utf8.DecodeLastRuneInString(w)
	}
	return r < utf8.RuneSelf && (r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r))
}

// ReviewHit is a listing with reviews matching a search.
type ReviewHit struct {
	Store   views.Store
	ID      string
	Matches uint64
}

// ReviewSearch selects the listings whose reviews match a query.
type ReviewSearch struct {
	Query    SearchQuery
	Store    *views.Store
	Stars    ReviewStars
	Listings []string // when not nil, only listings with these ids
	Min      int      // matching reviews a listing needs
	Limit    int      // most hits returned
	Budget   SearchBudget
}

// SearchReviews returns the listings with at least s.Min matching reviews,
// most matches first (ties by store and id), at most s.Limit of them. The
// query's words reach ClickHouse only as bound values. The search runs
// under s.Budget; partial is true when the budget stopped it, and the hits
// then count the reviews read until then.
//
// A listing's matches are its distinct matching review ids, read without
// FINAL (which in ClickHouse 18.16 ignores the row bound and is three
// times slower); until ClickHouse merges a re-crawled review, each of its
// crawls is tested, so an edited review may match by its old text.
func SearchReviews(ctx context.Context, conn driver.Conn, s ReviewSearch) (hits []ReviewHit, partial bool, err error) {
	var where []string
	var args []any
	if s.Store != nil {
		where = append(where, "store = ?")
		args = append(args, uint8(*s.Store))
	}
	switch s.Stars {
	case StarsCritical:
		where = append(where, "stars <= 2")
	case StarsPositive:
		where = append(where, "stars >= 4")
	}
	if s.Listings != nil {
		if len(s.Listings) == 0 {
			return nil, false, nil
		}
		// The ids go as external data, a table sent beside the query: a
		// category or tag of tens of thousands of listings inlined in the
		// SQL text would pass ClickHouse's max_query_size.
		ids, err := ext.NewTable("search_listings", ext.Column("id", "String"))
		if err != nil {
			return nil, false, fmt.Errorf("search reviews: %w", err)
		}
		for _, id := range s.Listings {
			if err := ids.Append(id); err != nil {
				return nil, false, fmt.Errorf("search reviews: %w", err)
			}
		}
		ctx = clickhouse.Context(ctx, clickhouse.WithExternalTable(ids))
		where = append(where, "listing_id IN search_listings")
	}
	var groups []string
	for _, g := range s.Query.Groups {
		var all []string
		for _, t := range g {
			all = append(all, "match(lowerUTF8(text), ?)")
			args = append(args, t.pattern())
		}
		groups = append(groups, "("+strings.Join(all, " AND ")+")")
	}
	where = append(where, "("+strings.Join(groups, " OR ")+")")
	ctx, run := s.Budget.start(ctx)
	rows, err := conn.Query(ctx, `SELECT store, listing_id, uniqExact(review_id) AS n FROM reviews
		WHERE `+strings.Join(where, " AND ")+`
		GROUP BY store, listing_id HAVING n >= `+fmt.Sprint(s.Min)+`
		ORDER BY n DESC, store, listing_id LIMIT `+fmt.Sprint(s.Limit)+s.Budget.settings(), args...)
	if err != nil {
		return nil, false, fmt.Errorf("search reviews: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			h     ReviewHit
			store uint8
		)
		if err := rows.Scan(&store, &h.ID, &h.Matches); err != nil {
			return nil, false, fmt.Errorf("search reviews: %w", err)
		}
		h.Store = views.Store(store)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("search reviews: %w", err)
	}
	return hits, run.partial(), nil
}
