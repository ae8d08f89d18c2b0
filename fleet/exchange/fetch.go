package exchange

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/edge-stats/edge/builder"
	"github.com/edge-stats/edge/fleet/trust"
	"github.com/edge-stats/edge/internal/follow"
	"github.com/edge-stats/edge/views/replica"
)

// Fetch implements builder.Source; the state read is bounded by
// Config.MaxBytes. An edge with no state at all (o.Prev nil) waits for a
// leader still loading its first state, asking each second, so that it
// publishes within a second of the leader's state.
func (f *Follower) Fetch(ctx context.Context, have string, o replica.ReadOptions) (*replica.Replica, int64, string, error) {
	o.MaxBytes = f.cfg.MaxBytes
	for {
		r, snapshots, tag, err := f.fetch(ctx, have, o)
		if !errors.Is(err, errNoState) {
			return r, snapshots, tag, err
		}
		if o.Prev != nil {
			return nil, 0, "", err
		}
		select {
		case <-ctx.Done():
			return nil, 0, "", ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// errNoState says the leader has no state yet.
var errNoState = errors.New("the leader has no state yet")

// fetch asks the leader for a state newer than have: what changed since
// (one delta after another, up to maxChain, when the leader keeps them
// from the state this edge holds), or the whole state and then the
// deltas the leader keeps from it.
func (f *Follower) fetch(ctx context.Context, have string, o replica.ReadOptions) (*replica.Replica, int64, string, error) {
	addr, err := f.leaderAddr()
	if err != nil {
		return nil, 0, "", err
	}
	if err := f.stillUnreadable(ctx, addr); err != nil {
		return nil, 0, "", err
	}
	f.mu.Lock()
	f.heldBefore = f.held
	f.mu.Unlock()
	var (
		got   *replica.Replica // the newest state taken by deltas, nil while none
		snaps int64
		tag   = have
	)
	if f.refusedOlder(have) {
		// The views hold a state of their own, newer than the one have
		// names (Refused): once the leader has a newer one, its whole
		// state and the deltas since, asked as from no state.
		newer, err := f.newerThan(ctx, addr, have)
		if err != nil || !newer {
			return nil, 0, have, err
		}
		tag = ""
	}
	for step := 0; ; step++ {
		delta := o.Prev != nil && step < maxChain && f.deltaFrom(tag)
		if !delta && got != nil {
			return got, snaps, tag, nil // a whole state taken, and no delta to ask from it
		}
		if !delta && o.NoWhole {
			// Only a whole state would do, and it has no room.
			if got != nil {
				return got, snaps, tag, nil
			}
			return nil, 0, "", fmt.Errorf("fleet: a whole state from %s: %w", addr, builder.ErrNoRoom)
		}
		res, err := f.fetchOnce(ctx, addr, tag, o, delta)
		if err != nil {
			if got != nil { // the deltas taken stand: the rest comes at the next ask
				f.log().Warn("fleet: the leader's state after deltas", "leader", addr, "deltas", step, "err", err)
				return got, snaps, tag, nil
			}
			return nil, 0, "", err
		}
		switch res.kind {
		case tookWhole:
			// Then the deltas since, in the same ask: a leader that has
			// not written its newest state whole yet gives the whole
			// state before and what changed after it, and the state
			// handed to the views is the leader's newest (which a state
			// older than the one served would not be: builder.follow).
			got, snaps, tag = res.r, res.snapshots, res.tag
			o.Prev = res.r
		case tookDelta:
			got, snaps, tag = res.r, res.snapshots, res.tag
			o.Prev = res.r
		case refusedDelta: // the whole state next (noDeltaFrom)
		default: // nothing newer
			if got != nil {
				return got, snaps, tag, nil
			}
			return nil, 0, have, nil
		}
	}
}

// What one ask of the leader gave.
type took int

const (
	tookNothing  took = iota // the state held is the newest (304)
	tookWhole                // the whole state
	tookDelta                // a delta, applied
	refusedDelta             // a delta that did not give the state it named
)

type fetched struct {
	kind      took
	r         *replica.Replica
	snapshots int64
	tag       string
}

// fetchOnce makes one ask of the leader, with delta when this edge may
// take a delta from the state have names.
func (f *Follower) fetchOnce(ctx context.Context, addr, have string, o replica.ReadOptions, delta bool) (fetched, error) {
	header := http.Header{"Accept": {acceptHeader(replica.Formats)}}
	if have != "" {
		header.Set("If-None-Match", have)
		if delta {
			header.Set("A-IM", deltaIM)
		}
	}
	resp, err := f.get(ctx, addr, StatePath, header)
	if err != nil {
		return fetched{}, err
	}
	defer resp.Body.Close()
	if out, done, err := f.answered(resp, addr, have, o, delta); done || err != nil {
		return out, err
	}
	return f.takeWhole(resp, addr, o)
}

// answered takes what the leader's answer resp says when it is not a
// whole state to take: nothing new (304), a delta (226), or why there is
// nothing (406, 503, another status), done set; a whole state (200) is
// left to takeWhole.
func (f *Follower) answered(resp *http.Response, addr, have string, o replica.ReadOptions, delta bool) (out fetched, done bool, err error) {
	switch resp.StatusCode {
	case http.StatusNotModified:
		f.leaderWorked(addr)
		f.settled()
		return fetched{kind: tookNothing}, true, nil
	case http.StatusIMUsed:
		if !delta {
			return fetched{}, true, fmt.Errorf("fleet: leader at %s sent a delta unasked: %w", addr, follow.ErrNoSource)
		}
		r, snapshots, tag, err := f.takeDelta(resp, addr, have, o)
		if err != nil {
			f.cfg.Metrics.refuse("delta")
			f.noDeltaFrom(have)
			f.log().Warn("fleet: a delta refused: this edge asks for the whole state", "leader", addr, "err", err)
			return fetched{kind: refusedDelta}, true, nil
		}
		f.leaderWorked(addr)
		f.settled()
		return fetched{tookDelta, r, snapshots, tag}, true, nil
	case http.StatusOK:
		f.leaderWorked(addr)
		if o.NoWhole {
			// The leader keeps no delta from here: none of the whole
			// state is taken (the body is closed unread).
			return fetched{}, true, fmt.Errorf("fleet: leader at %s has only the whole state for this edge: %w", addr, builder.ErrNoRoom)
		}
	case http.StatusNotAcceptable:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		f.remember(unreadable{addr: addr, why: "406: " + string(body)})
		return fetched{}, true, fmt.Errorf("fleet: leader at %s writes no state of a format this edge reads (%v): %w", addr, replica.Formats, follow.ErrNoSource)
	case http.StatusServiceUnavailable:
		if notLeader(resp) {
			f.leaderFailed(addr, "it answers that it does not lead")
		} else {
			f.leaderWorked(addr)
		}
		if f.waitedTooLong(have) {
			return fetched{}, true, fmt.Errorf("fleet: leader at %s has had no state for %v: %w", addr, f.cfg.Patience, follow.ErrNoSource)
		}
		return fetched{}, true, fmt.Errorf("fleet: leader at %s: %s (Retry-After %s): %w", addr, resp.Status, resp.Header.Get("Retry-After"), errNoState)
	default:
		return fetched{}, true, fmt.Errorf("fleet: leader at %s answered %s: %w", addr, resp.Status, follow.ErrNoSource)
	}
	return fetched{}, false, nil
}

// takeWhole takes the whole state resp carries, once its digest, its
// generation, its format, its signature, its place in the leader's order
// and its size are what this edge takes.
func (f *Follower) takeWhole(resp *http.Response, addr string, o replica.ReadOptions) (fetched, error) {
	etag := resp.Header.Get("ETag")
	sum, ok := strings.CutPrefix(strings.TrimSuffix(etag, `"`), `"`)
	if !ok || len(sum) != 2*sha256.Size {
		return fetched{}, fmt.Errorf("fleet: leader at %s sent ETag %q, not a SHA-256: %w", addr, etag, follow.ErrNoSource)
	}
	gen, err := strconv.ParseUint(resp.Header.Get("Edge-Generation"), 10, 64)
	if err != nil {
		return fetched{}, fmt.Errorf("fleet: leader at %s sent no generation: %w", addr, follow.ErrNoSource)
	}
	if v := resp.Header.Get(FormatHeader); v != "" {
		if format, err := strconv.ParseUint(v, 10, 64); err != nil || !replica.Reads(format) {
			f.remember(unreadable{addr: addr, etag: etag, gen: gen, why: "the leader sent format " + v})
			return fetched{}, fmt.Errorf("fleet: state from %s (generation %d) of format %q, this edge reads %v: %w", addr, gen, v, replica.Formats, follow.ErrNoSource)
		}
	}
	if k := f.cfg.Keys; k != nil {
		// Its origin, before a byte of it is taken: the leader proved it
		// holds the token in the handshake, and its state must say so too.
		if err := k.VerifyState(resp.Header.Get(trust.StateHeader), sum, gen); err != nil {
			f.cfg.Metrics.refuse("signature")
			return fetched{}, fmt.Errorf("fleet: state from %s (generation %d) refused, %w: the state served is kept, and this edge loads from ClickHouse: %w", addr, gen, err, follow.ErrNoSource)
		}
	}
	epoch, err := f.inOrder(addr, gen)
	if err != nil {
		return fetched{}, fmt.Errorf("%w: the state served is kept, and this edge loads from ClickHouse: %w", err, follow.ErrNoSource)
	}
	if resp.ContentLength > f.cfg.MaxBytes {
		f.cfg.Metrics.refuse("size")
		return fetched{}, fmt.Errorf("fleet: state from %s has %d bytes, past the bound of %d (EDGE_FLEET_MAX_BYTES)", addr, resp.ContentLength, f.cfg.MaxBytes)
	}
	// The state is taken whole first, then read: the leader's send ends
	// at the speed of the network, not of this edge's decoding, so that
	// its few sends at once (Config.Sends) serve many edges joining
	// together in turn; and a damaged state is refused before it is read.
	tmp, err := f.download(resp.Body, sum, "whole")
	if err != nil {
		return fetched{}, fmt.Errorf("fleet: state from %s: %w", addr, err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	r, snapshots, err := replica.ReadSnapshot(bufio.NewReaderSize(tmp, 1<<20), o)
	if errors.Is(err, replica.ErrSnapshotFormat) {
		// A leader of another release: this edge loads from ClickHouse,
		// and does not take this state again (fetch).
		f.remember(unreadable{addr: addr, etag: etag, gen: gen, why: err.Error()})
		return fetched{}, fmt.Errorf("fleet: state from %s (generation %d): %w: %w", addr, gen, err, follow.ErrNoSource)
	}
	if err != nil {
		f.cfg.Metrics.refuse("format")
		return fetched{}, fmt.Errorf("fleet: state from %s: %w", addr, err)
	}
	f.readable()
	f.settled()
	f.took(epoch, gen)
	f.cfg.Metrics.holds(gen)
	return fetched{tookWhole, r, snapshots, f.wholeTag(resp.Header, etag, r, snapshots)}, nil
}

// download copies a state's body to a file of the fleet directory and
// checks its SHA-256 against sum (hex); it returns the file, at its
// start. A body past Config.MaxBytes is refused.
func (f *Follower) download(body io.Reader, sum, kind string) (*os.File, error) {
	if err := os.MkdirAll(f.cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	tmp, err := os.CreateTemp(f.cfg.Dir, fetchPattern)
	if err != nil {
		return nil, fmt.Errorf("state file: %w", err)
	}
	fail := func(err error) (*os.File, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(body, f.cfg.MaxBytes+1))
	f.cfg.Metrics.moved("received", kind, n)
	if err != nil {
		return fail(fmt.Errorf("after %d bytes: %w", n, err))
	}
	if n > f.cfg.MaxBytes {
		f.cfg.Metrics.refuse("size")
		return fail(fmt.Errorf("larger than %d bytes", f.cfg.MaxBytes))
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sum {
		f.cfg.Metrics.refuse("digest")
		return fail(fmt.Errorf("SHA-256 %s, its ETag says %s", got, sum))
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return fail(fmt.Errorf("state file: %w", err))
	}
	return tmp, nil
}

// isHandshake reports whether err is a TLS handshake's failure: the other
// end is not of the fleet.
func isHandshake(err error) bool {
	var cv *tls.CertificateVerificationError
	var alert tls.AlertError
	var rh tls.RecordHeaderError
	return errors.As(err, &cv) || errors.As(err, &alert) || errors.As(err, &rh) ||
		strings.Contains(err.Error(), "tls: ")
}

// fetchPattern names a state being taken from the leader (os.CreateTemp).
const fetchPattern = ".fetch-*.tmp"
