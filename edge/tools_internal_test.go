package edge

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

type callerKey struct{}

// TestToolRequestsAreBounded: the tool server's handler runs under a
// deadline of the read budgets plus maxToolHold, keeping the request's
// values (the caller the gate identified) but not its cancellation.
func TestToolRequestsAreBounded(t *testing.T) {
	s := &Server{cfg: Config{ReadBudget: 2 * time.Second, SearchBudget: time.Second}}
	var deadline time.Time
	var caller any
	h := s.boundTools(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline, _ = r.Context().Deadline()
		caller = r.Context().Value(callerKey{})
	}))
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), callerKey{}, "who"))
	cancel() // the request's own cancellation does not reach the handler
	req := httptest.NewRequest("POST", "/mcp", nil).WithContext(parent)
	start := time.Now()
	h.ServeHTTP(httptest.NewRecorder(), req)
	want := 3*time.Second + maxToolHold
	if got := deadline.Sub(start); got < want-time.Second || got > want+time.Second {
		t.Errorf("deadline %v after the request, want about %v", got, want)
	}
	if caller != "who" {
		t.Errorf("the handler lost the request's values: %v", caller)
	}
	// A handler that waits for its context is ended by the deadline.
	s.cfg.ReadBudget, s.cfg.SearchBudget = 0, 0
	var err error
	h = s.boundTools(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		err = r.Context().Err()
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/mcp", nil))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a waiting handler ended with %v, want its deadline", err)
	}
}
