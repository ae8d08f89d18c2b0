package pages

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/listq"
)

const (
	// suggestBudget is how long a fruitless search's suggestions may
	// search, all together.
	suggestBudget = 50 * time.Millisecond
	// suggestWords is how many of a fruitless search's words its
	// suggestions try at most.
	suggestWords = 4
)

// suggester makes the suggestions of fruitless searches and counts its
// work: the searches it ran (edge_page_suggestion_searches_total) and the
// suggestions it stopped before their last try, because their client
// left or their budget ran out (edge_page_suggestions_stopped_total).
type suggester struct {
	searches     prometheus.Counter
	stopped      *prometheus.CounterVec
	gone, budget prometheus.Counter // stopped's
}

// newSuggester returns a suggester with its counters, which Collectors
// returns.
func newSuggester() suggester {
	stopped := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_page_suggestion_searches_stopped_total",
		Help: "Suggestions of a fruitless listings search stopped before their last try: their client left (why=gone) or their budget ran out (why=budget)."},
		[]string{"why"})
	return suggester{
		searches: prometheus.NewCounter(prometheus.CounterOpts{Name: "edge_page_suggestion_searches_total",
			Help: "Searches the listings page ran for the suggestions of a search that found nothing."}),
		stopped: stopped, gone: stopped.WithLabelValues("gone"), budget: stopped.WithLabelValues("budget"),
	}
}

// collectors returns the suggester's counters, for /metrics.
func (sg *suggester) collectors() []prometheus.Collector {
	return []prometheus.Collector{sg.searches, sg.stopped}
}

// search returns up to 8 listings near a search for q that found none,
// largest first: those that q with its last letters left out finds (up
// to four left out, three letters kept), or else one of its longest
// words (suggestWords of them at most, of 3 letters or more). A
// suggestion links the listing's page. Whatever q, its searches are at
// most four and suggestWords, within suggestBudget together, and stop
// when the client has left (gone, asked before each): a long q of many
// words costs no more than a short one. left reports that they stopped
// because the client left.
func (sg *suggester) search(f *figures.Figures, q string, gone func() bool) (out []render.Link, left bool) {
	deadline := time.Now().Add(suggestBudget)
	for _, t := range suggestTries(q) {
		if gone() {
			sg.gone.Inc()
			return nil, true
		}
		if time.Now().After(deadline) {
			sg.budget.Inc()
			return nil, false
		}
		sg.searches.Inc()
		lq := listq.Query{Q: t, NameOnly: true, Sort: listq.SortStoreRank, Page: 1, PageSize: 8, Deadline: deadline}
		ls, _, _, _ := f.Listings().List(&lq, nil)
		if len(ls) == 0 {
			continue
		}
		out := make([]render.Link, len(ls))
		for i, l := range ls {
			name := l.Name
			if name == "" {
				name = l.ID
			}
			out[i] = render.Link{Label: name + " (" + l.Store.String() + ")", URL: "/listings/" + l.Store.String() + "/" + url.PathEscape(l.ID)}
		}
		return out, false
	}
	return nil, false
}

// suggestTries are the searches of suggester.search for q, in order: q
// less its last one to four letters (three kept), then its distinct
// words of 3 letters or more, longest first (the most selective), at
// most suggestWords of them.
func suggestTries(q string) []string {
	var tries []string
	r := []rune(strings.TrimSpace(q))
	for n := len(r) - 1; n >= max(3, len(r)-4); n-- {
		tries = append(tries, strings.TrimSpace(string(r[:n])))
	}
	words := strings.Fields(q)
	if len(words) < 2 {
		return tries
	}
	words = slices.DeleteFunc(words, func(w string) bool { return utf8.RuneCountInString(w) < 3 })
	slices.SortFunc(words, func(a, b string) int {
		return cmp.Or(utf8.RuneCountInString(b)-utf8.RuneCountInString(a), strings.Compare(a, b))
	})
	words = slices.Compact(words)
	return append(tries, words[:min(len(words), suggestWords)]...)
}
