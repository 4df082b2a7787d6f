package applier_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
)

// TestLostObservedStreamIsPublishedAgain: the observed stream is purged
// under a running applier. Its next listing publishes every name again,
// though nothing changed at the provider: otherwise a planner would take
// every name for empty.
func TestLostObservedStreamIsPublishedAgain(t *testing.T) {
	js := bus(t)
	ctx := context.Background()
	observed := observedAPI(t, js)
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

// observedAPI runs an in-memory applier listing every 200ms, gives its
// provider a record at api.example.org, and returns that name's observed
// subject once the applier has published it.
func observedAPI(t *testing.T, js jetstream.JetStream) string {
	t.Helper()
	cfg := applier.Config{Provider: inmemory.Name, Interval: 200 * time.Millisecond, DefaultTTL: 300}
	cfg.InMemory.Zones = []string{zone}
	r := start(t, js, cfg)
	change := events.Change{New: ep("api.example.org", "A", "192.0.2.1")}
	if err := r.a.Provider().Apply(context.Background(), zone, []events.Change{change}); err != nil {
		t.Fatal(err)
	}
	observed := events.ObservedSubject("inmemory", "api.example.org")
	waitFor(t, "api observed", func() bool { return lastMsg(t, js, events.StreamObserved, observed) != nil })
	return observed
}
