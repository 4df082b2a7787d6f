package probe_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zonestream/zonestream/services/portal/probe"
)

// TestProberBoundsAndRechecks: never more checks at once than workers,
// every changed name checked, and checked again after the interval.
func TestProberBoundsAndRechecks(t *testing.T) {
	const names, workers = 30, 3
	var mu sync.Mutex
	inFlight, most := 0, 0
	checks := map[string]int{}
	p := probe.New(probe.Options{Workers: workers, Interval: 300 * time.Millisecond, Soon: 100 * time.Millisecond},
		func(ctx context.Context, name string) {
			mu.Lock()
			inFlight++
			most = max(most, inFlight)
			checks[name]++
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			mu.Lock()
			inFlight--
			mu.Unlock()
		})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for i := range names {
		p.Changed(fmt.Sprintf("n%d", i))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		twice := 0
		for _, n := range checks {
			if n >= 2 {
				twice++
			}
		}
		m := most
		mu.Unlock()
		if m > workers {
			t.Fatalf("%d checks at once, with %d workers", m, workers)
		}
		if twice == names {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s, %d of %d names were checked twice", twice, names)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestProberForgets: a forgotten name is not checked.
func TestProberForgets(t *testing.T) {
	checked := make(chan string, 10)
	p := probe.New(probe.Options{Workers: 1, Interval: time.Hour, Soon: 200 * time.Millisecond},
		func(ctx context.Context, name string) { checked <- name })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	p.Changed("gone")
	p.Forget("gone")
	p.Changed("kept")
	select {
	case n := <-checked:
		if n != "kept" {
			t.Fatalf("checked %s", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("kept was never checked")
	}
	select {
	case n := <-checked:
		t.Fatalf("checked %s as well", n)
	case <-time.After(400 * time.Millisecond):
	}
}
