package fleet

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestNoFleet: an edge without ZooKeeper has no Member, and the nil
// Member says so where the edge asks: no leading or epoch function (the
// edge runs every job itself), no status, no metrics, nothing joined,
// served or closed.
func TestNoFleet(t *testing.T) {
	m := New(Config{}, nil)
	if m != nil {
		t.Fatalf("a member without ZooKeeper: %+v", m)
	}
	if m.Leading() != nil || m.Epoch() != nil || m.Status() != nil || m.Collectors() != nil || m.Exchanges() {
		t.Error("a nil member answers as a member")
	}
	if err := m.Join(context.Background(), "127.0.0.1:1", State{}); err != nil {
		t.Errorf("a nil member joined: %v", err)
	}
	m.Handle(http.MethodGet, "/x", http.NotFoundHandler(), false)
	m.Close()
}

// TestMemberBeforeItJoins: a member that has not joined its election yet
// does not lead (epoch 0), exchanges nothing, and has its election's
// metric already.
func TestMemberBeforeItJoins(t *testing.T) {
	m := New(Config{ZooKeeper: "127.0.0.1:1", Path: "/edge/fleets/t"}, nil)
	if m == nil || m.Leading() == nil || m.Leading()() || m.Epoch()() != 0 || m.Exchanges() || m.Status() != nil {
		t.Fatalf("a member before it joins: %+v", m)
	}
	if len(m.Collectors()) == 0 {
		t.Error("no metrics")
	}
}

func TestAdvertised(t *testing.T) {
	host, _ := os.Hostname()
	for _, c := range []struct {
		advertise, listen string
		keys              bool
		want              string
	}{
		{"https://edge-3.internal:8081", "0.0.0.0:8081", true, "https://edge-3.internal:8081"},
		{"", "10.0.0.5:8081", true, "https://10.0.0.5:8081"},
		{"", "127.0.0.1:8081", false, "http://127.0.0.1:8081"},
		{"", "[::]:8081", true, "https://" + host + ":8081"},
		{"", ":8081", true, "https://" + host + ":8081"},
		{"", "[fd00::5]:8081", true, "https://[fd00::5]:8081"},
	} {
		if got := Advertised(c.advertise, c.listen, c.keys); got != c.want {
			t.Errorf("Advertised(%q, %q, %v) = %q, want %q", c.advertise, c.listen, c.keys, got, c.want)
		}
	}
	if strings.Contains(Advertised("", "0.0.0.0:1", false), "0.0.0.0") {
		t.Error("an unspecified address advertised")
	}
}
