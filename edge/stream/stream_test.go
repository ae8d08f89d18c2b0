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

// TestAStreamLetsItsStateGo: once its backlog is sent, a stream holds no
// state: an hour-long stream must not keep the state it opened with (and,
// with one stream a generation, every state since) from being collected.
// Its events then come from the broadcast.
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
	time.Sleep(50 * time.Millisecond)
	h.mu.Lock()
	for cl := range h.clients {
		if cl.backlog != nil {
			t.Error("the stream still holds its state after its backlog")
		}
	}
	h.mu.Unlock()
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
