package planner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/stage"
)

// --once ends in bounded time in every failure mode, non-zero, with the
// reason on one line. Each case has a deadline; none waits for a
// timeout it does not need.

// runOncePass runs a --once planner, says the desired state is complete
// once it has replayed the streams (only a live mark counts), and returns
// what Run returned, failing the test if it did not return before deadline.
func runOncePass(t *testing.T, js jetstream.JetStream, cfg Config, complete bool, deadline time.Duration) error {
	t.Helper()
	cfg.Once = true
	p := newTestPlanner(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, js) }()
	for p.Ready() != nil {
		time.Sleep(10 * time.Millisecond)
	}
	if complete {
		publishComplete(t, js)
	}
	select {
	case err := <-done:
		return err
	case <-time.After(deadline):
		t.Fatalf("--once did not end within %s", deadline)
		return nil
	}
}

// notConverged checks that err ends a pass that did not converge, saying
// want, on one line.
func notConverged(t *testing.T, err error, want string) {
	t.Helper()
	if !errors.Is(err, stage.ErrFinished) || stage.Finished(err) == nil {
		t.Fatalf("--once ended with %v, want a pass that did not converge", err)
	}
	if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
		t.Fatalf("--once said %q, want one line with %q", msg, want)
	}
}

// No applier answers the adjust requests: the pass ends after one
// request's timeout.
func TestOnceEndsWhenNoApplierAnswersAdjust(t *testing.T) {
	_, js := startBus(t)
	publish(t, js, events.ZonesSubject("p"), &events.ZoneList{Provider: "p", Zones: []string{zone}, Adjusts: true})
	wanted(t, js, rr("www."+zone, "A", 300, "192.0.2.1"))
	err := runOncePass(t, js, Config{}, true, adjustTimeout+15*time.Second)
	notConverged(t, err, "1 zone(s) with plans not applied")
}

// The applier answers, but its provider cannot adjust (a webhook down).
func TestOnceEndsWhenAdjustFails(t *testing.T) {
	nc, js := startBus(t)
	publish(t, js, events.ZonesSubject("p"), &events.ZoneList{Provider: "p", Zones: []string{zone}, Adjusts: true})
	wanted(t, js, rr("www."+zone, "A", 300, "192.0.2.1"))
	stop, err := events.ServeAdjust(nc, "p", time.Second, func(context.Context, []events.Endpoint) ([]events.Endpoint, error) {
		return nil, errors.New("webhook: connection refused")
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	notConverged(t, runOncePass(t, js, Config{}, true, 15*time.Second), "1 zone(s) with plans not applied")
}

// The adjust answer lost the name.
func TestOnceEndsWhenAdjustLosesAName(t *testing.T) {
	nc, js := startBus(t)
	publish(t, js, events.ZonesSubject("p"), &events.ZoneList{Provider: "p", Zones: []string{zone}, Adjusts: true})
	wanted(t, js, rr("www."+zone, "A", 300, "192.0.2.1"))
	stop, err := events.ServeAdjust(nc, "p", time.Second, func(context.Context, []events.Endpoint) ([]events.Endpoint, error) {
		return []events.Endpoint{rr("other."+zone, "A", 300, "192.0.2.9")}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	notConverged(t, runOncePass(t, js, Config{}, true, 15*time.Second), "1 name(s) not adjusted")
}

// A plan gets no result (the applier is down, or its provider hangs):
// the pass ends once the plan timed out.
func TestOnceEndsWhenAPlanGetsNoResult(t *testing.T) {
	_, js := startBus(t)
	zones(t, js, zone)
	wanted(t, js, rr("www."+zone, "A", 300, "192.0.2.1"))
	notConverged(t, runOncePass(t, js, Config{PlanTimeout: time.Second}, true, 15*time.Second), "1 zone(s) with plans not applied")
}

// The desired state never becomes complete (a collector whose API server
// never answers never says synced): --once-timeout ends the pass with
// what it waited for.
func TestOnceEndsWhenTheDesiredStateNeverCompletes(t *testing.T) {
	_, js := startBus(t)
	zones(t, js, zone)
	wanted(t, js, rr("www."+zone, "A", 300, "192.0.2.1"))
	publish(t, js, events.DesiredCompleteSubject(), &events.DesiredComplete{Complete: false, Reason: "collector c/collector is syncing",
		LeaseMillis: time.Hour.Milliseconds()})
	err := runOncePass(t, js, Config{OnceTimeout: 2 * time.Second}, false, 15*time.Second)
	notConverged(t, err, "the desired state is not complete")
}

// No applier ever says which zones it serves.
func TestOnceEndsWhenNoApplierTellsItsZones(t *testing.T) {
	_, js := startBus(t)
	wanted(t, js, rr("www."+zone, "A", 300, "192.0.2.1"))
	err := runOncePass(t, js, Config{OnceTimeout: 2 * time.Second}, true, 15*time.Second)
	notConverged(t, err, "no applier has said which zones")
}
