package builder

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/internal/memory"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// Builder builds and publishes the edge's state. Its full and incremental
// jobs share one lock, so that a publish never replaces a newer state with
// one derived from an older one.
type Builder struct {
	db  *analytics.Lazy
	pub *views.Published[served.State]
	log *slog.Logger
	mu  sync.Mutex
	// heavy is held by a full load, and by other jobs for their large
	// reads (week states), so that their memory never adds up.
	heavy sync.Mutex

	// memory returns the live heap after the last collection and the
	// process's memory limit (math.MaxInt64: none); tests replace it.
	memory func() (live, limit int64)
	// keepRoom collects what a build left and keeps the pages for the
	// next (memory.CollectKeeping); tests replace it.
	keepRoom   func(n int, listingsBytes int64, spareAhead bool)
	waits      atomic.Int64  // full reloads put off for memory
	refusedOld atomic.Int64  // states not published: older than the one served (goesBack)
	readFrom   cursor        // where the next refresh reads from (refreshFrom); held with mu
	afterPart  func()        // test hook: runs after the first part of a full load
	onBuild    func()        // runs before a reload builds its figures (see OnReloadBuild)
	figures    chan struct{} // closed when the first state with figures is published
	once       sync.Once

	// source, when set, is where the edge takes its state from instead
	// of ClickHouse (a fleet's leader); tag names the state it gave last
	// ("": the published state was loaded from ClickHouse).
	source Source
	tag    string
	// tagNow is tag, for readers that do not hold the jobs' lock
	// (FollowedTag).
	tagNow atomic.Pointer[string]
	// onPublish, when set, is given every state to be published with
	// figures, before they are built (OnPublish).
	onPublish func(r *replica.Replica, snapshots int64)
	// changeWindow is how far back the listings' change log reaches, from
	// the listings' watermark (SetChangeWindow).
	changeWindow time.Duration
	// spare is room a follower made ahead for its next delta's listings
	// (makeSpare); spareMaking is set while it is being made.
	spare       atomic.Pointer[replica.Spare]
	spareMaking atomic.Bool
	// building is closed when the state this edge reads or builds is
	// published or given up; nil while it builds none (Building).
	building atomic.Pointer[chan struct{}]
}

// Building returns a channel closed once the state this edge is reading
// (a fleet's state) or building (its figures) is published or given up,
// or nil while it builds none. Work that can wait waits on it: the
// answers' precompression, which runs on a thread at the lowest priority
// and so, while the kernel runs it seldom beside a build, holds one of
// the Go scheduler's Ps the build would use for as long as it runs.
func (v *Builder) Building() <-chan struct{} {
	if ch := v.building.Load(); ch != nil {
		return *ch
	}
	return nil
}

// startBuilding marks a state's read or build under way until the func it
// returns is called. A mark already under way (a fleet state's read,
// whose build follows) is kept, and the func returned does nothing.
func (v *Builder) startBuilding() (end func()) {
	ch := make(chan struct{})
	if !v.building.CompareAndSwap(nil, &ch) {
		return func() {}
	}
	return func() {
		v.building.Store(nil)
		close(ch)
	}
}

// DefaultChangeWindow is how far back the listings' change log reaches
// unless SetChangeWindow says otherwise: 180 days.
const DefaultChangeWindow = 180 * 24 * time.Hour

// SetChangeWindow sets how far back the listings' change log reaches,
// from the newest metadata crawl read. Set it before the jobs start.
func (v *Builder) SetChangeWindow(d time.Duration) { v.changeWindow = d }

// changesFrom returns where the change log of a replica with info starts.
func (v *Builder) changesFrom(info replica.Info) time.Time {
	return info.ListingsMark.Add(-v.changeWindow)
}

// withChanges returns r with the change log of every metadata version
// in its window, read from ClickHouse.
func (v *Builder) withChanges(ctx context.Context, conn driver.Conn, r *replica.Replica) (*replica.Replica, error) {
	start := time.Now()
	log, err := analytics.LoadChanges(ctx, conn, r, v.changesFrom(r.Info()))
	if err != nil {
		return nil, fmt.Errorf("generation %d: %w", r.Info().Generation, err)
	}
	v.log.Info("changes loaded", "generation", r.Info().Generation, "changes", log.Len(), "bytes", log.Bytes(), "took", time.Since(start).Round(time.Millisecond))
	return r.WithChanges(log), nil
}

// New returns the builder of the state published in pub.
func New(db *analytics.Lazy, pub *views.Published[served.State], log *slog.Logger) *Builder {
	return &Builder{db: db, pub: pub, log: log, memory: memory.HeapNow, keepRoom: memory.CollectKeeping, figures: make(chan struct{}), changeWindow: DefaultChangeWindow}
}

// WaitFigures waits until the first state with figures is published, or
// ctx ends. A job that would compete with the first full load for
// ClickHouse and memory (the editions) waits on it, so that the listings
// and then the figures are served as soon as a restart allows.
func (v *Builder) WaitFigures(ctx context.Context) error {
	select {
	case <-v.figures:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// OnReloadBuild sets what a full reload runs before it builds the new
// figures, where two states are live and its memory peaks: the server
// drops its answer cache there, whose answers belong to the state being
// replaced. Set it before the jobs start.
func (v *Builder) OnReloadBuild(f func()) { v.onBuild = f }

func (v *Builder) nextGeneration() uint64 {
	if cur := v.pub.Load(); cur != nil {
		return cur.Replica.Info().Generation + 1
	}
	return 1
}

// Heavy returns the lock a full load holds: another job that reads a
// state of every listing holds it too, so that the two never hold their
// memory at once.
func (v *Builder) Heavy() sync.Locker { return &v.heavy }

// ReloadsWaiting returns how many full reloads were put off because a
// second state would not have fit under the memory limit.
func (v *Builder) ReloadsWaiting() int64 { return v.waits.Load() }

// publish builds r's figures and publishes them with r, unless r is
// older than the state served (an error wrapping ErrGoesBack); prev, when not
// nil, is the figures of the state r was read from as a delta, which the
// build starts from (figures.BuildFrom); gc, when not nil, sets the
// collector for the build (memory.BuildGC) and returns what restores it.
func (v *Builder) publish(r *replica.Replica, prev *figures.Figures, snapshots int64, kind string, gc func(n int) (restore func()), attrs ...any) error {
	if cur := v.pub.Load(); cur != nil && cur.Replica != r && goesBack(r, cur.Replica) {
		v.refusedOld.Add(1)
		ri, ci := r.Info(), cur.Replica.Info()
		return fmt.Errorf("%s state of generation %d (newest reading %v, metadata %v) against the served one's (%v, %v), kept: %w",
			kind, ri.Generation, ri.ReadingsMark, ri.ListingsMark, ci.ReadingsMark, ci.ListingsMark, ErrGoesBack)
	}
	defer v.startBuilding()() // a fleet state's read marked it already
	restore := func() {}
	if gc != nil {
		restore = gc(r.Len())
	}
	if v.onPublish != nil {
		// Handed out before its figures are built: a fleet's followers
		// take the state and build theirs beside the leader's, so that
		// the fleet's edges publish it within seconds of each other.
		v.onPublish(r, snapshots)
	}
	f := figures.BuildFrom(prev, r, snapshots)
	restore()
	v.pub.Publish(&served.State{Replica: r, Figures: f})
	v.tag = "" // a fleet state's publish sets it again
	v.tagNow.Store(new(string))
	v.once.Do(func() { close(v.figures) })
	_, took := f.BuiltAt()
	info := r.Info()
	phases := make([]any, 0, 2*len(f.BuildPhases()))
	for _, p := range f.BuildPhases() {
		phases = append(phases, p.Name, p.Took.Round(time.Millisecond))
	}
	v.log.Debug("views built", phases...)
	v.log.Info("views published", append([]any{"kind", kind, "generation", info.Generation, "listings", r.Len(),
		"load_time", info.LoadTime.Round(time.Millisecond), "build_time", took.Round(time.Millisecond), "merged", f.Merged()}, attrs...)...)
	return nil
}

// indexText builds the text index of r (none when r shares it with the
// replica it came from) and logs how long it took.
func (v *Builder) indexText(r *replica.Replica) {
	start := time.Now()
	r.IndexText()
	if took := time.Since(start); took > 10*time.Millisecond {
		v.log.Info("text indexed", "generation", r.Info().Generation, "listings", r.Len(), "took", took.Round(time.Millisecond),
			"index_mib", r.TextIndexBytes()>>20)
	}
}
