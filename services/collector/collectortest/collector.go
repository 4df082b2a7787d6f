package collectortest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/collector"
)

// Logger logs at debug level to stderr with -v, else nowhere.
func Logger(tb testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("test", tb.Name())
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// Running is a collector running in the background until Stop or the end
// of the test.
type Running struct {
	Collector *collector.Collector
	Stop      func()
}

// StartCollector runs a collector with cfg (sources "service", one worker
// so that events are processed in order) and waits until it is ready.
func StartCollector(tb testing.TB, cfg collector.Config) *Running {
	tb.Helper()
	cfg.RESTConfig = Cluster.Config
	if len(cfg.Sources) == 0 {
		cfg.Sources = []string{"service"}
	}
	if cfg.Workers == 0 {
		cfg.Workers = 1
	}
	c, err := collector.New(cfg, Logger(tb))
	if err != nil {
		tb.Fatal(err)
	}
	return RunCollector(tb, c)
}

// StartAndExpect starts a collector with cfg, after edit (may be nil),
// and checks what it publishes for subj: want(arg), or, for a nil want,
// nothing. Once the collector is ready its first pass has computed every
// object from synced caches, so "nothing published" needs no barrier.
func StartAndExpect[A any](tb testing.TB, cfg collector.Config, edit func(*collector.Config), subj string, want func(A) []events.Endpoint, arg A) {
	tb.Helper()
	if edit != nil {
		edit(&cfg)
	}
	StartCollector(tb, cfg)
	if want == nil {
		if s, ok := LastState(tb, subj); ok {
			tb.Fatalf("published %v, want nothing", Render(s.Endpoints))
		}
		return
	}
	WaitState(tb, subj, want(arg))
}

// RunCollector runs c on the package's bus and waits until it is ready.
func RunCollector(tb testing.TB, c *collector.Collector) *Running {
	tb.Helper()
	return RunCollectorOn(tb, c, JS)
}

// RunCollectorOn is RunCollector on a bus of the test's own.
func RunCollectorOn(tb testing.TB, c *collector.Collector, js jetstream.JetStream) *Running {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, js) }()
	var stopped atomic.Bool
	stop := func() {
		if stopped.Swap(true) {
			return
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				tb.Errorf("Run returned %v, want context.Canceled", err)
			}
		case <-time.After(WaitFor):
			tb.Errorf("Run did not return within %v of cancel", WaitFor)
		}
		if c.Ready() == nil {
			tb.Errorf("Ready() is nil after Run returned")
		}
	}
	tb.Cleanup(stop)
	deadline := time.Now().Add(WaitFor)
	for c.Ready() != nil {
		select {
		case err := <-done:
			tb.Fatalf("Run returned early: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("collector not ready after %v: %v", WaitFor, c.Ready())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &Running{Collector: c, Stop: stop}
}
