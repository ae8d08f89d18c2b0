package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/edge-stats/edge/analytics/chtest/faultproxy"
	"github.com/edge-stats/edge/fleet/exchange"
)

// envFaultsEdge names another edge binary for TestFleetHoldsThroughProcessFaults
// to run (a build of an earlier commit, to see which of its checks that
// build fails); unset, the test binary runs as the edge command.
const envFaultsEdge = "EDGE_FAULTS_EDGE"

// zkLink is a TCP proxy on loopback between one edge and ZooKeeper that
// cuts the edge off silently: cut, it forwards nothing either way and
// passes no end on (neither side gets a FIN or a reset), as a network
// that drops every packet; a connection made while cut is taken and
// never forwarded. Healed, the connections held through the cut are
// closed (what they carried is lost) and new ones are forwarded.
type zkLink struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	cut    bool
	conns  []net.Conn
}

// startZKLink starts a link to target, closed when the test ends.
func startZKLink(t *testing.T, target string) *zkLink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &zkLink{ln: ln, target: target}
	go p.accept()
	t.Cleanup(func() { ln.Close(); p.closeAll() })
	return p
}

func (p *zkLink) addr() string { return p.ln.Addr().String() }

func (p *zkLink) isCut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}

func (p *zkLink) hold(c net.Conn) {
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
}

func (p *zkLink) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.hold(c)
		if p.isCut() {
			go io.Copy(io.Discard, c) // taken, never forwarded
			continue
		}
		s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.hold(s)
		go p.pump(c, s)
		go p.pump(s, c)
	}
}

// pump forwards src to dst while the link is not cut; an end is passed
// on only then.
func (p *zkLink) pump(src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.isCut() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !p.isCut() {
				dst.Close()
			}
			return
		}
	}
}

// setCut cuts the link (true) or heals it.
func (p *zkLink) setCut(cut bool) {
	p.mu.Lock()
	p.cut = cut
	p.mu.Unlock()
	if !cut {
		p.closeAll()
	}
}

func (p *zkLink) closeAll() {
	p.mu.Lock()
	held := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range held {
		c.Close()
	}
}

// faultEdge is an edge process of TestFleetHoldsThroughProcessFaults,
// reaching ZooKeeper and ClickHouse through proxies of its own.
type faultEdge struct {
	name, addr string
	fleet      string // the fleet URL it advertises (from its log)
	log        fileLog
	cmd        *exec.Cmd
	exited     chan struct{}
	zk         *zkLink
	ch         *faultproxy.Proxy
	watch      *edgeWatch
}

// faultFleet starts the edges of one fleet.
type faultFleet struct {
	t              *testing.T
	bin            string
	env            []string
	zkAddr, chAddr string
	zkPath         string
}

// start starts the edges named, together, and waits for their fleet
// addresses.
func (f *faultFleet) start(names ...string) []*faultEdge {
	f.t.Helper()
	var edges []*faultEdge
	for _, name := range names {
		edges = append(edges, f.launch(name))
	}
	advertised := regexp.MustCompile(`msg="fleet address" listen=\S+ advertised=(\S+)`)
	for _, e := range edges {
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if m := advertised.FindStringSubmatch(e.log.String()); m != nil {
				e.fleet = strings.TrimSuffix(m[1], "/")
				break
			}
			if time.Now().After(deadline) {
				f.t.Fatalf("%s: no fleet address in its log within 60 s:\n%s", e.name, e.log)
			}
		}
		e.watch = watchEdge(f.t, e)
	}
	return edges
}

// launch starts an edge process named name.
func (f *faultFleet) launch(name string) *faultEdge {
	t := f.t
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	chp, err := faultproxy.Start(f.chAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chp.Close() })
	e := &faultEdge{name: name, addr: addr, exited: make(chan struct{}), zk: startZKLink(t, f.zkAddr), ch: chp}
	dir := t.TempDir()
	logFile, err := os.Create(filepath.Join(dir, "edge.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	e.log = fileLog{logFile.Name()}
	e.cmd = exec.Command(f.bin, "serve", "--listen", addr, "--zk-path", f.zkPath, "--fleet-listen", "127.0.0.1:0",
		"--fleet-dir", filepath.Join(dir, "fleet"), "--exports-dir", filepath.Join(dir, "exports"), "--memory-limit", "1GiB",
		"--cache-mb", "64", "--refresh-schedule", "@every 1s", "--full-schedule", "0 0 1 1 *", "--follow-every", "1s",
		"--ranks-schedule", "off", "--exports-schedule", "off", "--editions-schedule", "off", "--usage-retention-schedule", "off",
		"--retry-max", "1s", "--no-limits", "--trusted-proxies", "127.0.0.1/32")
	e.cmd.Env = append(f.env[:len(f.env):len(f.env)], "EDGE_ZK="+e.zk.addr(), "EDGE_CH_ADDR="+chp.Addr())
	e.cmd.Stdout, e.cmd.Stderr = logFile, logFile
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { e.cmd.Wait(); close(e.exited) }()
	t.Cleanup(func() { e.cmd.Process.Kill(); <-e.exited }) // nothing of it is asked after the test
	return e
}

// signal sends sig to the edge's process.
func (e *faultEdge) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := e.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("%s: %v: %v", e.name, sig, err)
	}
}

// obs is what one ask of an edge's /readyz and of an answer said.
type obs struct {
	at           time.Time
	ready        bool
	dataAsOf     time.Time
	lastModified time.Time // of /api/v1/stores/chrome/stats
	fleet        exchange.Status
}

// edgeWatch asks an edge every 100 ms for its /readyz and an answer's
// Last-Modified, and records every time either went back.
type edgeWatch struct {
	mu    sync.Mutex
	seen  []obs
	backs []string
}

func watchEdge(t *testing.T, e *faultEdge) *edgeWatch {
	w := &edgeWatch{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	client := &http.Client{Timeout: time.Second}
	go func() {
		defer close(done)
		var maxData, maxLM time.Time
		for ctx.Err() == nil {
			o, ok := askEdge(ctx, client, e.addr)
			if ok {
				w.mu.Lock()
				if (o.dataAsOf.Before(maxData) || o.lastModified.Before(maxLM)) && len(w.backs) < 5 { // the first few say enough
					w.backs = append(w.backs, e.name+" at "+o.at.Format("15:04:05.000")+": dataAsOf "+o.dataAsOf.Format(time.RFC3339Nano)+
						" after "+maxData.Format(time.RFC3339Nano)+", Last-Modified "+o.lastModified.Format(time.RFC3339)+" after "+maxLM.Format(time.RFC3339))
				}
				if o.dataAsOf.After(maxData) {
					maxData = o.dataAsOf
				}
				if o.lastModified.After(maxLM) {
					maxLM = o.lastModified
				}
				w.seen = append(w.seen, o)
				w.mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return w
}

// askEdge asks the edge at addr for its /readyz and the Last-Modified of
// a store's statistics; false when it did not answer both.
func askEdge(ctx context.Context, client *http.Client, addr string) (obs, bool) {
	o := obs{at: time.Now()}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/readyz", nil)
	resp, err := client.Do(req)
	if err != nil {
		return o, false
	}
	var r struct {
		Ready    bool
		DataAsOf *time.Time
		Fleet    *exchange.Status
	}
	err = json.NewDecoder(resp.Body).Decode(&r)
	resp.Body.Close()
	if err != nil || !r.Ready || r.DataAsOf == nil || r.Fleet == nil {
		return o, false
	}
	o.ready, o.dataAsOf, o.fleet = true, *r.DataAsOf, *r.Fleet
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/v1/stores/chrome/stats", nil)
	if resp, err = client.Do(req); err != nil {
		return o, false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return o, false
	}
	if o.lastModified, err = http.ParseTime(resp.Header.Get("Last-Modified")); err != nil {
		return o, false
	}
	return o, true
}

// last returns the edge's newest observation (false when none).
func (w *edgeWatch) last() (obs, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen) == 0 {
		return obs{}, false
	}
	return w.seen[len(w.seen)-1], true
}

// first returns the first observation at or after since that meets cond.
func (w *edgeWatch) first(since time.Time, cond func(obs) bool) (obs, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, o := range w.seen {
		if !o.at.Before(since) && cond(o) {
			return o, true
		}
	}
	return obs{}, false
}

// wentBack returns what went back on the edge.
func (w *edgeWatch) wentBack() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.backs...)
}

// electionOrder returns the edges in the order of their election nodes
// at path (the lowest leads), read from ZooKeeper itself; an error
// until every edge has its node.
func electionOrder(zkAddr, path string, edges ...*faultEdge) ([]*faultEdge, error) {
	z, _, err := zk.Connect([]string{zkAddr}, 4*time.Second, zk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	defer z.Close()
	children, _, err := z.Children(path)
	if err != nil {
		return nil, err
	}
	bySeq := map[int]*faultEdge{}
	var seqs []int
	for _, c := range children {
		data, _, err := z.Get(path + "/" + c)
		var n struct{ Fleet string }
		if err != nil || json.Unmarshal(data, &n) != nil {
			continue
		}
		seq, _ := strconv.Atoi(c[len(c)-10:])
		for _, e := range edges {
			if strings.TrimSuffix(n.Fleet, "/") == e.fleet {
				bySeq[seq] = e
				seqs = append(seqs, seq)
			}
		}
	}
	if len(seqs) != len(edges) {
		return nil, fmt.Errorf("the election at %s holds %d of the %d edges' nodes: %v", path, len(seqs), len(edges), children)
	}
	slices.Sort(seqs)
	order := make([]*faultEdge, len(seqs))
	for i, s := range seqs {
		order[i] = bySeq[s]
	}
	return order, nil
}

// nodeGone watches the election node of the edge whose fleet URL is
// fleetURL, from a ZooKeeper session of the test's own, and returns a
// channel that gets the time ZooKeeper deleted it (its session ended).
func nodeGone(t *testing.T, zkAddr, path, fleetURL string) <-chan time.Time {
	t.Helper()
	z, _, err := zk.Connect([]string{zkAddr}, 10*time.Second, zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(z.Close)
	children, _, err := z.Children(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range children {
		data, _, err := z.Get(path + "/" + c)
		var n struct{ Fleet string }
		if err != nil || json.Unmarshal(data, &n) != nil || strings.TrimSuffix(n.Fleet, "/") != fleetURL {
			continue
		}
		ok, _, ch, err := z.ExistsW(path + "/" + c)
		if err != nil || !ok {
			t.Fatalf("watch %s: %v %v", c, ok, err)
		}
		gone := make(chan time.Time, 1)
		go func() {
			for ev := range ch {
				if ev.Type == zk.EventNodeDeleted {
					gone <- time.Now()
					return
				}
			}
		}()
		return gone
	}
	t.Fatalf("no election node names %s", fleetURL)
	return nil
}
