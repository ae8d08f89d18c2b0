package edge

import (
	"context"
	"testing"
	"time"
)

// TestPrecompressionWaitsForABuild checks what a precompression round
// does before each answer: it goes on at once while no state is built,
// waits while one is (Sources.Building) until it is published, and stops
// when its context ends, waiting or not.
func TestPrecompressionWaitsForABuild(t *testing.T) {
	ctx := context.Background()
	if !waitForBuild(ctx, nil) {
		t.Fatal("no Building: the round stopped")
	}
	if !waitForBuild(ctx, func() <-chan struct{} { return nil }) {
		t.Fatal("no build under way: the round stopped")
	}

	built := make(chan struct{})
	building := func() <-chan struct{} { return built }
	went := make(chan bool, 1)
	go func() { went <- waitForBuild(ctx, building) }()
	select {
	case <-went:
		t.Fatal("the round went on while a state was built")
	case <-time.After(50 * time.Millisecond):
	}
	close(built)
	if !<-went {
		t.Fatal("the round stopped once the state was published")
	}

	stop, cancel := context.WithCancel(ctx)
	go func() { went <- waitForBuild(stop, func() <-chan struct{} { return make(chan struct{}) }) }()
	cancel()
	if <-went {
		t.Fatal("the round went on after its stop, while a state was built")
	}
	if waitForBuild(stop, nil) {
		t.Fatal("the round went on after its stop")
	}
}
