package collector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Watch health: ExternalDNS lists its sources at every loop and counts a
// failed list in external_dns_source_errors_total; the collector lists
// once and then watches, so an unreachable Kubernetes API shows only as
// client-go's reflectors failing to list and watch again, which they log
// and retry for ever. watchHealth sees those reads on the collector's
// REST transport, which every informer (typed, dynamic, lazy) and every
// other read of the collector goes through, and says what it sees in
// metrics and in readiness.
var (
	watchErrors = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_collector_watch_errors_total",
		Help: "Failed reads (lists and watches) of the Kubernetes API: unreachable, timed out, refused (401, 403, 429) or failing (5xx).",
	})
	watchesHealthyVec = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "zonestream_collector_watches_healthy",
		Help: "1 while the collector's last read of the Kubernetes API succeeded, 0 since one failed, by cluster (--cluster-name).",
	}, []string{"cluster"})
	watchFailingSinceVec = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "zonestream_collector_watch_failing_since_timestamp_seconds",
		Help: "When the reads of the Kubernetes API started failing in a row (Unix seconds), 0 while they succeed, by cluster (--cluster-name).",
	}, []string{"cluster"})
)

// WatchErrorGrace is how long the reads of the Kubernetes API may fail in
// a row before the collector reports not ready: long enough for an
// apiserver's rolling restart, short enough that a collector whose watches
// are dead is noticed.
const WatchErrorGrace = 30 * time.Second

// watchHealth follows the outcome of the collector's reads of the
// Kubernetes API.
type watchHealth struct {
	mu sync.Mutex
	// failingSince is when the reads started failing in a row; zero while
	// the last one succeeded.
	failingSince time.Time
	lastErr      error
	now          func() time.Time
	// healthy and failingSinceGauge are this collector's series: a
	// process may run collectors of several clusters.
	healthy, failingSinceGauge prometheus.Gauge
}

func newWatchHealth(cluster string) *watchHealth {
	h := &watchHealth{now: time.Now,
		healthy: watchesHealthyVec.WithLabelValues(cluster), failingSinceGauge: watchFailingSinceVec.WithLabelValues(cluster)}
	h.healthy.Set(1)
	h.failingSinceGauge.Set(0)
	return h
}

// wrap is a rest.Config WrapTransport: it reports the outcome of each
// read.
func (h *watchHealth) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if req.Method != http.MethodGet {
			return resp, err
		}
		switch {
		case err != nil:
			if req.Context().Err() == nil && !errors.Is(err, context.Canceled) {
				h.failed(fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err))
			}
		case resp.StatusCode == http.StatusUnauthorized, resp.StatusCode == http.StatusForbidden,
			resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
			h.failed(fmt.Errorf("%s %s: %s", req.Method, req.URL.Path, resp.Status))
		default:
			h.succeeded()
		}
		return resp, err
	})
}

func (h *watchHealth) failed(err error) {
	watchErrors.Inc()
	sourceErrors.Inc() // ExternalDNS' count of failed source reads
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastErr = err
	if h.failingSince.IsZero() {
		h.failingSince = h.now()
		h.healthy.Set(0)
		h.failingSinceGauge.Set(float64(h.failingSince.UnixNano()) / 1e9)
	}
}

func (h *watchHealth) succeeded() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.failingSince.IsZero() {
		h.failingSince, h.lastErr = time.Time{}, nil
		h.healthy.Set(1)
		h.failingSinceGauge.Set(0)
	}
}

// check returns an error once the reads have failed in a row for longer
// than grace.
func (h *watchHealth) check(grace time.Duration) error {
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failingSince.IsZero() {
		return nil
	}
	if d := h.now().Sub(h.failingSince); d > grace {
		return fmt.Errorf("collector: reads of the Kubernetes API failing for %s: %v", d.Round(time.Second), h.lastErr)
	}
	return nil
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
