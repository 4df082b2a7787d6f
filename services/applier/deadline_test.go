package applier_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/services/applier"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/pdns"
	"github.com/zonestream/zonestream/services/applier/provider/providertest"
)

// A provider that accepts connections and never answers holds the
// applier no longer than --provider-timeout: its listing is abandoned at
// the deadline, counted and failed, and Run ends at once when told to.
// The provider's own timeouts (10 s a request, tried 4 times) are far
// longer.
func TestHungProviderIsAbandonedAtTheProviderTimeout(t *testing.T) {
	const timeout, margin = time.Second, 3 * time.Second
	js := bus(t)
	s := providertest.SilentT(t)
	const name = "pdns-silent"
	cfg := applier.Config{Provider: pdns.Name, Interval: time.Hour, DefaultTTL: 300, ProviderTimeout: timeout}
	p, err := pdns.New(pdns.Config{Server: s.URL(), APIKey: "secret"}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := applier.NewWithProvider(cfg, name, p, logger())
	if err != nil {
		t.Fatal(err)
	}
	timedOut := func() float64 { return testutil.ToFloat64(applier.ProviderTimeouts.WithLabelValues(name, "zones")) }
	failed := func() float64 { return testutil.ToFloat64(applier.ProviderErrors.WithLabelValues(name, "zones")) }
	before, failedBefore := timedOut(), failed()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- a.Run(ctx, js) }()
	for timedOut() == before {
		if time.Since(start) > timeout+margin {
			t.Fatalf("the zone list was not abandoned within %s of its deadline", margin)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if failed() == failedBefore {
		t.Error("the abandoned zone list was not counted as a provider failure")
	}
	if a.Ready() == nil {
		t.Error("ready with a provider that never answered")
	}
	if s.Accepted() == 0 {
		t.Fatal("the applier never reached the silent provider")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(margin):
		t.Fatal("Run did not end when its context did")
	}
}
