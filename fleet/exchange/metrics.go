package exchange

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Metrics are the fleet's counters, for the edge's /metrics: what an edge
// refused of its fleet, the bytes of states sent and received by kind
// (whole or delta), and the generation of the newest state (the
// leader's, on the leader and on each follower, so that a follower
// behind shows as a lower number).
type Metrics struct {
	refused    *prometheus.CounterVec
	bytes      *prometheus.CounterVec
	generation prometheus.Gauge
}

// NewMetrics returns the fleet's counters.
func NewMetrics() *Metrics {
	return &Metrics{
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_fleet_refused_total",
			Help: "What an edge refused of its fleet, by reason: address (a leader address it does not believe), handshake (the other end proved no hold of the fleet's token), signature (a state not signed by the fleet), digest (a state damaged), size (a state past the bound), format (a state it cannot read), delta (a delta that did not give the state it names: the edge took the whole state), older (a state older than the one served, by the leader's epoch and generation)."},
			[]string{"reason"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "edge_fleet_state_bytes_total",
			Help: "Bytes of the fleet's states sent (by the leader) and received (by a follower), by kind: whole (a whole state) or delta (what changed since the state the follower held)."},
			[]string{"direction", "kind"}),
		generation: prometheus.NewGauge(prometheus.GaugeOpts{Name: "edge_fleet_state_generation",
			Help: "The leader's generation of the newest state this edge holds of its fleet: on the leader, the newest it wrote; on a follower, the newest it took. A follower lower than its leader is behind."}),
	}
}

// Collectors returns the counters to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.refused, m.bytes, m.generation}
}

// refuse counts a refusal.
func (m *Metrics) refuse(reason string) {
	if m != nil {
		m.refused.WithLabelValues(reason).Inc()
	}
}

// moved counts n bytes of a state of kind ("whole", "delta") sent or
// received (direction).
func (m *Metrics) moved(direction, kind string, n int64) {
	if m != nil && n > 0 {
		m.bytes.WithLabelValues(direction, kind).Add(float64(n))
	}
}

// holds records the leader's generation of the newest state held.
func (m *Metrics) holds(gen uint64) {
	if m != nil {
		m.generation.Set(float64(gen))
	}
}

// Refused returns how many refusals of reason were counted.
func (m *Metrics) Refused(reason string) float64 {
	if m == nil {
		return 0
	}
	return value(m.refused, reason)
}

// Bytes returns the bytes of states of kind counted in direction.
func (m *Metrics) Bytes(direction, kind string) float64 {
	if m == nil {
		return 0
	}
	return value(m.bytes, direction, kind)
}

// Generation returns the generation of the newest state held.
func (m *Metrics) Generation() float64 {
	if m == nil {
		return 0
	}
	var pm dto.Metric
	m.generation.Write(&pm)
	return pm.GetGauge().GetValue()
}

func value(v *prometheus.CounterVec, labels ...string) float64 {
	c, err := v.GetMetricWithLabelValues(labels...)
	if err != nil {
		return 0
	}
	var pm dto.Metric
	c.Write(&pm)
	return pm.GetCounter().GetValue()
}
