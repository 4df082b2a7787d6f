package collectortest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The collector's metrics are package variables of package collector,
// registered with the default registry; tests outside that package read
// them from there.

// InvalidInput is zonestream_collector_invalid_input_total{source, reason}.
func InvalidInput(tb testing.TB, source, reason string) float64 {
	tb.Helper()
	return counter(tb, "zonestream_collector_invalid_input_total", map[string]string{"source": source, "reason": reason})
}

// PublishSkipped is zonestream_collector_publish_skipped_total{source}.
func PublishSkipped(tb testing.TB, source string) float64 {
	tb.Helper()
	return counter(tb, "zonestream_collector_publish_skipped_total", map[string]string{"source": source})
}

// counter is the value of counter name with exactly labels; 0 while it
// has not been counted yet.
func counter(tb testing.TB, name string, labels map[string]string) float64 {
	tb.Helper()
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if matches(m.GetLabel(), labels) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func matches(pairs []*dto.LabelPair, labels map[string]string) bool {
	if len(pairs) != len(labels) {
		return false
	}
	for _, p := range pairs {
		if v, ok := labels[p.GetName()]; !ok || v != p.GetValue() {
			return false
		}
	}
	return true
}
