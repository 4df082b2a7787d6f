package planner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events/registry"
)

// TestRunCutShortThenRunAgainCatchesUp: a leader that loses its lease right
// after it won it (an acquisition slower than the renew deadline) starts a
// run that ends within milliseconds, then another: the second catches up.
func TestRunCutShortThenRunAgainCatchesUp(t *testing.T) {
	_, js := startBus(t)
	for i := range 3000 {
		name := fmt.Sprintf("n%d.%s", i, zone)
		held(t, js, rr(name, "A", 300, "192.0.2.1"))
		wanted(t, js, rr(name, "A", 0, "192.0.2.1"))
	}
	zones(t, js, zone)
	p, err := New(Config{Ownership: registry.Settings{OwnerID: "me"}, Policy: "sync", Registry: "txt", BatchChangeSize: 1000,
		BatchWindow: 20 * time.Millisecond, PlanTimeout: 30 * time.Second}, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond} {
		ctx, cancel := context.WithTimeout(context.Background(), cut)
		_ = p.Run(ctx, js)
		cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(ctx, js) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(20 * time.Second)
	for p.Ready() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the run after runs cut short has not replayed the streams in 20 s: %v", p.Ready())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
