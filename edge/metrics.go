package edge

import (
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/edge-stats/edge/edge/access"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
)

// metrics exposes Prometheus metrics on /metrics: the background jobs'
// runs, failures, last success and duration, the published state's
// generation and size, and the Go runtime.
type metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	toolCalls *prometheus.CounterVec
	// precompressSeconds times each round of precompression, and
	// precompressed counts its answers by how their variants were made.
	precompressSeconds prometheus.Histogram
	precompressed      *prometheus.CounterVec
	// byRoute holds each route's latency histogram and request counts,
	// so that a request neither hashes nor validates its labels. It is
	// made once the routes are registered and never changes.
	byRoute map[string]*routeMetrics
	// draining is the server's: set, every answer closes its connection.
	draining *atomic.Bool
}

// routeMetrics is one route's latency histogram and its request counts by
// status, each made on first use.
type routeMetrics struct {
	latency  prometheus.Observer
	byStatus [600]atomic.Pointer[prometheus.Counter]
}

var (
	descJobRuns     = prometheus.NewDesc("edge_job_runs_total", "Successful runs of a background job.", []string{"job"}, nil)
	descJobFailures = prometheus.NewDesc("edge_job_failures_total", "Failed attempts of a background job.", []string{"job"}, nil)
	descJobSuccess  = prometheus.NewDesc("edge_job_last_success_timestamp_seconds", "When a background job last succeeded (0: never).", []string{"job"}, nil)
	descJobDuration = prometheus.NewDesc("edge_job_last_duration_seconds", "Duration of a background job's last successful run.", []string{"job"}, nil)
	descJobRunning  = prometheus.NewDesc("edge_job_running", "1 while a background job runs.", []string{"job"}, nil)
	descGeneration  = prometheus.NewDesc("edge_views_generation", "Generation of the published state (0: none yet).", nil, nil)
	descListings    = prometheus.NewDesc("edge_listings", "Listings in the published replica.", []string{"store"}, nil)
	descFigures     = prometheus.NewDesc("edge_figures_ready", "1 when computed figures are published.", nil, nil)
	descBuild       = prometheus.NewDesc("edge_figures_build_seconds", "Time the published figures took to build.", nil, nil)
	descDataAge     = prometheus.NewDesc("edge_data_newest_reading_timestamp_seconds", "Time of the newest reading in the published replica.", nil, nil)
	descEditions    = prometheus.NewDesc("edge_editions", "Weekly editions built.", nil, nil)
	descKeys        = prometheus.NewDesc("edge_keys_active", "Active API keys held in memory.", nil, nil)
	descKeysLoaded  = prometheus.NewDesc("edge_keys_loaded_timestamp_seconds", "When the key list was last loaded (0: never).", nil, nil)
	descUsageRead   = prometheus.NewDesc("edge_usage_read_timestamp_seconds", "When the fleet's daily usage was last read (0: never, and v1 answers 503); once it is older than the staleness bound each caller gets this edge's share of what was left of its day.", nil, nil)
	descFleet       = prometheus.NewDesc("edge_usage_fleet_edges", "Edges seen writing usage in the last hour, this one included: the number a caller's remainder of the day is shared by while the usage is stale.", nil, nil)
	descReserved    = prometheus.NewDesc("edge_usage_reserved_calls", "Keyed calls this edge has reserved ahead of use (written to the usage log, or being written) and not used yet: counted as used by the fleet once written, and never admitted if the edge stops or the day ends first.", nil, nil)
	descCallers     = prometheus.NewDesc("edge_limits_callers", "Callers the limits hold: with their minute's window (set=minute, bounded by EDGE_LIMITS_MAX_ACTIVE) and in the day's fleet totals (set=day, bounded by EDGE_LIMITS_MAX_SUBJECTS).", []string{"set"}, nil)
)

// stateCollector reads the server's sources at scrape time.
type stateCollector struct{ s *Server }

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descJobRuns, descJobFailures, descJobSuccess, descJobDuration, descJobRunning,
		descGeneration, descListings, descFigures, descBuild, descDataAge, descEditions, descKeys, descKeysLoaded, descUsageRead, descFleet, descReserved, descCallers} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	stamp := func(t time.Time) float64 {
		if t.IsZero() {
			return 0
		}
		return float64(t.UnixNano()) / 1e9
	}
	ch <- prometheus.MustNewConstMetric(descKeys, prometheus.GaugeValue, float64(c.s.keys.Len()))
	ch <- prometheus.MustNewConstMetric(descKeysLoaded, prometheus.GaugeValue, stamp(c.s.keys.LoadedAt()))
	ch <- prometheus.MustNewConstMetric(descUsageRead, prometheus.GaugeValue, stamp(c.s.limits.Usage.ReadAt()))
	ch <- prometheus.MustNewConstMetric(descFleet, prometheus.GaugeValue, float64(c.s.limits.Usage.Fleet()))
	ch <- prometheus.MustNewConstMetric(descReserved, prometheus.GaugeValue, float64(c.s.limits.Usage.Reserved()))
	ch <- prometheus.MustNewConstMetric(descCallers, prometheus.GaugeValue, float64(c.s.limits.Usage.Active()), "minute")
	ch <- prometheus.MustNewConstMetric(descCallers, prometheus.GaugeValue, float64(c.s.limits.Usage.Subjects()), "day")
	for _, j := range c.s.jobs() {
		var last float64
		if !j.LastSuccess.IsZero() {
			last = float64(j.LastSuccess.UnixNano()) / 1e9
		}
		running := 0.0
		if j.Running {
			running = 1
		}
		ch <- prometheus.MustNewConstMetric(descJobRuns, prometheus.CounterValue, float64(j.Runs), j.Name)
		ch <- prometheus.MustNewConstMetric(descJobFailures, prometheus.CounterValue, float64(j.Failures), j.Name)
		ch <- prometheus.MustNewConstMetric(descJobSuccess, prometheus.GaugeValue, last, j.Name)
		ch <- prometheus.MustNewConstMetric(descJobDuration, prometheus.GaugeValue, j.Duration.Seconds(), j.Name)
		ch <- prometheus.MustNewConstMetric(descJobRunning, prometheus.GaugeValue, running, j.Name)
	}
	st := c.s.state.Load()
	gen, ready, build, newest := 0.0, 0.0, 0.0, 0.0
	if st != nil {
		info := st.Replica.Info()
		gen = float64(info.Generation)
		if !info.ReadingsMark.IsZero() {
			newest = float64(info.ReadingsMark.Unix())
		}
		for i, n := range st.Replica.Counts() {
			ch <- prometheus.MustNewConstMetric(descListings, prometheus.GaugeValue, float64(n), views.Store(i).String())
		}
		if st.Figures != nil {
			_, took := st.Figures.BuiltAt()
			ready, build = 1, took.Seconds()
		}
	}
	ch <- prometheus.MustNewConstMetric(descGeneration, prometheus.GaugeValue, gen)
	ch <- prometheus.MustNewConstMetric(descFigures, prometheus.GaugeValue, ready)
	ch <- prometheus.MustNewConstMetric(descBuild, prometheus.GaugeValue, build)
	ch <- prometheus.MustNewConstMetric(descDataAge, prometheus.GaugeValue, newest)
	ch <- prometheus.MustNewConstMetric(descEditions, prometheus.GaugeValue, float64(c.s.editions.Load().Len()))
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		draining: &s.draining,
		reg:      prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_http_requests_total",
			Help: "HTTP requests by route and status."}, []string{"route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "edge_http_request_duration_seconds",
			Help:    "Time to answer, by route.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1}}, []string{"route"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_tool_calls_total",
			Help: "tools/call requests to /mcp, by the path that answered them: fast (edge's own) or sdk."}, []string{"path"}),
		precompressSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "edge_precompress_round_seconds",
			Help:    "Time to encode the answers of a published state in every coding at the best level.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60}}),
		precompressed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_precompressed_answers_total",
			Help: "Answers given their best variants when a state was published: compressed, or reused from an equal answer of the previous state."},
			[]string{"how"}),
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		stateCollector{s}, m.requests, m.latency, m.toolCalls,
		m.precompressSeconds, m.precompressed)
	m.reg.MustRegister(s.answers.Collectors()...)
	m.reg.MustRegister(s.misses.Collectors()...)
	m.reg.MustRegister(s.stream.Collectors()...)
	return m
}

// collectorsOf joins collectors into one, to register at once.
type collectorsOf []prometheus.Collector

func (cs collectorsOf) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range cs {
		c.Describe(ch)
	}
}

func (cs collectorsOf) Collect(ch chan<- prometheus.Metric) {
	for _, c := range cs {
		c.Collect(ch)
	}
}

// observe counts every request but the server's own by route pattern (never the raw path, so
// the label set stays small) and status, and times it.
func (m *metrics) observe(c *fiber.Ctx) error {
	if answer.Capturing(c.Context()) {
		return c.Next() // the server's own request, made to precompress answers
	}
	start := access.RequestTime(c) // when fasthttp read the request
	if m.draining.Load() {
		c.Context().SetConnectionClose()
	}
	err := c.Next()
	status := c.Response().StatusCode()
	if err != nil {
		// The error handler writes the status after this middleware returns.
		status = fiber.StatusInternalServerError
		var fe *fiber.Error
		var p *problem.Problem
		switch {
		case errors.As(err, &p):
			status = p.Status
		case errors.As(err, &fe):
			status = fe.Code
		}
	}
	route := routeOf(c, status)
	count, latency := m.handles(route, status)
	if count == nil {
		// Not a registered route or status: never on the hot path.
		m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
		m.latency.WithLabelValues(route).Observe(time.Since(start).Seconds())
		return err
	}
	count.Inc()
	latency.Observe(time.Since(start).Seconds())
	return err
}

// routeOf returns the route label of c's request answered with status:
// its route's pattern (never the raw path, so that the label set stays
// small), or "unmatched".
func routeOf(c *fiber.Ctx, status int) string {
	if r := c.Route(); r != nil && r.Path != "/" && status != fiber.StatusNotFound {
		return r.Path
	}
	return "unmatched"
}

// handles returns the count of route's requests answered with status and
// route's latency, made once each, as observe counts them and the replay
// path counts a replayed call (answered by route with status); nil for a
// route or status not registered.
func (m *metrics) handles(route string, status int) (prometheus.Counter, prometheus.Observer) {
	rm := m.byRoute[route]
	if rm == nil || status < 0 || status >= len(rm.byStatus) {
		return nil, nil
	}
	count := rm.byStatus[status].Load()
	if count == nil {
		c := m.requests.WithLabelValues(route, strconv.Itoa(status))
		rm.byStatus[status].CompareAndSwap(nil, &c)
		count = &c
	}
	return *count, rm.latency
}

// routesRegistered makes the per-route metrics of every route of app,
// once all are registered.
func (m *metrics) routesRegistered(app *fiber.App) {
	m.byRoute = map[string]*routeMetrics{"unmatched": {latency: m.latency.WithLabelValues("unmatched")}}
	for _, r := range app.GetRoutes() {
		if _, ok := m.byRoute[r.Path]; !ok {
			m.byRoute[r.Path] = &routeMetrics{latency: m.latency.WithLabelValues(r.Path)}
		}
	}
}

func (m *metrics) handler() fiber.Handler {
	return adaptor.HTTPHandler(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
}
