package webhooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge/egress"
)

// TestSignMatchesTheStandardVector reproduces the Standard Webhooks
// specification's published signature: what says that receivers' own
// libraries accept ours.
func TestSignMatchesTheStandardVector(t *testing.T) {
	got, err := Sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if err != nil || got != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
		t.Fatalf("signature %q, %v", got, err)
	}
	if s := newSecret(); !strings.HasPrefix(s, "whsec_") || len(s) != 6+32 {
		t.Errorf("secret %q", s)
	}
}

// TestSealBindsTheEndpoint: a sealed secret opens with its key for its
// endpoint only, and never holds the secret in the clear.
func TestSealBindsTheEndpoint(t *testing.T) {
	s, err := newSealer("MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
	if err != nil {
		t.Fatal(err)
	}
	secret := newSecret()
	sealed := s.seal("wh_a", secret)
	if strings.Contains(sealed, strings.TrimPrefix(secret, "whsec_")) {
		t.Fatal("the secret is in the clear")
	}
	if got, err := s.open("wh_a", sealed); err != nil || got != secret {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := s.open("wh_b", sealed); err == nil {
		t.Error("a secret sealed for another endpoint opened")
	}
	other, _ := newSealer("ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=")
	if _, err := other.open("wh_a", sealed); err == nil {
		t.Error("a secret opened with another key")
	}
	for _, bad := range []string{"", "short", "not base64!!"} {
		if _, err := newSealer(bad); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
}

// TestPostReadsABoundedAnswer: an endpoint that answers with an endless
// body costs a delivery at most egress.MaxAnswer bytes read.
func TestPostReadsABoundedAnswer(t *testing.T) {
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		chunk := make([]byte, 64<<10)
		for range 4096 { // 256 MiB, unless the client goes
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	rcv := netip.MustParseAddrPort(strings.TrimPrefix(srv.URL, "http://"))
	p := egress.Policy{Allow: []egress.Rule{{Prefix: netip.PrefixFrom(rcv.Addr(), 32), Port: rcv.Port()}}, AllowHTTP: true}
	a := post(context.Background(), p.Client(5*time.Second), srv.URL, newSecret(), "msg_1", []byte("{}"))
	if !a.ok() {
		t.Fatalf("attempt %+v", a)
	}
	time.Sleep(100 * time.Millisecond)
	if n := written.Load(); n > 64<<20 {
		t.Fatalf("the endpoint wrote %d bytes before the delivery let go", n)
	}
}
