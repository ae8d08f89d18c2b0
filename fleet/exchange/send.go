package exchange

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/fleet/trust"
)

// ServeHTTP answers GET LeaderPath with 204 while this edge leads, and
// GET StatePath: the newest snapshot (200, or 304 to
// an If-None-Match of its ETag or its tag), or to an edge that holds an
// earlier state and asks for a delta (RFC 3229: If-None-Match of that
// state's tag and A-IM: edge-delta) what changed since (226 IM Used,
// serveDelta); 503 with Retry-After while this edge does not lead or has
// no state yet, or sends as many as it may.
func (p *Publisher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.serveRoute(w, r) {
		return
	}
	exportsFile := strings.HasPrefix(r.URL.Path, ExportsPath+"/")
	switch {
	case r.URL.Path != StatePath && r.URL.Path != ExportsPath && !exportsFile && r.URL.Path != LeaderPath:
		problem(w, http.StatusNotFound, "Not found", "this address serves the fleet's state at "+StatePath+", its exports at "+ExportsPath+" and whether it leads at "+LeaderPath+" only", 0)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		w.Header().Set("Allow", "GET, HEAD")
		problem(w, http.StatusMethodNotAllowed, "Method not allowed", "use GET", 0)
	case !p.leading():
		problem(w, http.StatusServiceUnavailable, notLeaderTitle, "this edge does not lead its fleet: ask the edge its election names", 5)
	case r.URL.Path == LeaderPath:
		w.WriteHeader(http.StatusNoContent) // it leads: a follower's probe (Follower.Watch)
	case r.URL.Path == ExportsPath:
		p.serveDays(w, p.days)
	case r.URL.Path == ExportsPath+"/"+exports.LatestDir:
		p.serveDays(w, p.latest)
	case exportsFile:
		p.serveExport(w, r)
	default:
		p.serveState(w, r)
	}
}

// serveRoute answers r when a check of the fleet's token refuses it or a
// route added with Handle takes it, and reports whether it did.
func (p *Publisher) serveRoute(w http.ResponseWriter, r *http.Request) bool {
	// With a token, every route wants it; without, the routes that must
	// have one are off.
	v, extra := p.routes.Load(r.URL.Path)
	switch {
	case extra && v.(route).needsToken && p.cfg.Keys == nil:
		problem(w, http.StatusNotFound, "Not served", "this edge has no fleet token (EDGE_FLEET_TOKEN): the route is off", 0)
		return true
	case p.cfg.Keys != nil && !p.authorized(r):
		problem(w, http.StatusUnauthorized, "Unauthorized", "connect with TLS and a certificate of the fleet (an edge with the same EDGE_FLEET_TOKEN)", 0)
		return true
	case extra:
		switch {
		case r.Method != v.(route).method:
			w.Header().Set("Allow", v.(route).method)
			problem(w, http.StatusMethodNotAllowed, "Method not allowed", "use "+v.(route).method, 0)
		case !p.leading():
			problem(w, http.StatusServiceUnavailable, notLeaderTitle, "this edge does not lead its fleet: ask the edge its election names", 5)
		default:
			v.(route).h.ServeHTTP(w, r)
		}
		return true
	}
	return false
}

// serveState answers a GET or HEAD of the state: in a format the
// follower reads, a 304 while its state is the newest (held as a long
// poll when it asks to wait), the delta from its state when the leader
// has one, else the whole state.
func (p *Publisher) serveState(w http.ResponseWriter, r *http.Request) {
	format, ok := negotiate(w, r, p.cfg.Formats)
	if !ok {
		return
	}
	w.Header().Set(FormatHeader, strconv.FormatUint(format, 10))
	inm := r.Header.Get("If-None-Match")
	if wait := preferWait(r.Header); wait > 0 && inm != "" {
		// A long poll: held while the state asked from is the newest.
		p.waitWhileCurrent(r.Context(), inm, min(wait, p.cfg.Idle-time.Second))
	}
	if set := p.deltas.Load(); set != nil && inm != "" {
		if inm == set.tag { // the newest state, whose whole file may still be being written
			w.Header().Set("ETag", set.tag)
			w.Header().Set("Edge-Generation", strconv.FormatUint(set.gen, 10))
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if d := set.from[inm]; d != nil && acceptsDelta(r.Header) && format == p.cfg.Formats[0] {
			if r.Method == http.MethodHead {
				// A watch told of the newer state as soon as its delta is
				// written, not once its whole file is (seconds later at
				// millions of listings).
				w.Header().Set("ETag", set.tag)
				w.Header().Set("Edge-Generation", strconv.FormatUint(set.gen, 10))
				w.WriteHeader(http.StatusOK)
				return
			}
			p.serveDelta(w, d)
			return
		}
	}
	newest := p.cur.Load()
	if newest == nil {
		problem(w, http.StatusServiceUnavailable, "No state yet", "the leading edge is still loading its first state: ask again", 1)
		return
	}
	f := newest.in(format)
	w.Header().Set("ETag", f.etag)
	if f.tag != "" {
		w.Header().Set(TagHeader, f.tag)
	}
	w.Header().Set("Edge-Generation", strconv.FormatUint(f.gen, 10))
	if f.sig != "" {
		w.Header().Set(trust.StateHeader, f.sig)
	}
	if inm != "" && newest.names(inm) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	fh, done := p.openToSend(w, f.path)
	if fh == nil {
		return
	}
	defer done()
	w.Header().Set("Content-Type", "application/vnd.edge.snapshot+zstd")
	w.Header().Set("Content-Length", strconv.FormatInt(f.size, 10))
	w.Header().Set("Edge-Raw-Bytes", strconv.FormatInt(f.raw, 10))
	if r.Method == http.MethodHead {
		return
	}
	p.cfg.Metrics.moved("sent", "whole", sendSlowly(w, fh, p.cfg.Idle))
}

// openToSend takes one of the sends the leader makes at once and opens
// the file at path to send; it returns the file and what ends the send,
// or nil after answering 503 with Retry-After (every send taken, or the
// file replaced meanwhile: the edge asks again and gets the newer one).
func (p *Publisher) openToSend(w http.ResponseWriter, path string) (*os.File, func()) {
	select {
	case p.sends <- struct{}{}:
	default:
		problem(w, http.StatusServiceUnavailable, "Busy", fmt.Sprintf("the leading edge sends %d states at once: ask again", cap(p.sends)), 2)
		return nil, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		<-p.sends
		problem(w, http.StatusServiceUnavailable, "State replaced", "a newer state replaced this one: ask again", 1)
		return nil, nil
	}
	return fh, func() {
		fh.Close()
		<-p.sends
	}
}

// sendSlowly copies r to w, moving w's write deadline idle past each
// chunk written, so that a large state takes as long as the network
// needs, and an edge that stops reading is cut after idle. It returns
// the bytes written.
func sendSlowly(w http.ResponseWriter, r io.Reader, idle time.Duration) (sent int64) {
	rc := http.NewResponseController(w)
	buf := make([]byte, 1<<20)
	for {
		rc.SetWriteDeadline(time.Now().Add(idle))
		n, err := r.Read(buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			sent += int64(m)
			if werr != nil {
				return sent
			}
		}
		if err != nil {
			return sent
		}
	}
}

// serveDays answers the list of days exported, or of latest sets.
func (p *Publisher) serveDays(w http.ResponseWriter, list func() []exports.Manifest) {
	if list == nil {
		problem(w, http.StatusNotFound, "No exports", "the leading edge builds no exports: each edge builds its own", 0)
		return
	}
	days := list()
	if days == nil {
		days = []exports.Manifest{}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(days)
}

// serveExport answers one file of a day, when the day's manifest lists
// it (exports.Path: no path is made of the request's text).
func (p *Publisher) serveExport(w http.ResponseWriter, r *http.Request) {
	day, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, ExportsPath+"/"), "/")
	list, pathOf := p.days, exports.Path
	if day == exports.LatestDir {
		day, name, _ = strings.Cut(name, "/")
		list, pathOf = p.latest, exports.LatestPath
	}
	if list != nil {
		for _, m := range list() {
			if m.Day != day {
				continue
			}
			if path, f, ok := pathOf(p.exportsDir, m, name); ok {
				fh, err := os.Open(path)
				if err != nil {
					break
				}
				defer fh.Close()
				w.Header().Set("Content-Type", "application/gzip")
				w.Header().Set("Content-Length", strconv.FormatInt(f.Size, 10))
				if r.Method == http.MethodGet {
					sendSlowly(w, io.LimitReader(fh, f.Size), p.cfg.Idle)
				}
				return
			}
		}
	}
	problem(w, http.StatusNotFound, "No such export", "ask "+ExportsPath+" for the days and files the leader has", 0)
}

func problem(w http.ResponseWriter, status int, title, detail string, retry int) {
	if retry > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retry))
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"about:blank","title":%q,"status":%d,"detail":%q}`, title, status, detail)
}

// Serve answers the fleet's requests on ln until ctx ends: over TLS with
// the fleet's certificates required when it has keys.
func (p *Publisher) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: p.cfg.Idle, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10,
		ErrorLog: slog.NewLogLogger(p.log.Handler(), slog.LevelDebug)}
	if p.cfg.Keys != nil {
		// A failed handshake (an address that is not of the fleet) is
		// logged by the server's ErrorLog, at debug level: anyone may
		// knock.
		ln = tls.NewListener(ln, p.cfg.Keys.ServerTLS())
	}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("fleet: serve: %w", err)
	}
	return nil
}
