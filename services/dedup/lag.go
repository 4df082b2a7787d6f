package dedup

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Dedup's lag: what it has read and not taken in yet, and the names whose
// desired state is to be published again.
var (
	inboxMessages = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_dedup_inbox_messages",
		Help: "Source events read from the bus that dedup has not taken in yet; full for long means it falls behind.",
	})
	dirtyNames = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "zonestream_dedup_dirty_names",
		Help: "Names whose desired state is to be recomputed and published (retried while publishing fails).",
	})
)

// reportLag sets the lag gauges.
func reportLag(inbox, dirty int) {
	inboxMessages.Set(float64(inbox))
	dirtyNames.Set(float64(dirty))
}
