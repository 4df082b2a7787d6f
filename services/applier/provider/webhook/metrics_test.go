package webhook

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zonestream/zonestream/events"
	"github.com/zonestream/zonestream/services/applier/provider"
	"github.com/zonestream/zonestream/services/applier/provider/inmemory"
)

// TestExternalDNSWebhookMetrics: each call of the webhook's Records,
// ApplyChanges and AdjustEndpoints counts in ExternalDNS'
// external_dns_webhook_provider_*_requests_total, and one that fails
// (after its retries) in *_errors_total too.
func TestExternalDNSWebhookMetrics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mem, err := inmemory.New(inmemory.Config{Zones: []string{"example.org"}}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(NewServer(mem, ServerOptions{}))
	defer up.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	defer down.Close()
	client := func(url string) *Provider {
		c, err := New(Config{URL: url, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
			Retries: 2, RetryBackoff: time.Millisecond}, provider.Options{DefaultTTL: 300})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	gauges := []prometheus.Gauge{recordsRequests, recordsErrors, applyChangesRequests, applyChangesErrors,
		adjustEndpointsRequests, adjustEndpointsErrors}
	before := make([]float64, len(gauges))
	for i, g := range gauges {
		before[i] = testutil.ToFloat64(g)
	}
	grew := func(step string, want ...float64) {
		t.Helper()
		names := []string{"records requests", "records errors", "applychanges requests", "applychanges errors",
			"adjustendpoints requests", "adjustendpoints errors"}
		for i, g := range gauges {
			if got := testutil.ToFloat64(g) - before[i]; got != want[i] {
				t.Errorf("%s: %s grew by %v, want %v", step, names[i], got, want[i])
			}
			before[i] = testutil.ToFloat64(g)
		}
	}

	ok := client(up.URL)
	if _, err := ok.Records(ctx, "example.org"); err != nil {
		t.Fatal(err)
	}
	grew("records", 1, 0, 0, 0, 0, 0)
	a := events.NewEndpoint("a.example.org", "A", 300, "192.0.2.1")
	if err := ok.Apply(ctx, "example.org", []events.Change{{New: &a}}); err != nil {
		t.Fatal(err)
	}
	grew("apply (after listing the records)", 1, 0, 1, 0, 0, 0)
	if _, err := ok.AdjustEndpoints(ctx, []events.Endpoint{a}); err != nil {
		t.Fatal(err)
	}
	grew("adjust", 0, 0, 0, 0, 1, 0)

	bad := client(down.URL)
	if _, err := bad.list(ctx, true); err == nil {
		t.Fatal("a webhook answering 500 listed")
	}
	grew("records failing", 1, 1, 0, 0, 0, 0)
	if _, err := bad.AdjustEndpoints(ctx, []events.Endpoint{a}); err == nil {
		t.Fatal("a webhook answering 500 adjusted")
	}
	grew("adjust failing", 0, 0, 0, 0, 1, 1)
}
