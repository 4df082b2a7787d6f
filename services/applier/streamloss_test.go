package applier_test

import (
	"context"
	"testing"
	"time"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
)

// TestLostObservedStreamIsPublishedAgain: the observed stream is purged
// under a running applier. Its next listing publishes every name again,
// though nothing changed at the provider: otherwise a planner would take
// every name for empty.
func TestLostObservedStreamIsPublishedAgain(t *testing.T) {
	js := bus(t)
	ctx := context.Background()
	cfg := applier.Config{Provider: applier.ProviderInMemory, Interval: 200 * time.Millisecond, DefaultTTL: 300}
	cfg.InMemory.Zones = []string{zone}
	r := start(t, js, cfg)
	if err := r.a.Provider().Apply(ctx, zone, []events.Change{{New: ep("api.example.org", "A", "192.0.2.1")}}); err != nil {
		t.Fatal(err)
	}
	observed := events.ObservedSubject("inmemory", "api.example.org")
	waitFor(t, "api observed", func() bool { return lastMsg(t, js, events.StreamObserved, observed) != nil })
	st, err := js.Stream(ctx, events.StreamObserved)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "api published again", func() bool { return lastMsg(t, js, events.StreamObserved, observed) != nil })
	waitFor(t, "the zone list published again", func() bool {
		return lastMsg(t, js, events.StreamObserved, events.ZonesSubject("inmemory")) != nil
	})
}
