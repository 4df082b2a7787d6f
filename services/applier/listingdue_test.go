package applier_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
)

// TestListingYieldsToPlans: while plans keep coming, the periodic full
// listing waits (it would hold them up), but never more than five
// intervals, so a record edited by hand is still found; once the plans
// stop, listings run every interval again.
func TestListingYieldsToPlans(t *testing.T) {
	const interval = 100 * time.Millisecond
	js := bus(t)
	cfg := applier.Config{Provider: inmemory.Name, Interval: interval, DefaultTTL: 300}
	cfg.InMemory.Zones = []string{zone}
	r := start(t, js, cfg)

	deferredBefore := listingsDeferred(t)
	handEdit := events.Change{New: ep("drift.example.org", "A", "192.0.2.99")}
	if err := r.a.Provider().Apply(context.Background(), zone, []events.Change{handEdit}); err != nil {
		t.Fatal(err)
	}
	drift := events.ObservedSubject(inmemory.Name, "drift.example.org")
	var driftFound time.Duration
	began := time.Now()
	for i := 0; time.Since(began) < 20*interval; i++ { // a plan every few milliseconds, 2 s
		id := fmt.Sprintf("flow-%d", i)
		plan := &events.Plan{ID: id, Provider: inmemory.Name, Zone: zone,
			Changes: []events.Change{{New: ep(fmt.Sprintf("n%d.example.org", i), "A", "192.0.2.1")}}}
		sendPlanTo(t, js, inmemory.Name, plan)
		if res, _ := waitResultOf(t, js, inmemory.Name, id); res.Status != events.ResultApplied {
			t.Fatalf("%s: %+v", id, res)
		}
		if driftFound == 0 && lastMsg(t, js, events.StreamObserved, drift) != nil {
			driftFound = time.Since(began)
		}
	}
	deferred := listingsDeferred(t) - deferredBefore
	if deferred < 5 {
		t.Errorf("%v periodic listings put off in 20 intervals of plans, want at least 5", deferred)
	}
	if driftFound == 0 || driftFound > (5+3)*interval {
		t.Errorf("the hand edit was observed after %s of plans (0: never), want within 5 intervals and some slack", driftFound)
	}
	// At rest, every interval lists again: after the tick that ends the
	// last interval with a plan, nothing more is put off.
	time.Sleep(3 * interval)
	quiet := listingsDeferred(t)
	time.Sleep(5 * interval)
	if n := listingsDeferred(t) - quiet; n != 0 {
		t.Errorf("%v listings put off with no plan coming", n)
	}
}

// listingsDeferred reads zonestream_applier_listings_deferred_total of the
// in-memory provider.
func listingsDeferred(t *testing.T) float64 {
	t.Helper()
	return testutil.ToFloat64(applier.ListingsDeferred.WithLabelValues(inmemory.Name))
}

// TestFailedListingDoesNotWait: a listing that failed is repeated at the
// next tick even while plans keep coming, so a hand edit is found within
// about an interval of the provider's recovery, not five.
func TestFailedListingDoesNotWait(t *testing.T) {
	const interval = 200 * time.Millisecond
	js := bus(t)
	mem, err := inmemory.New(inmemory.Config{Zones: []string{zone}}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	flaky := &listingFails{Provider: mem}
	const name = "listing-fails"
	a, err := applier.NewWithProvider(applier.Config{Provider: inmemory.Name, Interval: interval, DefaultTTL: 300},
		name, flaky, logger())
	if err != nil {
		t.Fatal(err)
	}
	run(t, js, a)

	failedBefore := testutil.ToFloat64(applier.ProviderErrors.WithLabelValues(name, "records"))
	flaky.failing.Store(true)
	waitFor(t, "a failed listing", func() bool {
		return testutil.ToFloat64(applier.ProviderErrors.WithLabelValues(name, "records")) > failedBefore
	})
	handEdit := events.Change{New: ep("drift.example.org", "A", "192.0.2.99")}
	if err := mem.Apply(context.Background(), zone, []events.Change{handEdit}); err != nil {
		t.Fatal(err)
	}
	flaky.failing.Store(false)
	drift := events.ObservedSubject(name, "drift.example.org")
	began := time.Now()
	for i := 0; time.Since(began) < 8*interval; i++ { // plans all along, 1.6 s
		id := fmt.Sprintf("after-failure-%d", i)
		plan := &events.Plan{ID: id, Provider: name, Zone: zone,
			Changes: []events.Change{{New: ep(fmt.Sprintf("f%d.example.org", i), "A", "192.0.2.1")}}}
		sendPlanTo(t, js, name, plan)
		if res, _ := waitResultOf(t, js, name, id); res.Status != events.ResultApplied {
			t.Fatalf("%s: %+v", id, res)
		}
		if lastMsg(t, js, events.StreamObserved, drift) != nil {
			if found := time.Since(began); found > 3*interval {
				t.Errorf("the hand edit was observed %s after the provider recovered, want within 3 intervals", found)
			}
			return
		}
	}
	t.Errorf("the hand edit was not observed within 8 intervals of plans after the provider recovered")
}

// listingFails fails every full listing while failing is set; plans and
// their read-backs still work.
type listingFails struct {
	*inmemory.Provider
	failing atomic.Bool
}

func (l *listingFails) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	if l.failing.Load() {
		return nil, errors.New("listing refused (test)")
	}
	return l.Provider.Records(ctx, zone)
}

// TestLongListingRests: a listing that takes longer than the interval
// is not run back to back: the applier waits three times as long as it
// took before the next one.
func TestLongListingRests(t *testing.T) {
	const interval, took = 20 * time.Millisecond, 100 * time.Millisecond
	js := bus(t)
	mem, err := inmemory.New(inmemory.Config{Zones: []string{zone}}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	slow := &slowListing{Provider: mem, took: took}
	a, err := applier.NewWithProvider(applier.Config{Provider: inmemory.Name, Interval: interval, DefaultTTL: 300},
		"slow-listing", slow, logger())
	if err != nil {
		t.Fatal(err)
	}
	run(t, js, a)
	before := slow.listings.Load()
	// Back to back: about 40 listings; resting: about 10, fewer on a
	// loaded machine, where each takes longer.
	time.Sleep(40 * took)
	if n := slow.listings.Load() - before; n < 2 || n > 15 {
		t.Errorf("%d listings of %s in %s at an interval of %s, want about 10 (each followed by three times its length)",
			n, took, 40*took, interval)
	}
}

// slowListing takes took to list a zone.
type slowListing struct {
	*inmemory.Provider
	took     time.Duration
	listings atomic.Int64
}

func (s *slowListing) Records(ctx context.Context, zone string) ([]events.Endpoint, error) {
	s.listings.Add(1)
	time.Sleep(s.took)
	return s.Provider.Records(ctx, zone)
}
