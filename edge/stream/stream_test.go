package stream

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
	"github.com/edge-stats/edge/views/served"
)

func encode(c *changes.Change, _ *replica.Replica) (string, []byte) {
	return c.ID + "/" + c.Kind.String(), []byte(`{"id":"` + c.ID + `"}`)
}

// TestAStreamLetsItsStateGo: a stream holds no state (its client has no
// field for one; the backlog is read a page at a time from the state
// published then): an hour-long stream must not keep the state it opened
// with (and, with one stream a generation, every state since) from being
// collected. Its events after the backlog come from the broadcast.
func TestAStreamLetsItsStateGo(t *testing.T) {
	r := replicatest.Synth(50, nil)
	l := r.All()[0]
	prev, next := changes.MetaOf(&l), changes.MetaOf(&l)
	prev.At, prev.Version = next.At-10, "0.1"
	r = r.WithChanges(changes.NewLog(changes.Diff(nil, l.Store, l.ID, &prev, &next), 0))
	var pub views.Published[served.State]
	pub.Publish(&served.State{Replica: r})
	h := NewHub(Config{Heartbeat: time.Hour}, &pub, encode)
	server, client := net.Pipe()
	defer client.Close()
	write, why := h.Open("k", changes.Filter{}, changes.Pos{}, true, server) // from the start: the backlog holds the change
	if why != Opened {
		t.Fatal(why)
	}
	done := make(chan struct{})
	go func() { write(bufio.NewWriter(server)); close(done) }()
	rd := bufio.NewReader(client)
	var got strings.Builder
	for !strings.Contains(got.String(), "data: ") {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		got.WriteString(line)
	}
	rd.ReadString('\n') // the event's blank line: the writer has flushed the backlog
	// A new state's events come through the hub.
	l2 := r.All()[1]
	p2, n2 := changes.MetaOf(&l2), changes.MetaOf(&l2)
	p2.At, n2.At, n2.Name = n2.At, n2.At+100, "Renamed"
	r2 := r.WithChanges(r.Changes().With(changes.Diff(nil, l2.Store, l2.ID, &p2, &n2), 0))
	h.broadcast(r) // the hub's position: the newest event before
	pub.Publish(&served.State{Replica: r2})
	h.broadcast(r2)
	line, _ := rd.ReadString('\n')
	if !strings.Contains(line, l2.ID+"/name") {
		t.Fatalf("after the new state: %q", line)
	}
	h.Close()
	go io.Copy(io.Discard, client)
	<-done
}

// TestABacklogIsBounded: a client that takes its backlog more slowly
// than BacklogTime allows is cut, counted, and has had a prefix of it in
// order (it resumes from its last event).
func TestABacklogIsBounded(t *testing.T) {
	r := replicatest.Synth(3000, nil)
	var cs []changes.Change
	for i, l := range r.All() {
		prev, next := changes.MetaOf(&l), changes.MetaOf(&l)
		prev.At, prev.Version = next.At-int64(10+i), "0.1"
		cs = append(cs, changes.Diff(nil, l.Store, l.ID, &prev, &next)...)
	}
	r = r.WithChanges(changes.NewLog(cs, 0))
	var pub views.Published[served.State]
	pub.Publish(&served.State{Replica: r})
	h := NewHub(Config{Heartbeat: time.Hour, BacklogTime: 200 * time.Millisecond}, &pub, encode)
	server, client := net.Pipe()
	defer client.Close()
	write, why := h.Open("k", changes.Filter{}, changes.Pos{}, true, server)
	if why != Opened {
		t.Fatal(why)
	}
	done := make(chan struct{})
	go func() { write(bufio.NewWriter(server)); server.Close(); close(done) }()
	rd := bufio.NewReader(client)
	events := 0
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			break
		}
		if strings.HasPrefix(line, "data: ") {
			events++
			time.Sleep(2 * time.Millisecond) // a slow reader: 3,000 events take 6 s
		}
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the backlog was not cut")
	}
	if events == 0 || events >= len(cs) || h.Stats().Cut != 1 || h.Stats().Open != 0 {
		t.Fatalf("%d of %d events sent, stats %+v", events, len(cs), h.Stats())
	}
}
