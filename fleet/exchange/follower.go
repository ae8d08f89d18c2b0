package exchange

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/fleet/trust"
	"github.com/edge-stats/edge/internal/follow"
)

// Follower fetches the leader's state for the views (builder.Source).
type Follower struct {
	cfg     Config
	leader  func() string // the leader's fleet address, "" when none is known
	leading func() bool
	client  *http.Client
	mu      sync.Mutex
	waiting time.Time // since when the leader has had no state; zero when it has
	alone   time.Time // since when no leader is known; zero while one is
	lost    time.Time // since when the leader named has not worked (Status); zero while it does
	heard   time.Time // when the leader named last answered as the leader (leaderWorked)
	heardBy string    // the address that answered then
	noDelta string    // the tag of a state whose delta was refused: the whole state next
	// older is the tag of the state the views refused last as older than
	// theirs (Refused): this edge holds its own state, not that one.
	older  string
	unread *unreadable // the leader's state of a format this edge does not read, nil when none
	held   place       // where the state taken last stands in the fleet's order (order.go)
	// heldBefore is held when the last fetch began (Refused).
	heldBefore place
}

// NewFollower returns a follower of the leader whose fleet address
// leader returns ("" when none is known); leading reports whether this
// edge leads (then it loads from ClickHouse).
func NewFollower(cfg Config, leader func() string, leading func() bool) *Follower {
	if cfg.Patience <= 0 {
		cfg.Patience = DefaultConfig().Patience
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultConfig().MaxBytes
	}
	if cfg.ElectionWait <= 0 {
		cfg.ElectionWait = DefaultConfig().ElectionWait
	}
	if cfg.Idle <= 0 {
		cfg.Idle = DefaultConfig().Idle
	}
	if cfg.Dir == "" {
		cfg.Dir = os.TempDir()
	}
	// What a follower stopped in the middle of a fetch left.
	if left, err := filepath.Glob(filepath.Join(cfg.Dir, fetchPattern)); err == nil {
		for _, p := range left {
			os.Remove(p)
		}
	}
	// No overall timeout: a large state takes as long as it takes. A
	// leader that stops sending for Config.Idle is cut (get).
	return &Follower{cfg: cfg, leader: leader, leading: leading, client: &http.Client{Transport: BoundTransport(cfg.Keys, cfg.LeaderPin),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// CheckAddress reports whether an edge with keys (or without: nil) may
// believe addr as its leader's fleet address: with keys, an https://
// address (the leader then proves itself in the handshake); without,
// only http:// on loopback, since nothing else could prove itself. The
// address comes from ZooKeeper, which others may write to.
func CheckAddress(addr string, keys *trust.Keys) error {
	u, err := url.Parse(addr)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("fleet: leader address %q is not a URL of a host", addr)
	}
	if keys != nil {
		if u.Scheme != "https" {
			return fmt.Errorf("fleet: leader address %q: this edge has the fleet's token and takes the state only over TLS (https://)", addr)
		}
		return nil
	}
	if u.Scheme != "http" {
		return fmt.Errorf("fleet: leader address %q: this edge has no fleet token (EDGE_FLEET_TOKEN), so it reads only an http:// address on loopback", addr)
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); (err != nil || !ip.IsLoopback()) && host != "localhost" {
		return fmt.Errorf("fleet: leader address %q is not on loopback, and this edge has no fleet token (EDGE_FLEET_TOKEN) to check who answers there", addr)
	}
	return nil
}

// leaderAddr returns the leader's fleet address, or an error: one
// wrapping follow.ErrNoSource when the edge should do the work itself.
func (f *Follower) leaderAddr() (string, error) {
	if f.leading() {
		return "", fmt.Errorf("this edge leads: %w", follow.ErrNoSource)
	}
	addr := f.leader()
	if addr == "" {
		// An election just started (or a leader just lost) names one
		// within seconds: wait for it, so that edges starting together
		// do not all load from ClickHouse.
		if f.noLeader() < f.cfg.ElectionWait {
			return "", errors.New("fleet: waiting for the election to name a leader")
		}
		return "", fmt.Errorf("no leader with a fleet address for %v: %w", f.cfg.ElectionWait, follow.ErrNoSource)
	}
	f.mu.Lock()
	f.alone = time.Time{}
	f.mu.Unlock()
	if err := CheckAddress(addr, f.cfg.Keys); err != nil {
		f.cfg.Metrics.refuse("address")
		return "", fmt.Errorf("%w: %w", err, follow.ErrNoSource)
	}
	return strings.TrimSuffix(addr, "/"), nil
}

// get asks the leader for path; an error wraps follow.ErrNoSource when the
// leader is out of reach.
func (f *Follower) get(parent context.Context, addr, path string, header http.Header) (*http.Response, error) {
	return f.ask(parent, http.MethodGet, addr, path, header)
}

// ask is get with another method (HEAD).
func (f *Follower) ask(parent context.Context, method, addr, path string, header http.Header) (*http.Response, error) {
	ctx, cancel := context.WithCancel(parent)
	timer := time.AfterFunc(f.cfg.Idle, cancel)
	req, err := http.NewRequestWithContext(ctx, method, addr+path, nil)
	if err != nil {
		timer.Stop()
		cancel()
		return nil, fmt.Errorf("fleet: leader address %q: %w", addr, follow.ErrNoSource)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	asked := time.Now()
	resp, err := f.client.Do(req)
	if err != nil {
		cancel()
		if parent.Err() != nil {
			return nil, parent.Err()
		}
		if f.heardSince(addr, asked) {
			// An ask older than the leader's last answer (a long poll
			// held through a cut that ended since): it says nothing of
			// the leader now.
			return nil, fmt.Errorf("fleet: leader at %s: an ask from before its last answer failed (%w): %w", addr, err, follow.ErrNoSource)
		}
		// Said as what it is: a refusal is not a network fault.
		switch {
		case errors.Is(err, trust.ErrNotElected):
			f.cfg.Metrics.refuse("pin")
			f.leaderFailed(addr, "refused: "+trust.ErrNotElected.Error())
			return nil, fmt.Errorf("fleet: leader at %s: %w: %w", addr, err, follow.ErrNoSource)
		case isHandshake(err):
			f.cfg.Metrics.refuse("handshake")
			f.leaderFailed(addr, fmt.Sprintf("refused: it did not prove it holds the fleet's token (%v)", err))
			return nil, fmt.Errorf("fleet: leader at %s did not prove it holds the fleet's token (%v): %w", addr, err, follow.ErrNoSource)
		}
		f.leaderFailed(addr, fmt.Sprintf("out of reach (%v)", err))
		return nil, fmt.Errorf("fleet: leader at %s out of reach (%w): %w", addr, err, follow.ErrNoSource)
	}
	resp.Body = &idleBody{ReadCloser: resp.Body, timer: timer, idle: f.cfg.Idle, cancel: cancel}
	return resp, nil
}

// idleBody is a response body whose request is cut when no byte comes
// for idle: a leader that stops sending does not hold a follower's job.
type idleBody struct {
	io.ReadCloser
	timer  *time.Timer
	idle   time.Duration
	cancel context.CancelFunc
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	b.cancel()
	return b.ReadCloser.Close()
}

// Days returns the days of exports the leader has (cron.ExportsSource).
func (f *Follower) Days(ctx context.Context) ([]exports.Manifest, error) {
	addr, err := f.leaderAddr()
	if err != nil {
		return nil, err
	}
	resp, err := f.get(ctx, addr, ExportsPath, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound: // the leader builds none
		return nil, fmt.Errorf("fleet: leader at %s builds no exports: %w", addr, follow.ErrNoSource)
	default:
		return nil, fmt.Errorf("fleet: leader at %s: exports: %s", addr, resp.Status)
	}
	var days []exports.Manifest
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&days); err != nil {
		return nil, fmt.Errorf("fleet: leader at %s: exports: %w", addr, err)
	}
	return days, nil
}

// Latest returns the latest sets of exports the leader has
// (cron.ExportsSource); a leader of a release before the lake has none.
func (f *Follower) Latest(ctx context.Context) ([]exports.Manifest, error) {
	addr, err := f.leaderAddr()
	if err != nil {
		return nil, err
	}
	resp, err := f.get(ctx, addr, ExportsPath+"/"+exports.LatestDir, nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, nil
	default:
		return nil, fmt.Errorf("fleet: leader at %s: latest exports: %s", addr, resp.Status)
	}
	var sets []exports.Manifest
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&sets); err != nil {
		return nil, fmt.Errorf("fleet: leader at %s: latest exports: %w", addr, err)
	}
	return sets, nil
}

// Open returns one file of a day of the leader's exports, or of a
// latest set when day is "latest/<day>" (cron.ExportsSource).
func (f *Follower) Open(ctx context.Context, day, name string) (io.ReadCloser, error) {
	addr, err := f.leaderAddr()
	if err != nil {
		return nil, err
	}
	prefix := ExportsPath + "/"
	if set, ok := strings.CutPrefix(day, exports.LatestDir+"/"); ok {
		prefix, day = prefix+exports.LatestDir+"/", set
	}
	resp, err := f.get(ctx, addr, prefix+url.PathEscape(day)+"/"+escapePath(name), nil)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("fleet: leader at %s: export %s/%s: %s", addr, day, name, resp.Status)
	}
	return resp.Body, nil
}

// noLeader records that no leader is known and returns for how long.
func (f *Follower) noLeader() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.alone.IsZero() {
		f.alone = time.Now()
	}
	return time.Since(f.alone)
}

// settled records that the leader has a state.
func (f *Follower) settled() {
	f.mu.Lock()
	f.waiting = time.Time{}
	f.mu.Unlock()
}

// waitedTooLong records that the leader has no state, and reports whether
// an edge without a state of its own (have "") has waited for one past
// Patience. An edge with a state keeps it and waits.
func (f *Follower) waitedTooLong(have string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.waiting.IsZero() {
		f.waiting = time.Now()
	}
	return have == "" && time.Since(f.waiting) > f.cfg.Patience
}

// escapePath escapes each segment of a file's name (a Parquet file's
// has slashes), keeping the slashes.
func escapePath(name string) string {
	segs := strings.Split(name, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
