package exchange

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/edge-stats/edge/fleet/trust"
	"github.com/edge-stats/edge/views/replica"
)

// States as what changed. Every state the leader writes is
// named by its tag, `"state-<digest>"` (replica.DigestOf: its content,
// not its generation), sent beside the whole state's ETag in
// TagHeader. Beside the whole state, the leader keeps the deltas from
// each of its last Config.Deltas states to the next (replica.WriteDelta).
// A follower that holds one of those states asks with RFC 3229's delta
// encoding: If-None-Match its tag and `A-IM: edge-delta`; the leader
// answers 304 when it is the newest, 226 IM Used with the delta from it
// (`IM: edge-delta`, `Delta-Base` its tag, `ETag` the tag of the state it
// gives) when it keeps one, and the whole state otherwise. The follower
// takes one delta after another, up to maxChain, then builds its figures
// once. A delta is signed as a whole state is (trust.Keys.SignDelta: the
// SHA-256 of its bytes, sent in DeltaSumHeader, its generation and both
// tags), and the state it gives must have the digest its tag names
// (replica.ReadDelta checks): else the follower counts a refusal
// ("delta") and takes the whole state.

const (
	// deltaIM names the delta encoding of the fleet's states (RFC 3229).
	deltaIM = "edge-delta"
	// TagHeader carries the tag of the state a whole state's answer
	// holds, for the follower to name it by when it asks for a delta.
	TagHeader = "Edge-State-Tag"
	// DeltaSumHeader carries the SHA-256 (hex) of a delta's bytes.
	DeltaSumHeader = "Edge-Delta-Sha256"
	// maxChain bounds the deltas a follower takes in one ask; further
	// behind, it takes the whole state.
	maxChain = 16
)

// stateTag returns the tag of the state of digest d.
func stateTag(d replica.Digest) string { return `"state-` + hex.EncodeToString(d[:]) + `"` }

// parseStateTag returns the digest a state's tag names.
func parseStateTag(tag string) (replica.Digest, bool) {
	var d replica.Digest
	h, ok := strings.CutPrefix(tag, `"state-`)
	if h, ok2 := strings.CutSuffix(h, `"`); ok && ok2 && len(h) == 2*len(d) {
		if _, err := hex.Decode(d[:], []byte(h)); err == nil {
			return d, true
		}
	}
	return d, false
}

// acceptsDelta reports whether a request's A-IM lists the fleet's delta
// encoding.
func acceptsDelta(h http.Header) bool {
	for _, v := range h.Values("A-IM") {
		for _, im := range strings.Split(v, ",") {
			im, _, _ = strings.Cut(im, ";")
			if strings.EqualFold(strings.TrimSpace(im), deltaIM) {
				return true
			}
		}
	}
	return false
}

// held is the newest state the leader wrote: the base of its next delta.
type held struct {
	r         *replica.Replica
	digest    replica.Digest
	snapshots int64
}

// deltaFile is a delta the leader serves.
type deltaFile struct {
	path         string
	sum          string // SHA-256 of its bytes, hex
	size         int64
	gen          uint64 // the generation of the state it gives
	base, result string // the tags of the state it applies to and of the one it gives
	sig          string // trust.Keys.SignDelta's, "" without keys
}

// deltaSet is the deltas the leader keeps, oldest first, and the tag of
// its newest state. It is immutable once published.
type deltaSet struct {
	tag   string
	gen   uint64
	order []*deltaFile
	from  map[string]*deltaFile // by the tag of the state each applies to
}

// forget drops the state kept as the next delta's base and the deltas:
// this edge no longer leads.
func (p *Publisher) forget() {
	p.last.Store(nil)
	if old := p.deltas.Swap(nil); old != nil {
		for _, d := range old.order {
			os.Remove(d.path)
		}
	}
}

// writeDelta writes the delta from the newest state written to o's (of
// digest), and publishes it with the deltas kept, o's state now the
// newest; it reports whether it wrote one. Only Run calls it, one at a
// time.
func (p *Publisher) writeDelta(o offer, digest replica.Digest) (wrote bool) {
	prev := p.last.Swap(&held{r: o.r, digest: digest, snapshots: o.snapshots})
	next := &deltaSet{tag: stateTag(digest), gen: o.r.Info().Generation, from: map[string]*deltaFile{}}
	if set := p.deltas.Load(); set != nil {
		next.order = append(next.order, set.order...)
	}
	if prev != nil && prev.digest != digest && p.cfg.Deltas > 0 {
		d, err := p.writeDeltaFile(prev, o, digest)
		if err != nil {
			p.log.Warn("fleet delta not written: followers take the whole state", "generation", o.r.Info().Generation, "err", err)
		} else {
			next.order = append(next.order, d)
			wrote = true
		}
	}
	for len(next.order) > p.cfg.Deltas {
		os.Remove(next.order[0].path) // a send in progress keeps its open file
		next.order = next.order[1:]
	}
	for _, d := range next.order {
		next.from[d.base] = d // a later delta from the same state wins: it leads to the newest
	}
	p.deltas.Store(next)
	p.cfg.Metrics.holds(next.gen)
	p.notify()
	return wrote
}

// notify wakes the asks held until a newer state (waitWhileCurrent).
func (p *Publisher) notify() {
	ch := make(chan struct{})
	close(*p.changed.Swap(&ch))
}

// current reports whether tag names the newest state this edge serves:
// the state of its newest delta, written before that state's whole file,
// or the whole file's once it is written.
//
// An ask by the whole file's ETag (an edge that takes no deltas: the
// release before) is current while that file is the newest whole one,
// though a newer state's delta is out (Config.WholeAfter): it has nothing
// newer to take.
func (p *Publisher) current(tag string) bool {
	f := p.cur.Load()
	if set := p.deltas.Load(); set != nil {
		return tag == set.tag || (f != nil && tag != f.tag && f.names(tag))
	}
	return f != nil && f.names(tag)
}

// waitWhileCurrent returns once tag no longer names the newest state, the
// ask is gone, or wait has passed.
func (p *Publisher) waitWhileCurrent(ctx context.Context, tag string, wait time.Duration) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		ch := p.changed.Load()
		if !p.current(tag) || !p.leading() {
			return
		}
		select {
		case <-*ch:
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		}
	}
}

// preferWait returns the wait an ask prefers (RFC 7240, Prefer: wait=N),
// or 0.
func preferWait(h http.Header) time.Duration {
	for _, v := range h.Values("Prefer") {
		for _, pref := range strings.Split(v, ",") {
			name, val, ok := strings.Cut(strings.TrimSpace(pref), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(name), "wait") {
				continue
			}
			if n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(val), `"`)); err == nil && n > 0 {
				return time.Duration(min(n, 3600)) * time.Second
			}
		}
	}
	return 0
}

// writeDeltaFile writes the delta from prev to o's state as a file of the
// fleet directory.
func (p *Publisher) writeDeltaFile(prev *held, o offer, digest replica.Digest) (*deltaFile, error) {
	start := time.Now()
	tmp, err := os.CreateTemp(p.cfg.Dir, ".delta-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	h := sha256.New()
	cw := &countingWriter{w: io.MultiWriter(tmp, h)}
	st, err := replica.WriteDelta(cw, prev.r, prev.digest, o.r, o.snapshots, digest)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("fleet: write delta: %w", err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	path := filepath.Join(p.cfg.Dir, "delta-"+sum+".snap")
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	d := &deltaFile{path: path, sum: sum, size: cw.n, gen: o.r.Info().Generation, base: stateTag(prev.digest), result: stateTag(digest)}
	if p.cfg.Keys != nil {
		d.sig = p.cfg.Keys.SignDelta(sum, d.gen, d.base, d.result)
	}
	p.log.Info("fleet delta written", "generation", d.gen, "tag", d.result, "changed", st.Changed, "removed", st.Removed,
		"whole_log", st.WholeLog, "kib", cw.n>>10, "raw_kib", st.Raw>>10, "took", time.Since(start).Round(time.Millisecond))
	return d, nil
}

// serveDelta answers 226 IM Used with the delta d.
func (p *Publisher) serveDelta(w http.ResponseWriter, d *deltaFile) {
	fh, done := p.openToSend(w, d.path)
	if fh == nil {
		return
	}
	defer done()
	h := w.Header()
	h.Set("ETag", d.result)
	h.Set("Delta-Base", d.base)
	h.Set("IM", deltaIM)
	h.Set("Edge-Generation", strconv.FormatUint(d.gen, 10))
	h.Set(DeltaSumHeader, d.sum)
	if d.sig != "" {
		h.Set(trust.StateHeader, d.sig)
	}
	h.Set("Content-Type", "application/vnd.edge.delta+zstd")
	h.Set("Content-Length", strconv.FormatInt(d.size, 10))
	w.WriteHeader(http.StatusIMUsed)
	p.cfg.Metrics.moved("sent", "delta", sendSlowly(w, fh, p.cfg.Idle))
}

// deltaFrom reports whether the follower may ask for a delta from the
// state tag names: a state named by its digest, and not one whose delta
// it refused.
func (f *Follower) deltaFrom(tag string) bool {
	if _, ok := parseStateTag(tag); !ok {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return tag != f.noDelta
}

// Refused says this edge's views refused the state tag names, the one
// Fetch returned last, as older than the state they serve
// (builder.follow): this edge does not hold it, so no delta from it
// applies to what this edge holds, and the fleet's order (order.go)
// stands where it stood before that state was taken. The next ask from
// tag asks the leader whether it has a newer state (newerThan) and, once
// it has, takes its whole state and the deltas after it: a leader writes
// its newest state whole only Config.WholeAfter after its delta, and an
// ask of the whole state from tag would be told 304 until then.
func (f *Follower) Refused(tag string) {
	f.mu.Lock()
	f.older = tag
	f.held = f.heldBefore
	f.mu.Unlock()
}

// refusedOlder reports whether tag names the state the views refused last
// as older than theirs.
func (f *Follower) refusedOlder(tag string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return tag != "" && tag == f.older
}

// newerThan asks the leader at addr, without a body, whether it holds a
// state newer than the one tag names: 304 says it does not. Any other
// answer is left to the ask of the state that follows.
func (f *Follower) newerThan(ctx context.Context, addr, tag string) (bool, error) {
	resp, err := f.ask(ctx, http.MethodHead, addr, StatePath, http.Header{
		"Accept": {acceptHeader(replica.Formats)}, "If-None-Match": {tag}, "A-IM": {deltaIM}})
	if err != nil {
		return false, err
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		f.leaderWorked(addr)
		f.settled()
		return false, nil
	}
	return true, nil
}

// noDeltaFrom records that a delta from the state tag names was refused:
// the next ask is for the whole state.
func (f *Follower) noDeltaFrom(tag string) {
	f.mu.Lock()
	f.noDelta = tag
	f.mu.Unlock()
}

func (f *Follower) log() *slog.Logger {
	if f.cfg.Log != nil {
		return f.cfg.Log
	}
	return slog.Default()
}

// takeDelta reads a 226 answer: checks that it is the delta asked for
// and signed by the fleet, takes it whole (its SHA-256 checked), and
// applies it to o.Prev, the state have names.
func (f *Follower) takeDelta(resp *http.Response, addr, have string, o replica.ReadOptions) (*replica.Replica, int64, string, error) {
	h := resp.Header
	base, ok := parseStateTag(have)
	if !ok || h.Get("Delta-Base") != have || !strings.EqualFold(strings.TrimSpace(h.Get("IM")), deltaIM) {
		return nil, 0, "", fmt.Errorf("a delta from %q (IM %q), asked from %q", h.Get("Delta-Base"), h.Get("IM"), have)
	}
	tag := h.Get("ETag")
	want, ok := parseStateTag(tag)
	if !ok {
		return nil, 0, "", fmt.Errorf("a delta to %q, not a state's tag", tag)
	}
	sum := h.Get(DeltaSumHeader)
	if _, err := hex.DecodeString(sum); err != nil || len(sum) != 2*sha256.Size {
		return nil, 0, "", fmt.Errorf("a delta whose SHA-256 is %q", sum)
	}
	gen, err := strconv.ParseUint(h.Get("Edge-Generation"), 10, 64)
	if err != nil {
		return nil, 0, "", fmt.Errorf("a delta with no generation")
	}
	if k := f.cfg.Keys; k != nil {
		if err := k.VerifyDelta(h.Get(trust.StateHeader), sum, gen, have, tag); err != nil {
			f.cfg.Metrics.refuse("signature")
			return nil, 0, "", fmt.Errorf("delta of generation %d: %w", gen, err)
		}
	}
	epoch, err := f.inOrder(addr, gen)
	if err != nil {
		return nil, 0, "", err
	}
	if resp.ContentLength > f.cfg.MaxBytes {
		f.cfg.Metrics.refuse("size")
		return nil, 0, "", fmt.Errorf("a delta of %d bytes, past the bound of %d", resp.ContentLength, f.cfg.MaxBytes)
	}
	tmp, err := f.download(resp.Body, sum, "delta")
	if err != nil {
		return nil, 0, "", err
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	r, snapshots, got, err := replica.ReadDelta(bufio.NewReaderSize(tmp, 1<<20), o.Prev, base, o)
	if err != nil {
		return nil, 0, "", err
	}
	if got != want {
		return nil, 0, "", fmt.Errorf("a delta that gives %s, its ETag says %s", stateTag(got), tag)
	}
	f.took(epoch, gen)
	f.cfg.Metrics.holds(gen)
	return r, snapshots, tag, nil
}

// wholeTag returns the tag to hold a whole state r by: its digest's
// when the leader names states by digest (TagHeader) and r has that
// digest, so that the next ask may take a delta from it; else its ETag
// (a leader of an earlier release, which keeps no deltas).
func (f *Follower) wholeTag(h http.Header, etag string, r *replica.Replica, snapshots int64) string {
	claimed, ok := parseStateTag(h.Get(TagHeader))
	if !ok {
		return etag
	}
	if d := replica.DigestOf(r, snapshots); d != claimed {
		f.cfg.Metrics.refuse("digest")
		f.log().Warn("fleet: the whole state read is not the one its leader names: this edge takes no delta from it",
			"read", stateTag(d), "named", stateTag(claimed))
		return etag
	}
	return stateTag(claimed)
}
