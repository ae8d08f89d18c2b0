package edge

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/edge-stats/edge/edge/transport"
)

// Serve answers on ln until ctx is done, then stops gracefully: it stops
// accepting, answers each open connection's next request with
// Connection: close for up to DrainTimeout, lets requests in flight
// finish (up to ShutdownTimeout) and returns.
//
// Before it answers, it loads the keys, the fleet's usage of the day and
// the fleet's attempts at the account routes of their limits' windows
// (waiting at most a few seconds: while ClickHouse is out of reach, v1
// calls and sign-ups answer 503 until a later sync succeeds), and keeps
// them in sync while it runs. Its last act is to flush the calls it counted.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	stopSyncs := s.startSyncs(ctx)
	// The event streams: broadcast each state's events; ended when the
	// server stops, before its drain (they never end by themselves).
	streamsDone := make(chan struct{})
	stopStreams := sync.OnceFunc(func() { close(streamsDone) })
	var streams sync.WaitGroup
	streams.Go(func() { s.stream.Run(streamsDone) })
	defer func() { stopStreams(); streams.Wait() }()
	if s.deliverer != nil {
		dctx, stopDeliveries := context.WithCancel(context.Background())
		var delivering sync.WaitGroup
		delivering.Go(func() { s.deliverer.Run(dctx) })
		defer func() { stopDeliveries(); delivering.Wait() }()
	}
	defer stopSyncs()
	errc := make(chan error, 1)
	opts := transport.Options{Raw: s.cfg.RawIO, ReadTimeout: s.cfg.ReadTimeout, IdleTimeout: s.cfg.IdleTimeout, WriteTimeout: s.cfg.WriteTimeout}
	if s.replay != nil {
		opts.Replay = s.replay
	}
	tl := transport.Listen(ln, opts)
	go func() { errc <- s.app.Listener(tl) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	return s.drain(ln, tl, errc, stopStreams)
}

// startSyncs syncs the keys, the usage and the account attempts once
// (within 5 s: a failure is retried in the background), then starts
// their background syncs, the precompression of published answers and
// the miss gate's watch. It returns what stops them, and writes the calls
// counted since the last sync: the server's last act.
func (s *Server) startSyncs(ctx context.Context) (stop func()) {
	first, cancelFirst := context.WithTimeout(ctx, 5*time.Second)
	if err := s.keys.Load(first); err != nil {
		s.log.Warn("sync failing; will retry", "what", "keys", "err", err)
	}
	if err := s.limits.Usage.Sync(first); err != nil {
		s.log.Warn("sync failing; will retry", "what", "usage", "err", err)
	}
	if err := s.accounts.StartAttempts(first); err != nil {
		s.log.Warn("sync failing; will retry", "what", "attempts", "err", err)
	}
	cancelFirst()
	syncCtx, stopSync := context.WithCancel(context.Background())
	var synced sync.WaitGroup
	keysTick := s.cfg.KeysEvery
	if s.keysTick > 0 {
		keysTick = min(keysTick, s.keysTick)
	}
	synced.Go(func() { s.keys.Run(syncCtx, keysTick, s.cfg.ReadBudget+5*time.Second, s.log) })
	synced.Go(func() { s.limits.Usage.Run(syncCtx, s.cfg.UsageEvery, max(s.cfg.UsageEvery, 2*time.Second), s.log) })
	synced.Go(func() { s.accounts.RunAttempts(syncCtx, s.cfg.UsageEvery, max(s.cfg.UsageEvery, 2*time.Second)) })
	if !s.cfg.NoPrecompress {
		synced.Go(func() { s.precompress(syncCtx) })
	}
	// The miss gate takes the CPU to be contended only while answers that
	// need no computing are served: the cache's hits and the replays.
	cached := []prometheus.Counter{s.answers.HitCounter()}
	if s.replay != nil {
		cached = append(cached, s.replay.ReplayCounter())
	}
	s.misses.SetCached(func() uint64 {
		var n uint64
		for _, c := range cached {
			var m dto.Metric
			if c.Write(&m) == nil && m.Counter != nil {
				n += uint64(m.Counter.GetValue())
			}
		}
		return n
	})
	synced.Go(func() { s.misses.Watch(syncCtx) })
	return func() {
		stopSync()
		synced.Wait()
		// Its last act: write the calls counted since the last sync.
		fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.limits.Usage.Flush(fctx); err != nil {
			s.log.Error("calls counted since the last sync are lost", "err", err)
		}
	}
}

// drain ends serving on ln (tl, whose accept loop reports on errc): it
// stops accepting and the event streams, lets each open connection
// finish, and shuts down.
func (s *Server) drain(ln, tl net.Listener, errc <-chan error, stopStreams func()) error {
	// Stop accepting (a process that took over the listener accepts from
	// now on), answer each open connection's next request with
	// Connection: close, and wait for them to go, up to DrainTimeout: a
	// client of a keep-alive connection sees it closed after an answer,
	// never under a request it is sending.
	s.draining.Store(true)
	stopStreams()
	ln.Close()
	// The accept loop ends at once. fasthttp counts it as an open
	// connection while it runs and takes one off the count it reports
	// for it (GetOpenConnectionsCount): once the loop has ended, the
	// count it reports is one short until Shutdown begins.
	lerr := <-errc
	for deadline := time.Now().Add(s.cfg.DrainTimeout); s.app.Server().GetOpenConnectionsCount()+1 > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	// The connections still open wait for a request, or serve one. Those
	// waiting on the replay path end now, as fasthttp's Shutdown ends
	// the waiting ones it sees (it does not see these).
	transport.Drain(tl)
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := s.app.ShutdownWithContext(sctx)
	if errors.Is(err, net.ErrClosed) {
		err = nil // the listener closed above
	}
	if err == nil && lerr != nil && !errors.Is(lerr, net.ErrClosed) {
		err = lerr
	}
	return err
}
