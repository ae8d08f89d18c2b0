// Package read serves the edge's reads: each declared once, as a Read
// (its parameters parsed and validated in one place, its cache key, its
// cache rules, and a function from the published state to a typed
// result), and answered in the representation one of its codecs writes
// (JSON, CSV, NDJSON, an HTML page, an Atom feed). Serve is the one path
// every read takes: the alias of the request as sent, the miss gate, the
// parameters read, the cache key with the codec's name, the result built
// in a turn of the miss gate and encoded by the codec, the alias kept;
// the Responder sends the answer.
//
// A codec says what it needs beyond the result's JSON (Needs: a count of
// every row, the page before, the form's values, more rows a page), so
// a read never asks which route called it.
package read

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/edge-stats/edge/edge/accept"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/answer/querykey"
	"github.com/edge-stats/edge/edge/missgate"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/served"
)

// Needs is what a codec needs of a read beyond its JSON's fields.
type Needs struct {
	// Total asks for how many rows the query lists over all its pages.
	Total bool
	// Before asks for the cursor of the page before (cursors run forward).
	Before bool
	// Form asks for the query as a page's form reads it: its canonical
	// parameters, which the page writes its form and links from (and its
	// cache key then holds).
	Form bool
	// Rows is the most rows a page of this codec holds (0: the read's own
	// bound): a file of a list holds more rows than a page of JSON.
	Rows int
}

// Codec is one representation of a read's result T.
type Codec[T any] struct {
	// Name is the codec's name, as format= names it (json, csv, ndjson,
	// html, atom) and as the cache key holds it.
	Name string
	// Type is the media type the codec answers in, lower-case and without
	// parameters, as an Accept field names it.
	Type string
	// Needs is what the codec needs of the read.
	Needs Needs
	// CacheControl, when set, replaces the read's for this codec's answers
	// (a page's differs from its API's).
	CacheControl string
	// Encode writes v as an answer.
	Encode func(c *fiber.Ctx, v *T) (*answer.Answer, error)
}

// Read is a read declared once: P its parameters as read, T its result.
type Read[P, T any] struct {
	// Route is the route's name in cache keys and aliases ("/api/v1/listings").
	Route string
	// Parse reads and validates the request's parameters against the
	// published state st, for a codec needing n. An error is the
	// problem answered.
	Parse func(c *fiber.Ctx, st *served.State, n Needs) (P, error)
	// Key adds the parameters to k, the key of the route, the state's
	// generation and the codec: every spelling of one query gives one key.
	Key func(k answer.Key, p *P) answer.Key
	// First reports whether the answer is kept on its first ask (a search
	// that held a slot of the search pool, a page the server asks for
	// itself); others are kept on their second (answer.Cache.SetMinUses).
	// Nil: never on the first.
	First func(c *fiber.Ctx, p *P) bool
	// Run computes the result from st, for a codec needing n, in a turn
	// of the miss gate.
	Run func(c *fiber.Ctx, st *served.State, p *P, n Needs) (*T, error)
	// Aliased says the answer is also kept under the request's query as
	// sent (answer.Cache.Alias), so that a repeat skips Parse: for reads
	// whose parameters cost something to read.
	Aliased bool
	// CacheControl is the answers' Cache-Control (answer.Private when
	// empty), Page where their page for people is (the Link header).
	CacheControl string
	Page         answer.Page
	// NotReady names the figures the read waits for after a restart, for
	// its 503 ("Listing figures are"); empty: the read needs the state's
	// replica only.
	NotReady string
	// Cheap says the result is built from memory at the cost of a
	// document: it takes no turn of the miss gate and is kept on its
	// first ask (answer.Cache.Get).
	Cheap bool
	// Pass, when set, reports whether the request is another route's
	// (the home page's read takes a browser's request once the figures
	// are built; a program's goes on to the API's links): it is handed
	// on (answer.ErrPass), and the answers name Accept in Vary.
	Pass func(c *fiber.Ctx, st *served.State) bool
}

// Loading is the 503 of a read asked before the first state is published.
func Loading() error {
	return problem.New(http.StatusServiceUnavailable,
		"The listing replica is still loading after a restart. Retry in a few seconds.").RetryAfter(5).
		ForReaders("The listings are still loading after a restart.")
}

// Env is what every read is served from.
type Env struct {
	State   *views.Published[served.State]
	Answers *answer.Cache
	// MissCaller names the caller whose misses wait in the miss gate.
	MissCaller func(c *fiber.Ctx) missgate.Caller
	// Paths records the routes added with Get (nil: none recorded).
	Paths *Paths
}

// Handler is a read's handler, made only by Serve: a route added with
// Env.Get is served on the one path.
type Handler struct{ h answer.Handler }

// Get adds the GET route path of r (an app or a group) answered by h
// through respond, after the handlers before (a guard, a limit), and
// records its full path.
func (e Env) Get(r fiber.Router, path string, respond answer.Responder, h Handler, before ...fiber.Handler) {
	if e.Paths != nil {
		prefix := ""
		if g, ok := r.(*fiber.Group); ok {
			prefix = g.Prefix
		}
		e.Paths.add(prefix + path)
	}
	r.Get(path, append(before, respond.Handle(h.h))...)
}

// Paths are the full paths of the routes served as reads.
type Paths struct {
	mu sync.Mutex
	m  map[string]bool
}

// NewPaths returns an empty record of paths.
func NewPaths() *Paths { return &Paths{m: map[string]bool{}} }

func (p *Paths) add(path string) {
	p.mu.Lock()
	p.m[path] = true
	p.mu.Unlock()
}

// List returns the recorded paths, sorted.
func (p *Paths) List() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]string, 0, len(p.m))
	for path := range p.m {
		out = append(out, path)
	}
	slices.Sort(out)
	return out
}

// Serve returns the handler of rd answered by codecs, the first of which
// is the one a request that names none gets.
func Serve[P, T any](env Env, rd *Read[P, T], codecs ...Codec[T]) Handler {
	if len(codecs) == 0 {
		panic("read.Serve: " + rd.Route + " has no codec")
	}
	// routes are the alias routes of each codec: one query string
	// answered in two codecs is two aliases.
	routes := make([]string, len(codecs))
	for i, cd := range codecs {
		routes[i] = rd.Route + "|" + cd.Name
	}
	cacheControl := rd.CacheControl
	if cacheControl == "" {
		cacheControl = answer.Private
	}
	vary := len(codecs) > 1 || rd.Pass != nil
	return Handler{func(c *fiber.Ctx) (answer.Reply, error) {
		i, err := Pick(c, codecs)
		if err != nil {
			return answer.Reply{}, err
		}
		cd := &codecs[i]
		reply := answer.Reply{CacheControl: cacheControl, VaryAccept: vary, Page: rd.Page}
		if cd.CacheControl != "" {
			reply.CacheControl = cd.CacheControl
		}
		var aliasBuf [256]byte
		var alias answer.Key
		if rd.Aliased {
			alias = querykey.Alias(aliasBuf[:0], routes[i], env.State, c.Context())
			if a, ok := env.Answers.Aliased(alias); ok {
				reply.Answer = a
				return reply, nil
			}
		}
		var who missgate.Caller
		if !rd.Cheap {
			who = env.MissCaller(c)
			if err := env.Answers.Crowded(who); err != nil {
				return answer.Reply{}, err // its queue is full: refused before its query is read
			}
		}
		st := env.State.Load()
		if rd.Pass != nil && rd.Pass(c, st) {
			return answer.Reply{}, answer.ErrPass
		}
		switch {
		case rd.NotReady != "" && (st == nil || st.Figures == nil):
			return answer.Reply{}, problem.NotReady(rd.NotReady)
		case st == nil:
			return answer.Reply{}, Loading()
		}
		p, err := rd.Parse(c, st, cd.Needs)
		if err != nil {
			return answer.Reply{}, err
		}
		var buf [256]byte
		key := rd.Key(answer.NewKey(buf[:0], rd.Route, st.Replica.Info().Generation).Str("as", cd.Name), &p)
		build := func() (*answer.Answer, error) {
			v, err := rd.Run(c, st, &p, cd.Needs)
			if err != nil {
				return nil, err
			}
			return cd.Encode(c, v)
		}
		var a *answer.Answer
		if rd.Cheap {
			a, err = env.Answers.Get(key, build)
		} else {
			a, err = env.Answers.GetQuery(key, who, rd.First != nil && rd.First(c, &p), build)
		}
		if err != nil {
			return answer.Reply{}, err
		}
		if rd.Aliased && !a.NoStore {
			env.Answers.Alias(alias, key)
		}
		reply.Answer = a
		return reply, nil
	}}
}

// Pick returns the index of the codec the request asks for: the one its
// format parameter names (an unknown name is a 400 naming those there
// are), else the one its Accept field weighs most (the first among
// equals, and when it accepts none of them).
func Pick[T any](c *fiber.Ctx, codecs []Codec[T]) (int, error) {
	// The query is parsed only when it may name a format: a cached
	// answer's request is answered from its raw query (the alias).
	if !bytes.Contains(c.Context().URI().QueryString(), formatParam) {
		return pickAccepted(c, codecs), nil
	}
	if f := utils.UnsafeString(c.Context().QueryArgs().Peek("format")); f != "" {
		for i := range codecs {
			if codecs[i].Name == f {
				return i, nil
			}
		}
		names := make([]string, len(codecs))
		for i := range codecs {
			names[i] = codecs[i].Name
		}
		return 0, problem.Newf(http.StatusBadRequest, "format: %.20q is not a format of this address; use one of %s, or leave format out.",
			f, strings.Join(names, ", ")).ForReaders("This list is offered as " + strings.Join(names, ", ") + " only.")
	}
	return pickAccepted(c, codecs), nil
}

// formatParam is what a query naming a format holds.
var formatParam = []byte("format=")

// pickAccepted returns the index of the codec c's Accept field weighs
// most: the first among equals, and when it accepts none of them.
func pickAccepted[T any](c *fiber.Ctx, codecs []Codec[T]) int {
	if len(codecs) == 1 {
		return 0
	}
	header := c.Request().Header.Peek(fiber.HeaderAccept)
	if len(header) == 0 {
		return 0
	}
	best, bestQ := 0, 0
	for i := range codecs {
		if q := accept.Quality(header, codecs[i].Type); q > bestQ {
			best, bestQ = i, q
		}
	}
	return best
}
