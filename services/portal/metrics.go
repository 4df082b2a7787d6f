package portal

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

var (
	namesGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "zonestream_portal_names", Help: "DNS names in the portal's view, by status."}, []string{"status"})
	resolveSeconds = promauto.NewHistogram(prometheus.HistogramOpts{
		Name: "zonestream_portal_resolve_seconds", Help: "Time to ask DNS every record type of one name.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)})
	resolveErrors = promauto.NewCounter(prometheus.CounterOpts{
		Name: "zonestream_portal_resolve_errors_total", Help: "DNS checks that got no answer (timeout, SERVFAIL, REFUSED)."})
	rejected = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "zonestream_portal_rejected_total", Help: "Messages the portal could not take in (undecodable, wrong subject), by stream; skipped."},
		[]string{"stream"})
)
