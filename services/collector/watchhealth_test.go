package collector

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestWatchHealthSaysTheKubeAPIIsUnreachable: reads failing (an
// apiserver gone, one answering 503) count as watch and source errors,
// turn the healthy gauge to 0 and, after the grace, readiness; one read
// succeeding again turns them back.
func TestWatchHealthSaysTheKubeAPIIsUnreachable(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
	defer srv.Close()
	now := time.Unix(1000, 0)
	h := newWatchHealth("test")
	watchesHealthy := h.healthy
	h.now = func() time.Time { return now }
	client := &http.Client{Transport: h.wrap(http.DefaultTransport)}
	get := func(url string) {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
		}
	}
	errs, srcErrs := testutil.ToFloat64(watchErrors), testutil.ToFloat64(sourceErrors)

	get(srv.URL + "/api/v1/services")
	if got := testutil.ToFloat64(watchesHealthy); got != 1 || h.check(WatchErrorGrace) != nil {
		t.Fatalf("healthy reads: gauge %v, check %v", got, h.check(WatchErrorGrace))
	}
	status = http.StatusServiceUnavailable
	get(srv.URL + "/api/v1/services?watch=true")
	get("http://127.0.0.1:1/api/v1/services") // nothing listens there
	if got := testutil.ToFloat64(watchErrors) - errs; got != 2 {
		t.Errorf("watch errors grew by %v, want 2", got)
	}
	if got := testutil.ToFloat64(sourceErrors) - srcErrs; got != 2 {
		t.Errorf("external_dns_source_errors_total grew by %v, want 2", got)
	}
	if got := testutil.ToFloat64(watchesHealthy); got != 0 {
		t.Errorf("watches_healthy %v while the reads fail", got)
	}
	if err := h.check(WatchErrorGrace); err != nil {
		t.Errorf("not ready within the grace: %v", err)
	}
	now = now.Add(WatchErrorGrace + time.Second)
	if err := h.check(WatchErrorGrace); err == nil {
		t.Error("ready after the reads failed for longer than the grace")
	}
	status = http.StatusOK
	get(srv.URL + "/api/v1/services")
	if got := testutil.ToFloat64(watchesHealthy); got != 1 || h.check(WatchErrorGrace) != nil {
		t.Errorf("after a read succeeded again: gauge %v, check %v", got, h.check(WatchErrorGrace))
	}
}
