package stage

import (
	"bytes"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zonestream/zonestream/stage/gcpace/gcpacetest"
)

// An operator reads how collection is paced where the README says: the
// runtime's own trigger off, the moving limit in bytes, and one log line.
func TestPacedCollectionShowsInMetricsAndLog(t *testing.T) {
	gcpacetest.Unconfigured(t)
	var log bytes.Buffer
	stop := PaceGC(slog.New(slog.NewTextHandler(&log, nil)))
	defer stop()
	rec := httptest.NewRecorder()
	promhttp.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	// The runtime exports GOGC as a uint64: off (-1) reads 2^64-1.
	if !strings.Contains(string(body), "\ngo_gc_gogc_percent 1.8446744073709552e+19\n") {
		t.Errorf("/metrics lacks go_gc_gogc_percent for off (2^64-1)")
	}
	if strings.Contains(string(body), "\ngo_gc_gomemlimit_bytes 9.223372036854776e+18\n") || !strings.Contains(string(body), "\ngo_gc_gomemlimit_bytes ") {
		t.Errorf("/metrics lacks the moving memory limit (go_gc_gomemlimit_bytes)")
	}
	if !strings.Contains(log.String(), "not every two minutes at rest") {
		t.Errorf("no log line says how collection is paced: %q", log.String())
	}
}
