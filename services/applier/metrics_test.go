package applier_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
)

// failing is an in-memory provider whose reads fail while down is set.
type failing struct {
	*inmemory.Provider
	down atomic.Bool
}

var errDown = errors.New("provider down")

func (f *failing) Zones(ctx context.Context) ([]string, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.Provider.Zones(ctx)
}

func (f *failing) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	if f.down.Load() {
		return nil, errDown
	}
	return f.Provider.Records(ctx, zone)
}

// ExternalDNS' controller metrics, with its meaning: a listing that
// changed nothing is a no-op run, the per-type registry gauges follow the
// listing, and while the provider is down the last sync stops, the last
// reconcile goes on, and the errors and consecutive soft errors grow; the
// latter back to 0 once the provider answers.
func TestControllerMetricsFollowTheProvider(t *testing.T) {
	const interval = 300 * time.Millisecond
	js := bus(t)
	mem, err := inmemory.New(inmemory.Config{Zones: []string{zone}}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := &failing{Provider: mem}
	cfg := applier.Config{Provider: inmemory.Name, Interval: interval, DefaultTTL: 300}
	a, err := applier.NewWithProvider(cfg, inmemory.Name, p, logger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, js) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "ready", func() bool { return a.Ready() == nil })

	noOps := testutil.ToFloat64(applier.NoOpRuns)
	waitFor(t, "a listing with no change counted a no-op run", func() bool { return testutil.ToFloat64(applier.NoOpRuns) > noOps })

	msg, _ := events.Message(events.PlanSubject("inmemory", zone), &events.Plan{ID: "m1", Provider: "inmemory", Zone: zone, Changes: []events.Change{
		{New: ep("a.example.org", "A", "192.0.2.1")}, {New: ep("b.example.org", "A", "192.0.2.2")}, {New: ep("c.example.org", "AAAA", "2001:db8::1")},
	}}, "")
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "registry_a_records 2 and registry_aaaa_records 1", func() bool {
		return testutil.ToFloat64(applier.RegistryByType["A"]) == 2 && testutil.ToFloat64(applier.RegistryByType["AAAA"]) == 1
	})

	errs := testutil.ToFloat64(applier.RegistryErrors)
	p.down.Store(true)
	waitFor(t, "consecutive soft errors", func() bool { return testutil.ToFloat64(applier.ConsecutiveSoftErrors) >= 2 })
	synced, reconciled := testutil.ToFloat64(applier.LastSync), testutil.ToFloat64(applier.LastReconcile)
	time.Sleep(3 * interval)
	if got := testutil.ToFloat64(applier.LastSync); got != synced {
		t.Errorf("last sync advanced from %v to %v with the provider down", synced, got)
	}
	if got := testutil.ToFloat64(applier.LastReconcile); got <= reconciled {
		t.Errorf("last reconcile stayed at %v with the provider down: no listing attempted?", got)
	}
	if got := testutil.ToFloat64(applier.RegistryErrors); got < errs+2 {
		t.Errorf("registry errors %v, want at least %v", got, errs+2)
	}

	p.down.Store(false)
	waitFor(t, "consecutive soft errors back to 0", func() bool { return testutil.ToFloat64(applier.ConsecutiveSoftErrors) == 0 })
	waitFor(t, "last sync advanced again", func() bool { return testutil.ToFloat64(applier.LastSync) > synced })
}

// A provider declared by a DNSProvider object (Config.Scope) reports in
// its own zonestream_applier_* series only: ExternalDNS' metrics, and the
// platform's alerts on them, stay the flag-declared provider's. Its
// listings move no last sync or registry count, its failures no error
// counter.
func TestDeclaredProviderLeavesExternalDNSMetricsAlone(t *testing.T) {
	const interval = 200 * time.Millisecond
	js := bus(t)
	mem, err := inmemory.New(inmemory.Config{Zones: []string{zone}}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := &failing{Provider: mem}
	name := events.DeclaredProvider("team-a", "dns")
	cfg := applier.Config{Provider: inmemory.Name, Interval: interval, DefaultTTL: 300,
		Scope: &events.ProviderScope{Declared: name, Namespaces: []string{"team-a"}}}
	a, err := applier.NewWithProvider(cfg, name, p, logger())
	if err != nil {
		t.Fatal(err)
	}
	external := func() []float64 {
		return []float64{testutil.ToFloat64(applier.LastSync), testutil.ToFloat64(applier.LastReconcile), testutil.ToFloat64(applier.NoOpRuns),
			testutil.ToFloat64(applier.RegistryErrors), testutil.ToFloat64(applier.ConsecutiveSoftErrors)}
	}
	before := external()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, js) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "ready", func() bool { return a.Ready() == nil })
	time.Sleep(3 * interval) // listings that changed nothing
	p.down.Store(true)
	waitFor(t, "its own failures counted", func() bool { return a.Ready() != nil })
	if after := external(); !slices.Equal(before, after) {
		t.Fatalf("ExternalDNS' metrics moved with a declared provider: %v, then %v "+
			"(last sync, last reconcile, no-op runs, registry errors, consecutive soft errors)", before, after)
	}
}
