package edge

import (
	"context"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/access"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/apidocs"
	"github.com/edge-stats/edge/internal/lowprio"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
)

// precompressedPaths are the answers encoded in every coding at the best
// level whenever a state or an edition is published, before anyone asks:
// those a published state alone determines (summary, categories, stats,
// charts, tags, weeks) and the first pages dashboards ask for (every
// store's first page of listings, in both APIs), and the static documents
// (the OpenAPI description, /docs and its script, /), then the pages
// dashboards open with (precompressedPages). Every other answer
// is compressed at the fast level when a client first asks for it in a
// coding (docs/api-v1.md, Compression).
func precompressedPaths() []string {
	paths := []string{"/api/summary", "/api/permissions", "/api/categories", "/api/extensions",
		"/api/v1/listings", "/api/v1/tags", "/api/v1/week", "/api/v1/weeks",
		"/api/v1/openapi.json", "/", "/docs", apidocs.ScriptPath}
	for _, st := range views.Stores {
		name, n := st.String(), strconv.Itoa(int(st))
		paths = append(paths, "/api/categories?platform="+n, "/api/extensions?platform="+n,
			"/api/v1/listings?store="+name, "/api/v1/categories/"+name, "/api/v1/charts/"+name,
			"/api/v1/stores/"+name+"/stats")
	}
	return paths
}

// precompressedPages are the pages for people a dashboard reader opens
// with (the home page, each store's page, charts and categories, the
// topics, the editions and the definitions), asked as a browser asks
// (Accept: text/html) and precompressed like the answers above.
func precompressedPages() []string {
	paths := []string{"/", "/tags", "/weeks", "/week", "/events", "/definitions"}
	for _, st := range views.Stores {
		name := st.String()
		paths = append(paths, "/stores/"+name, "/charts/"+name, "/categories/"+name)
	}
	return paths
}

// precompressRound asks for every precompressed path in process, as the
// tool server asks for its reads (no limits apply), and encodes each
// answer sent that lacks its best variants.
func (s *Server) precompressRound(ctx context.Context, p *answer.Precompressor) {
	start := time.Now()
	p.Round()
	var capture answer.Capture
	rc := new(fasthttp.RequestCtx)
	compressed, reused := 0, 0
	api, pages := precompressedPaths(), precompressedPages()
	for i, path := range append(api, pages...) {
		if !waitForBuild(ctx, s.building) {
			return
		}
		rc.Request.Reset()
		rc.Response.Reset()
		rc.Request.Header.SetMethod(fiber.MethodGet)
		rc.Request.SetRequestURI(path)
		if i >= len(api) {
			rc.Request.Header.Set(fiber.HeaderAccept, fiber.MIMETextHTML)
		}
		rc.Init2(nil, discardLogger{}, false)
		rc.ResetUserValues()
		access.MarkInternal(rc)
		answer.CaptureAnswers(rc, &capture)
		s.handler(rc)
		for _, a := range capture.Answers() {
			did, err := p.Compress(a)
			if err != nil {
				s.log.Error("precompress", "path", path, "err", err)
				continue
			}
			if did {
				compressed++
			} else {
				reused++
			}
		}
	}
	s.metrics.precompressSeconds.Observe(time.Since(start).Seconds())
	s.metrics.precompressed.WithLabelValues("compressed").Add(float64(compressed))
	s.metrics.precompressed.WithLabelValues("reused").Add(float64(reused))
	s.log.Debug("answers precompressed", "compressed", compressed, "reused", reused, "took", time.Since(start))
}

// waitForBuild waits while building (nil: never) says a state is being
// read or built, and reports whether ctx is still live. A round runs on
// a thread at the lowest priority (package lowprio) that holds one of
// the Go scheduler's Ps whenever it is runnable: beside a build, which
// the kernel runs first, it would hold that P for long stretches while
// barely running, and the build would run on the other alone.
func waitForBuild(ctx context.Context, building func() <-chan struct{}) bool {
	if building != nil {
		if ch := building(); ch != nil {
			select {
			case <-ch:
			case <-ctx.Done():
			}
		}
	}
	return ctx.Err() == nil
}

// precompressStopWait is how long a stop waits for a precompression
// round under way.
const precompressStopWait = 2 * time.Second

// precompress runs a round after each publish of a state with figures or
// of an edition set (before the first figures, the first load needs the
// cores more), until ctx is done. A publish that changes neither the
// views' generation nor the editions (the figures of a replica published
// just before them) starts no round: a round with nothing new to encode
// would make the precompressor forget the previous round's encodings.
func (s *Server) precompress(ctx context.Context) {
	var p answer.Precompressor
	type published struct {
		gen      uint64
		editions *editions.Set
	}
	var last published
	for {
		state, eds := s.state.Changed(), s.editions.Changed()
		if st := s.state.Load(); st != nil && st.Figures != nil {
			if now := (published{st.Replica.Info().Generation, s.editions.Load()}); now != last {
				// At the lowest priority (package lowprio): requests
				// meanwhile are encoded at the fast level, and the build
				// of a fleet's next state on the same host comes first.
				done := make(chan struct{})
				go func() {
					defer close(done)
					lowprio.Run(func() { s.precompressRound(ctx, &p) })
				}()
				select {
				case <-done:
				case <-ctx.Done():
					// A stop waits for the round a moment only: at the
					// lowest priority on a busy host a round can be
					// starved for long. The rest ends at its next
					// answer, which checks ctx.
					select {
					case <-done:
					case <-time.After(precompressStopWait):
					}
					return
				}
				last = now
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-state:
		case <-eds:
		}
	}
}
